/**
 * aicr's own client (src/kube: client-node reads the kubeconfig, Bun's fetch carries the requests)
 * against both backends (the fake also over plain HTTP): credentials of every kind, keep-alive, errors,
 * faults, watch, log.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { parse, stringify } from "yaml";
import { KubeClient } from "../../src/kube/client.ts";
import {
  isAlreadyExists,
  isConflict,
  isInvalid,
  isNotFound,
  KubeStatusError,
} from "../../src/kube/errors.ts";
import { useCluster } from "../support/cluster.ts";
import { rejection } from "../support/reject.ts";
import { until } from "../support/until.ts";
import { selfSigned } from "./certs.ts";
import { currentResourceVersion, wireClient } from "./http-client.ts";
import { resource } from "./resources.ts";
import { BACKENDS, type TestCluster } from "./testbed.ts";

const NS = { apiVersion: "v1", kind: "Namespace", name: "default" };

/** Kubeconfigs, exec plugins and CAs the tests write; removed after the file's tests. */
const scratch = mkdtempSync(join(tmpdir(), "aicr-kube-client-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const connect = (kubeconfig: string) => KubeClient.connect({ kubeconfig, env: {} });

// A kubeconfig document, edited in place by the test.
type KubeconfigDoc = any;

/** A copy of a kubeconfig with `change` applied, in a new file. */
function edited(path: string, change: (doc: KubeconfigDoc) => void): string {
  const doc = parse(readFileSync(path, "utf8")) as KubeconfigDoc;
  change(doc);
  const out = join(mkdtempSync(join(scratch, "kubeconfig-")), "kubeconfig");
  writeFileSync(out, stringify(doc), { mode: 0o600 });
  return out;
}

/** Grants `subject` get on namespaces, and waits until the apiserver's authorizer has seen it. */
async function grantNamespaceReads(cluster: TestCluster, sa: string): Promise<void> {
  await cluster.store.create(resource("serviceaccounts"), { metadata: { name: sa, namespace: "default" } });
  await cluster.store.create(resource("clusterroles"), {
    metadata: { name: `${sa}-ns-reader` },
    rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["get"] }],
  });
  await cluster.store.create(resource("clusterrolebindings"), {
    metadata: { name: `${sa}-ns-reader` },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `${sa}-ns-reader` },
    subjects: [{ kind: "ServiceAccount", name: sa, namespace: "default" }],
  });
  const review = {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    spec: {
      user: `system:serviceaccount:default:${sa}`,
      groups: ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
      resourceAttributes: { verb: "get", resource: "namespaces", name: "default", namespace: "default" },
    },
  };
  await until(
    () => wireClient(cluster, "admin").post("/apis/authorization.k8s.io/v1/subjectaccessreviews", review),
    `${sa} allowed to get namespace default`,
    { accept: (r) => r.body?.status?.allowed === true },
  );
}

/** The ServiceAccount token a kubeconfig of the cluster carries for it. */
function serviceAccountToken(cluster: TestCluster, sa: string): string {
  const doc = parse(
    readFileSync(cluster.kubeconfigFor(`system:serviceaccount:default:${sa}`), "utf8"),
  ) as KubeconfigDoc;
  return doc.users[0].user.token;
}

