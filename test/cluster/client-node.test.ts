/** The same behaviours seen through @kubernetes/client-node 1.4.0 under Bun (plain HTTP and HTTPS + client cert). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import * as k8s from "@kubernetes/client-node";
import { kubeletLogs } from "./controllers/logs.ts";
import { resource } from "./resources.ts";
import { type Cluster, startCluster } from "./server.ts";

function statusOf(e: unknown): { code: number; reason: string; message: string } {
  if (!(e instanceof k8s.ApiException)) throw e;
  const body = JSON.parse(e.body as string);
  return { code: e.code, reason: body.reason, message: body.message };
}

async function failure(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    return statusOf(e);
  }
  throw new Error("expected an ApiException");
}

for (const mode of ["http+token", "https+client-certificate"] as const) {
  describe(`client-node 1.4.0 over ${mode}`, () => {
    let cluster: Cluster;
    let kc: k8s.KubeConfig;
    let core: k8s.CoreV1Api;
    beforeAll(async () => {
      cluster = await startCluster({ controllers: false, https: mode !== "http+token" });
      kc = new k8s.KubeConfig();
      kc.loadFromFile(cluster.kubeconfigFor("admin", mode === "http+token" ? {} : { auth: "certificate" }));
      core = kc.makeApiClient(k8s.CoreV1Api);
    });
    afterAll(() => cluster.stop());

    test("create, read, 404, 409 AlreadyExists", async () => {
      const created = await core.createNamespacedConfigMap({
        namespace: "default",
        body: { metadata: { name: "a", labels: { app: "x" } }, data: { k: "v" } },
      });
      expect(created.metadata?.uid).toBeDefined();
      expect((await core.readNamespacedConfigMap({ name: "a", namespace: "default" })).data).toEqual({
        k: "v",
      });
      expect(await failure(core.readNamespacedConfigMap({ name: "zz", namespace: "default" }))).toMatchObject(
        { code: 404, reason: "NotFound" },
      );
      expect(
        await failure(
          core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "a" } } }),
        ),
      ).toEqual({
        code: 409,
        reason: "AlreadyExists",
        message: 'configmaps "a" already exists',
      });
      const list = await core.listNamespacedConfigMap({ namespace: "default", labelSelector: "app in (x)" });
      expect(list.items.map((i) => i.metadata?.name)).toEqual(["a"]);
    });

    test("delete with a uid precondition: mismatch is 409, match deletes", async () => {
      const cm = await core.createNamespacedConfigMap({
        namespace: "default",
        body: { metadata: { name: "pre" } },
      });
      const wrong = await failure(
        core.deleteNamespacedConfigMap({
          name: "pre",
          namespace: "default",
          body: { preconditions: { uid: "x" } },
        }),
      );
      expect(wrong).toMatchObject({ code: 409, reason: "Conflict" });
      await core.deleteNamespacedConfigMap({
        name: "pre",
        namespace: "default",
        body: { preconditions: { uid: cm.metadata!.uid! } },
      });
      expect(cluster.store.find(resource("configmaps"), "default", "pre")).toBeUndefined();
    });

    test("Jobs, ClusterRoles and a SelfSubjectAccessReview", async () => {
      const batch = kc.makeApiClient(k8s.BatchV1Api);
      const job = await batch.createNamespacedJob({
        namespace: "default",
        body: {
          metadata: { name: "j" },
          spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "i:1" }] } } },
        },
      });
      expect(job.spec?.template.metadata?.labels?.["batch.kubernetes.io/job-name"]).toBe("j");
      const roles = await kc.makeApiClient(k8s.RbacAuthorizationV1Api).listClusterRole();
      expect(roles.items.some((r) => r.metadata?.name === "cluster-admin")).toBe(true);
      const review = await kc.makeApiClient(k8s.AuthorizationV1Api).createSelfSubjectAccessReview({
        body: {
          spec: {
            resourceAttributes: { verb: "delete", resource: "jobs", group: "batch", namespace: "default" },
          },
        },
      });
      expect(review.status?.allowed).toBe(true);
    });

    test("Watch: events, then abort", async () => {
      const events: string[] = [];
      let abort: AbortController | undefined;
      const done = new Promise<unknown>((resolve) => {
        new k8s.Watch(kc)
          .watch(
            "/api/v1/namespaces/default/configmaps",
            { resourceVersion: cluster.store.resourceVersion },
            (type, obj) => {
              events.push(`${type} ${obj.metadata.name}`);
              if (events.length === 2) abort?.abort();
            },
            resolve,
          )
          .then(async (a) => {
            abort = a;
            await core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "w" } } });
            await core.deleteNamespacedConfigMap({ name: "w", namespace: "default" });
          });
      });
      const err = await done;
      expect(events).toEqual(["ADDED w", "DELETED w"]);
      expect((err as Error | null)?.name).toBe("AbortError");
    });

    test("Watch closed by the server (timeoutSeconds) calls done(null)", async () => {
      const err = await new Promise((resolve) => {
        new k8s.Watch(kc).watch(
          "/api/v1/namespaces",
          { timeoutSeconds: 1, resourceVersion: cluster.store.resourceVersion },
          () => {},
          resolve,
        );
      });
      expect(err).toBeNull();
    });

    test("Log: plain read and an aborted follow", async () => {
      await core.createNamespacedPod({
        namespace: "default",
        body: { metadata: { name: "p" }, spec: { containers: [{ name: "c", image: "i" }] } },
      });
      const pod = cluster.store.mutate(resource("pods"), "default", "p", (p) => ({
        ...p,
        spec: { ...p.spec, nodeName: "n" },
      }));
      const container = kubeletLogs(cluster.store).open(pod.metadata.uid!, "c", () => new Date());
      container.write("hello\n");
      const log = new k8s.Log(kc);
      let text = "";
      const plain = new PassThrough();
      plain.on("data", (d) => {
        text += d;
      });
      await new Promise<void>((resolve) => {
        plain.on("end", resolve);
        void log.log("default", "p", "c", plain, { tailLines: 1 });
      });
      expect(text).toBe("hello\n");

      const out = new PassThrough();
      // stack.md §5: Bun emits an unhandled AbortError on the source stream unless someone listens.
      out.on("pipe", (src) => src.on("error", () => {}));
      const lines: string[] = [];
      const second = new Promise<void>((resolve) =>
        out.on("data", (d) => {
          lines.push(String(d));
          if (lines.join("").includes("again")) resolve();
        }),
      );
      const ctl = await log.log("default", "p", "c", out, { follow: true });
      container.write("again\n");
      await second;
      ctl.abort();
      expect(lines.join("")).toBe("hello\nagain\n");
    });

    test("a 429 fault surfaces as ApiException with Retry-After", async () => {
      cluster.faults.add({
        method: "GET",
        path: "/api/v1/namespaces/default/configmaps/a",
        status: 429,
        retryAfterSeconds: 2,
      });
      try {
        await core.readNamespacedConfigMap({ name: "a", namespace: "default" });
        throw new Error("expected 429");
      } catch (e) {
        expect(e).toBeInstanceOf(k8s.ApiException);
        const ex = e as k8s.ApiException<string>;
        expect(ex.code).toBe(429);
        expect(ex.headers["retry-after"]).toBe("2");
      }
    });

    test("a lost create response is a transport error, not an ApiException", async () => {
      cluster.faults.add({
        method: "POST",
        path: "/api/v1/namespaces/default/configmaps",
        dropAfterCommit: true,
      });
      const err = await core
        .createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "lost" } } })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeDefined();
      expect(err).not.toBeInstanceOf(k8s.ApiException);
      expect(
        (await core.readNamespacedConfigMap({ name: "lost", namespace: "default" })).metadata?.name,
      ).toBe("lost");
    });
  });
}
