/**
 * Streams on the wire, on both backends: watch (resourceVersion, selectors, watch-list, timeout) and
 * pods/log (the apiserver's checks, then the kubelet's log: tailLines, timestamps, follow). Containers
 * run a scripted runtime; the test writes their output and ends them.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { useCluster } from "../support/cluster.ts";
import { until } from "../support/until.ts";
import type { RunFunction } from "./controllers/runtime.ts";
import { currentResourceVersion, type WireClient, wireClient } from "./http-client.ts";
import { node } from "./nodes.ts";
import { BACKENDS, CLUSTER_HOOK_MS } from "./testbed.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const PODS = "/api/v1/namespaces/default/pods";
/** Waits here end on conditions; this only bounds a hung one. */
const WAIT_MS = 60_000;
const UNPULLABLE = "registry.invalid/never:1";

/** Containers of the scripted runtime, by "<pod>/<container>": the test writes their output and ends them. */
interface Scripted {
  out(text: string): void;
  exit(code: number): void;
}

function scriptedRuntime() {
  const running = new Map<string, Scripted>();
  const waiters = new Set<() => void>();
  const run: RunFunction = (ctx) =>
    new Promise((resolve) => {
      running.set(`${ctx.pod.metadata.name}/${ctx.container.name}`, {
        out: (text) => ctx.stdout(text),
        exit: (exitCode) => resolve({ exitCode }),
      });
      ctx.signal.addEventListener("abort", () => resolve({ exitCode: 137 }), { once: true });
      for (const w of [...waiters]) w();
    });
  const started = (key: string): Promise<Scripted> =>
    new Promise((resolve) => {
      const check = () => {
        const s = running.get(key);
        if (!s) return;
        waiters.delete(check);
        resolve(s);
      };
      waiters.add(check);
      check();
    });
  return { run, started };
}