for (const backend of BACKENDS) {
  describe(`[${backend}] KubeClient over HTTPS`, () => {
    const cluster = useCluster(backend, { controllers: false, https: true });

    test("a client certificate authenticates as its CN", async () => {
      const client = connect(cluster().kubeconfigFor("admin", { auth: "certificate" }));
      const seq = cluster().log.entries.at(-1)?.seq ?? 0;
      expect((await client.get<{ metadata: { name: string } }>(NS)).metadata.name).toBe("default");
      expect(
        cluster()
          .log.entries.filter((e) => e.seq > seq)
          .map((e) => e.user),
      ).toEqual(["admin"]);
    });

    test("a bearer token with the kubeconfig's CA; the apiserver's refusal keeps its reason", async () => {
      await cluster().store.create(resource("serviceaccounts"), {
        metadata: { name: "reader", namespace: "default" },
      });
      const client = connect(cluster().kubeconfigFor("system:serviceaccount:default:reader"));
      const err = await rejection(client.get(NS));
      expect(err.code).toBe("UNAUTHORIZED");
      expect(err.context.status).toBe(403);
      expect(err.message).toContain(
        'User "system:serviceaccount:default:reader" cannot get resource "namespaces"',
      );
    });

    test("an exec credential plugin supplies the token", async () => {
      await grantNamespaceReads(cluster(), "exec-sa");
      const dir = mkdtempSync(join(scratch, "exec-"));
      const plugin = join(dir, "credential.sh");
      const credential = {
        apiVersion: "client.authentication.k8s.io/v1",
        kind: "ExecCredential",
        status: { token: serviceAccountToken(cluster(), "exec-sa") },
      };
      writeFileSync(plugin, `#!/bin/sh\necho '${JSON.stringify(credential)}'\n`);
      chmodSync(plugin, 0o755);
      const kubeconfig = edited(cluster().kubeconfigFor("admin"), (doc) => {
        doc.users[0].user = {
          exec: { apiVersion: "client.authentication.k8s.io/v1", command: plugin, interactiveMode: "Never" },
        };
      });
      const seq = cluster().log.entries.at(-1)?.seq ?? 0;
      expect((await connect(kubeconfig).get<{ metadata: { name: string } }>(NS)).metadata.name).toBe(
        "default",
      );
      expect(
        cluster()
          .log.entries.filter((e) => e.seq > seq)
          .map((e) => e.user),
      ).toEqual(["system:serviceaccount:default:exec-sa"]);
    });

    test("a server certificate the kubeconfig's CA did not sign: SERVICE_UNAVAILABLE naming TLS, nothing sent", async () => {
      const text = readFileSync(cluster().kubeconfigFor("admin"), "utf8").replace(
        /certificate-authority-data: .*/,
        `certificate-authority-data: ${Buffer.from(selfSigned("not-the-fake-ca").cert).toString("base64")}`,
      );
      const dir = mkdtempSync(join(scratch, "ca-"));
      writeFileSync(join(dir, "kubeconfig"), text);
      const seq = cluster().log.entries.at(-1)?.seq ?? 0;
      const err = await rejection(connect(join(dir, "kubeconfig")).get(NS));
      expect(err.code).toBe("SERVICE_UNAVAILABLE");
      expect(err.message).toContain("presented a TLS certificate the kubeconfig does not trust");
      expect(err.remedy).toContain("certificate-authority-data");
      expect(cluster().log.entries.filter((e) => e.seq > seq)).toEqual([]);
    });

    test("sequential requests share one kept-alive connection", async () => {
      const client = connect(cluster().kubeconfigFor("admin"));
      const before = cluster().connectionsAccepted();
      for (let i = 0; i < 5; i++) await client.get(NS);
      expect(cluster().connectionsAccepted() - before).toBe(1);
    });
  });

  // The fake serves these over plain HTTP (its other transport); the real apiserver only over HTTPS.
  describe(`[${backend}] KubeClient: faults, discovery, watch, logs`, () => {
    const cluster = useCluster(backend, { controllers: false });
    let client: KubeClient;
    beforeAll(() => {
      client = connect(cluster().kubeconfigFor("admin"));
    });

    test("429 with Retry-After: RATE_LIMIT_EXCEEDED with the seconds to wait", async () => {
      const fault = cluster().faults.add({
        method: "GET",
        path: "/api/v1/namespaces/default",
        status: 429,
        retryAfterSeconds: 3,
      });
      try {
        const err = await rejection(client.get(NS));
        expect(err.code).toBe("RATE_LIMIT_EXCEEDED");
        expect(err.context.retryAfterSeconds).toBe(3);
      } finally {
        fault.remove();
      }
    });

    test("a response lost after the commit is a transport failure (SERVICE_UNAVAILABLE), not an answer", async () => {
      const fault = cluster().faults.add({
        method: "POST",
        path: "/api/v1/namespaces/default/configmaps",
        dropAfterCommit: true,
      });
      try {
        const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "lost", namespace: "default" } };
        const err = await rejection(client.create(cm));
        expect(err.code).toBe("SERVICE_UNAVAILABLE");
      } finally {
        fault.remove();
      }
      expect(
        (await wireClient(cluster(), "admin").get("/api/v1/namespaces/default/configmaps/lost")).status,
      ).toBe(200);
    });

    test("a kind outside the known table is found by discovery, asked once", async () => {
      const seq = cluster().log.entries.at(-1)?.seq ?? 0;
      for (let i = 0; i < 2; i++)
        expect((await client.list("nvidia.com/v1", "ClusterPolicy")).items).toEqual([]);
      const discovery = cluster().log.entries.filter((e) => e.seq > seq && e.path === "/apis/nvidia.com/v1");
      expect(discovery).toHaveLength(1);
      const err = await rejection(client.list("v1", "NoSuchKind"));
      expect(err.code).toBe("NOT_FOUND");
      expect(err.message).toContain("does not serve kind NoSuchKind in v1");
    });

    test("a watch delivers events in order and resolves with the abort reason", async () => {
      const seen: string[] = [];
      const stop = new AbortController();
      const path = "/api/v1/namespaces/default/configmaps";
      const resourceVersion = await currentResourceVersion(wireClient(cluster(), "admin"), path);
      const seq = cluster().log.entries.at(-1)?.seq ?? 0;
      const ended = client.watch<{ metadata: { name: string } }>(
        path,
        { resourceVersion },
        {
          signal: stop.signal,
          onEvent: (e) => {
            seen.push(`${e.type} ${e.object.metadata.name}`);
            if (seen.length === 2) stop.abort("done");
          },
        },
      );
      await until(
        () => cluster().log.entries.find((e) => e.seq > seq && e.verb === "watch" && e.path === path),
        "the watch open",
      );
      for (const name of ["w1", "w2"])
        await client.create({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name, namespace: "default" },
        });
      expect(await ended).toBe("done");
      expect(seen).toEqual(["ADDED w1", "ADDED w2"]);
    });

    test("a log that cannot be read: the apiserver's Status message, not a bare HTTP code", async () => {
      const out = new Writable({ write: (_c, _e, cb) => cb() });
      const err = await rejection(
        client.followLog(
          { namespace: "default", pod: "missing", container: "c" },
          { out, signal: new AbortController().signal, follow: false },
        ),
      );
      expect(err.code).toBe("NOT_FOUND");
      expect(err.message).toContain('pods "missing" not found');
    });

    test("a refused request is a KubeStatusError in the apiserver's words: NotFound, AlreadyExists, Conflict, Invalid", async () => {
      const status = async (p: Promise<unknown>): Promise<KubeStatusError> => {
        const err = await rejection(p);
        if (!(err instanceof KubeStatusError)) throw new Error(`not a KubeStatusError: ${err.message}`);
        return err;
      };
      const cm = (name: string) => ({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, namespace: "default" },
      });
      const ref = { apiVersion: "v1", kind: "ConfigMap", name: "status-twice", namespace: "default" };
      const missing = await status(client.get({ ...ref, name: "status-missing" }));
      expect(isNotFound(missing)).toBe(true);
      expect(missing).toMatchObject({
        httpStatus: 404,
        method: "GET",
        path: "/api/v1/namespaces/default/configmaps/status-missing",
        status: { code: 404, reason: "NotFound", details: { name: "status-missing", kind: "configmaps" } },
      });
      await client.create(cm("status-twice"));
      const twice = await status(client.create(cm("status-twice")));
      expect([isAlreadyExists(twice), isConflict(twice)]).toEqual([true, false]);
      expect(twice).toMatchObject({ method: "POST", path: "/api/v1/namespaces/default/configmaps" });
      const stale = await status(client.delete(ref, { uid: "00000000-0000-0000-0000-000000000000" }));
      expect([isConflict(stale), isAlreadyExists(stale)]).toEqual([true, false]);
      expect(stale.status.reason).toBe("Conflict");
      const invalid = await status(client.create(cm("Not_A_Name")));
      expect(isInvalid(invalid)).toBe(true);
      expect(invalid.status.details?.causes?.map((c) => c.field)).toContain("metadata.name");
    });

    test("a SOCKS proxy-url is refused with the remedy before anything is sent", async () => {
      const kubeconfig = edited(cluster().kubeconfigFor("admin"), (doc) => {
        doc.clusters[0].cluster["proxy-url"] = "socks5://127.0.0.1:1080";
      });
      const seq = cluster().log.entries.at(-1)?.seq ?? 0;
      const err = await rejection(connect(kubeconfig).get(NS));
      expect(err.code).toBe("INVALID_REQUEST");
      expect(err.message).toContain("proxy-url");
      expect(cluster().log.entries.filter((e) => e.seq > seq)).toEqual([]);
    });
  });
}
