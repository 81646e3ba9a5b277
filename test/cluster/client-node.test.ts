/**
 * The same behaviours seen through @kubernetes/client-node 1.4.0 under Bun, on both backends: with a
 * bearer token and with a client certificate.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import * as k8s from "@kubernetes/client-node";
import { useCluster } from "../support/cluster.ts";
import { rejection } from "../support/reject.ts";
import { until } from "../support/until.ts";
import type { RunFunction } from "./controllers/runtime.ts";
import { currentResourceVersion, wireClient } from "./http-client.ts";
import { node } from "./nodes.ts";
import { resource } from "./resources.ts";
import { BACKENDS, CLUSTER_HOOK_MS } from "./testbed.ts";

function statusOf(e: unknown): { code: number; reason: string; message: string } {
  if (!(e instanceof k8s.ApiException)) throw e;
  const body = JSON.parse(e.body as string);
  return { code: e.code, reason: body.reason, message: body.message };
}

const failure = async (p: Promise<unknown>) => statusOf(await rejection(p, k8s.ApiException));

/** A container of the scripted runtime: it writes "hello", then what the test sends, until it is ended. */
function scriptedRuntime() {
  const waiters = new Map<string, (c: { out(t: string): void; exit(): void }) => void>();
  const running = new Map<string, { out(t: string): void; exit(): void }>();
  const run: RunFunction = (ctx) =>
    new Promise((resolve) => {
      const key = `${ctx.pod.metadata.name}/${ctx.container.name}`;
      const c = { out: (t: string) => ctx.stdout(t), exit: () => resolve({ exitCode: 0 }) };
      running.set(key, c);
      ctx.stdout("hello\n");
      ctx.signal.addEventListener("abort", () => resolve({ exitCode: 137 }), { once: true });
      waiters.get(key)?.(c);
    });
  const started = (key: string) =>
    new Promise<{ out(t: string): void; exit(): void }>((resolve) => {
      const c = running.get(key);
      if (c) resolve(c);
      else waiters.set(key, resolve);
    });
  return { run, started };
}

/** Waits here end on conditions; this only bounds a hung one. */
const WAIT_MS = 60_000;