const parse = (line: string | undefined) => JSON.parse(line!) as { type: string; object: any };

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, {
      nodes: [node("n1")],
      runtime: () => runtime.run,
      unpullableImages: [UNPULLABLE],
    });
    let admin: WireClient;
    const runtime = scriptedRuntime();
    beforeAll(async () => {
      admin = wireClient(cluster(), "admin");
      // Pods need the namespace's default ServiceAccount (admission); the real one is made by a controller.
      await until(
        () => admin.get("/api/v1/namespaces/default/serviceaccounts/default"),
        "the default ServiceAccount",
        {
          accept: (r) => r.status === 200,
        },
      );
    }, CLUSTER_HOOK_MS);

    describe("wire: watch", () => {
      test("events arrive as they happen, from the requested resourceVersion, as typed objects", async () => {
        const rv = await currentResourceVersion(admin, CM);
        const w = await admin.stream(`${CM}?watch=true&resourceVersion=${rv}`);
        expect(w.status).toBe(200);
        expect(w.headers.get("content-type")).toBe("application/json");
        await admin.post(CM, { metadata: { name: "w1" } });
        await admin.delete(`${CM}/w1`);
        const first = parse(await w.next());
        const second = parse(await w.next());
        w.close();
        expect([first.type, second.type]).toEqual(["ADDED", "DELETED"]);
        expect(first.object).toMatchObject({ kind: "ConfigMap", apiVersion: "v1", metadata: { name: "w1" } });
        expect(Number(second.object.metadata.resourceVersion)).toBeGreaterThan(
          Number(first.object.metadata.resourceVersion),
        );
      });

      test("a label-selected watch sees an object entering the selection as ADDED, leaving as DELETED", async () => {
        await admin.post(CM, { metadata: { name: "sel", labels: { team: "a" } } });
        const rv = await currentResourceVersion(admin, CM);
        const w = await admin.stream(`${CM}?watch=true&resourceVersion=${rv}&labelSelector=team%3Db`);
        const relabel = (team: string) =>
          admin.patch(`${CM}/sel`, { metadata: { labels: { team } } }, "application/merge-patch+json");
        await relabel("b");
        await relabel("c");
        const entered = parse(await w.next());
        const left = parse(await w.next());
        w.close();
        expect([entered.type, entered.object.metadata.labels]).toEqual(["ADDED", { team: "b" }]);
        // Leaving: the content the watcher last saw match, at the change's resourceVersion.
        expect([left.type, left.object.metadata.labels]).toEqual(["DELETED", { team: "b" }]);
        const now = (await admin.get(`${CM}/sel`)).body.metadata.resourceVersion;
        expect(left.object.metadata.resourceVersion).toBe(now);
      });

      test("watch-list: sendInitialEvents gives the current objects, then the initial-events-end bookmark", async () => {
        await admin.post(CM, { metadata: { name: "wl-1", labels: { wl: "x" } } });
        await admin.post(CM, { metadata: { name: "wl-2", labels: { wl: "x" } } });
        const w = await admin.stream(
          `${CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=wl%3Dx`,
        );
        const initial = [parse(await w.next()), parse(await w.next())];
        expect(initial.map((e) => [e.type, e.object.metadata.name]).sort()).toEqual([
          ["ADDED", "wl-1"],
          ["ADDED", "wl-2"],
        ]);
        const end = parse(await w.next());
        expect(end).toEqual({
          type: "BOOKMARK",
          object: {
            kind: "ConfigMap",
            apiVersion: "v1",
            metadata: {
              resourceVersion: expect.any(String),
              annotations: { "k8s.io/initial-events-end": "true" },
            },
          },
        });
        await admin.post(CM, { metadata: { name: "wl-3", labels: { wl: "x" } } });
        const live = parse(await w.next());
        w.close();
        expect([live.type, live.object.metadata.name]).toEqual(["ADDED", "wl-3"]);
      });

      test("sendInitialEvents needs resourceVersionMatch=NotOlderThan: 422 on ListOptions", async () => {
        const res = await admin.get(`${CM}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true`);
        expect(res.status).toBe(422);
        expect(res.body).toMatchObject({
          reason: "Invalid",
          message:
            'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
          details: {
            group: "meta.k8s.io",
            kind: "ListOptions",
            causes: [
              {
                reason: "FieldValueForbidden",
                message: "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                field: "resourceVersionMatch",
              },
            ],
          },
        });
        const list = await admin.get(`${CM}?resourceVersionMatch=NotOlderThan`);
        expect(list.status).toBe(422);
        expect(list.body.message).toBe(
          'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
        );
      });

      test("timeoutSeconds ends the stream", async () => {
        const rv = await currentResourceVersion(admin, CM);
        const w = await admin.stream(`${CM}?watch=true&resourceVersion=${rv}&timeoutSeconds=1`);
        expect(w.status).toBe(200);
        expect(await w.next()).toBeUndefined();
      });

      // Fake only: the fake's store sends a bookmark on demand; the real apiserver's come on its own timer.
      if (backend === "fake")
        test("bookmarks when allowed (fake: store.bookmark())", async () => {
          const fake = cluster().fake!;
          const w = await admin.stream(
            `${CM}?watch=true&resourceVersion=${fake.store.resourceVersion}&allowWatchBookmarks=true&timeoutSeconds=1`,
          );
          fake.store.bookmark();
          const bm = parse(await w.next());
          expect(bm).toEqual({
            type: "BOOKMARK",
            object: {
              kind: "ConfigMap",
              apiVersion: "v1",
              metadata: { resourceVersion: fake.store.resourceVersion },
            },
          });
          expect(await w.next()).toBeUndefined();
        });

      // Fake only: etcd compaction cannot be triggered on the real control plane from here.
      if (backend === "fake")
        test("a compacted resourceVersion gets an ERROR event with 410 Expired (fake: store.compact())", async () => {
          const fake = cluster().fake!;
          const old = fake.store.resourceVersion;
          await admin.post(CM, { metadata: { name: "w2" } });
          fake.store.compact();
          const w = await admin.stream(`${CM}?watch=true&resourceVersion=${Number(old) - 1}`);
          const ev = parse(await w.next());
          expect(ev.type).toBe("ERROR");
          expect(ev.object).toMatchObject({ kind: "Status", code: 410, reason: "Expired" });
          expect(ev.object.message).toMatch(/^too old resource version: \d+ \(\d+\)$/);
          expect(await w.next()).toBeUndefined();
        });

      // Fake only: it counts the fake store's open watches.
      if (backend === "fake")
        test("the server notices a client going away (fake: store.watchCount)", async () => {
          const fake = cluster().fake!;
          const base = fake.store.watchCount;
          const w = await admin.stream(`${CM}?watch=true&resourceVersion=${fake.store.resourceVersion}`);
          expect(fake.store.watchCount).toBe(base + 1);
          w.close();
          await until(() => fake.store.watchCount === base, "the store's watch closed");
        });
    });

    describe("wire: pod logs", () => {
      async function pod(name: string, containers: string[], image = "scripted:1") {
        const res = await admin.post(PODS, {
          metadata: { name },
          spec: {
            restartPolicy: "Never",
            terminationGracePeriodSeconds: 0,
            containers: containers.map((c) => ({ name: c, image })),
          },
        });
        expect(res.status).toBe(201);
      }

      test("the apiserver's checks: a missing pod, a container name, an unscheduled pod", async () => {
        const missing = await admin.get(`${PODS}/missing/log`);
        expect(missing.status).toBe(404);
        expect(missing.body).toMatchObject({
          message: 'pods "missing" not found',
          details: { name: "missing", kind: "pods" },
        });
        // No node matches: the pod stays unscheduled.
        const res = await admin.post(PODS, {
          metadata: { name: "nowhere" },
          spec: { nodeSelector: { none: "x" }, containers: ["a", "b"].map((c) => ({ name: c, image: "i" })) },
        });
        expect(res.status).toBe(201);
        const unnamed = await admin.get(`${PODS}/nowhere/log`);
        expect(unnamed.status).toBe(400);
        expect(unnamed.body).toMatchObject({
          reason: "BadRequest",
          message: "a container name must be specified for pod nowhere, choose one of: [a b]",
        });
        const wrong = await admin.get(`${PODS}/nowhere/log?container=zz`);
        expect(wrong.body.message).toBe("container zz is not valid for pod nowhere");
        const unscheduled = await admin.get(`${PODS}/nowhere/log?container=a`);
        expect(unscheduled.status).toBe(204);
        expect(unscheduled.text).toBe("");
      });

      test(
        "a container that cannot start: the kubelet's 400 names why",
        async () => {
          await pod("stuck", ["main"], UNPULLABLE);
          await until(() => admin.get(`${PODS}/stuck`), "the stuck pod waiting on its image", {
            ms: WAIT_MS - 10_000,
            accept: (r) =>
              ["ErrImagePull", "ImagePullBackOff"].includes(
                r.body.status?.containerStatuses?.[0]?.state?.waiting?.reason,
              ),
          });
          const waiting = await admin.get(`${PODS}/stuck/log`);
          expect(waiting.status).toBe(400);
          expect(waiting.body).toMatchObject({
            reason: "BadRequest",
            message: 'container "main" in pod "stuck" is waiting to start: trying and failing to pull image',
          });
        },
        WAIT_MS,
      );

      test(
        "tailLines and timestamps",
        async () => {
          await pod("logger", ["main"]);
          const c = await runtime.started("logger/main");
          c.out("one\ntwo\nthree\n");
          const all = await until(() => admin.get(`${PODS}/logger/log`), "the three lines logged", {
            accept: (r) => r.text === "one\ntwo\nthree\n",
          });
          expect(all.status).toBe(200);
          expect(all.headers.get("content-type")).toBe("text/plain");
          expect(all.text).toBe("one\ntwo\nthree\n");
          expect((await admin.get(`${PODS}/logger/log?tailLines=1`)).text).toBe("three\n");
          const stamped = (await admin.get(`${PODS}/logger/log?timestamps=true&tailLines=1`)).text;
          expect(stamped).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z three\n$/);
          c.exit(0);
        },
        WAIT_MS,
      );

      test(
        "follow streams until the container exits; several containers need a name",
        async () => {
          await pod("follower", ["a", "b"]);
          const unnamed = await admin.get(`${PODS}/follower/log`);
          expect(unnamed.body.message).toBe(
            "a container name must be specified for pod follower, choose one of: [a b]",
          );
          const a = await runtime.started("follower/a");
          a.out("before\n");
          await until(() => admin.get(`${PODS}/follower/log?container=a`), "the line before", {
            accept: (r) => r.text === "before\n",
          });
          const s = await admin.stream(`${PODS}/follower/log?container=a&follow=true`);
          expect(s.status).toBe(200);
          expect(await s.next()).toBe("before");
          a.out("after\n");
          expect(await s.next()).toBe("after");
          a.exit(0);
          expect(await s.next()).toBeUndefined();
          (await runtime.started("follower/b")).exit(0);
        },
        WAIT_MS,
      );
    });
  });