// token: a ServiceAccount bound to cluster-admin (the fake over plain HTTP; the real apiserver's token
// file is fixed at start, so no user tokens there). client-certificate: admin (system:masters), HTTPS.
for (const backend of BACKENDS)
  for (const mode of ["token", "client-certificate"] as const) {
    describe(`[${backend}] client-node 1.4.0 with a ${mode}`, () => {
      const cluster = useCluster(backend, {
        https: mode === "client-certificate",
        nodes: [node("n1")],
        runtime: () => runtime.run,
      });
      let kc: k8s.KubeConfig;
      let core: k8s.CoreV1Api;
      const runtime = scriptedRuntime();
      beforeAll(async () => {
        const admin = wireClient(cluster(), "admin");
        await until(
          () => admin.get("/api/v1/namespaces/default/serviceaccounts/default"),
          "the default ServiceAccount",
          {
            accept: (r) => r.status === 200,
          },
        );
        kc = new k8s.KubeConfig();
        if (mode === "token") {
          await cluster().store.create(resource("serviceaccounts"), {
            metadata: { name: "cn", namespace: "default" },
          });
          await cluster().store.create(resource("clusterrolebindings"), {
            metadata: { name: "cn-admin" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
            subjects: [{ kind: "ServiceAccount", name: "cn", namespace: "default" }],
          });
          const sa = wireClient(cluster(), "system:serviceaccount:default:cn");
          await until(
            () => sa.get("/api/v1/namespaces/default/configmaps"),
            "the ServiceAccount's binding in force",
            {
              accept: (r) => r.status === 200,
            },
          );
          kc.loadFromFile(cluster().kubeconfigFor("system:serviceaccount:default:cn"));
        } else kc.loadFromFile(cluster().kubeconfigFor("admin", { auth: "certificate" }));
        core = kc.makeApiClient(k8s.CoreV1Api);
      }, CLUSTER_HOOK_MS);

      test("create, read, 404, 409 AlreadyExists", async () => {
        const created = await core.createNamespacedConfigMap({
          namespace: "default",
          body: { metadata: { name: "a", labels: { app: "x" } }, data: { k: "v" } },
        });
        expect(created.metadata?.uid).toBeDefined();
        expect((await core.readNamespacedConfigMap({ name: "a", namespace: "default" })).data).toEqual({
          k: "v",
        });
        expect(
          await failure(core.readNamespacedConfigMap({ name: "zz", namespace: "default" })),
        ).toMatchObject({ code: 404, reason: "NotFound" });
        expect(
          await failure(
            core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "a" } } }),
          ),
        ).toEqual({
          code: 409,
          reason: "AlreadyExists",
          message: 'configmaps "a" already exists',
        });
        const list = await core.listNamespacedConfigMap({
          namespace: "default",
          labelSelector: "app in (x)",
        });
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
        expect(
          (await wireClient(cluster(), "admin").get("/api/v1/namespaces/default/configmaps/pre")).status,
        ).toBe(404);
      });

      test("Jobs, ClusterRoles and a SelfSubjectAccessReview", async () => {
        const batch = kc.makeApiClient(k8s.BatchV1Api);
        const job = await batch.createNamespacedJob({
          namespace: "default",
          body: {
            metadata: { name: "j" },
            spec: {
              template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "i:1" }] } },
            },
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
        const path = "/api/v1/namespaces/default/configmaps";
        const resourceVersion = await currentResourceVersion(wireClient(cluster(), "admin"), path);
        const done = new Promise<unknown>((resolve) => {
          new k8s.Watch(kc)
            .watch(
              path,
              { resourceVersion },
              (type, obj) => {
                events.push(`${type} ${obj.metadata.name}`);
                if (events.length === 2) abort?.abort();
              },
              resolve,
            )
            .then(async (a) => {
              abort = a;
              await core.createNamespacedConfigMap({
                namespace: "default",
                body: { metadata: { name: "w" } },
              });
              await core.deleteNamespacedConfigMap({ name: "w", namespace: "default" });
            });
        });
        const err = await done;
        expect(events).toEqual(["ADDED w", "DELETED w"]);
        expect((err as Error | null)?.name).toBe("AbortError");
      });

      test("Watch closed by the server (timeoutSeconds) calls done(null)", async () => {
        const resourceVersion = await currentResourceVersion(
          wireClient(cluster(), "admin"),
          "/api/v1/namespaces",
        );
        const err = await new Promise((resolve) => {
          new k8s.Watch(kc).watch(
            "/api/v1/namespaces",
            { timeoutSeconds: 1, resourceVersion },
            () => {},
            resolve,
          );
        });
        expect(err).toBeNull();
      });

      test(
        "Log: plain read and an aborted follow",
        async () => {
          await core.createNamespacedPod({
            namespace: "default",
            body: {
              metadata: { name: "p" },
              spec: {
                restartPolicy: "Never",
                terminationGracePeriodSeconds: 0,
                containers: [{ name: "c", image: "i" }],
              },
            },
          });
          const container = await runtime.started("p/c");
          await until(
            () => wireClient(cluster(), "admin").get("/api/v1/namespaces/default/pods/p/log?container=c"),
            "the pod's first line logged",
            { accept: (r) => r.text === "hello\n" },
          );
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
          container.out("again\n");
          await second;
          ctl.abort();
          expect(lines.join("")).toBe("hello\nagain\n");
          container.exit();
        },
        WAIT_MS,
      );

      test("a 429 fault surfaces as ApiException with Retry-After", async () => {
        const fault = cluster().faults.add({
          method: "GET",
          path: "/api/v1/namespaces/default/configmaps/a",
          status: 429,
          retryAfterSeconds: 2,
        });
        try {
          const ex = await rejection<k8s.ApiException<string>>(
            core.readNamespacedConfigMap({ name: "a", namespace: "default" }),
            k8s.ApiException,
          );
          expect(ex.code).toBe(429);
          expect(ex.headers["retry-after"]).toBe("2");
        } finally {
          fault.remove();
        }
      });

      test("a lost create response is a transport error, not an ApiException", async () => {
        cluster().faults.add({
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
