import { afterEach, describe, expect, test } from "bun:test";
import type { KObject } from "../store.ts";
import { type ControllerOptions, startControllers } from "./index.ts";
import { condition, events, R, testStore, waitFor } from "./testing.ts";

let stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.map((s) => s()));
  stops = [];
});

function setup(opts: ControllerOptions = {}) {
  const { store, clock } = testStore();
  const c = startControllers(store, { clock, ...opts });
  stops.push(() => c.stop());
  return { store, clock, logs: c.logs };
}

const pod = (name: string, spec: Record<string, unknown> = {}): KObject => ({
  metadata: { name, namespace: "ns", labels: { app: "aicr" } },
  spec: { restartPolicy: "Never", containers: [{ name: "aicr", image: "aicr:1" }], ...spec },
});
const phase = (store: ReturnType<typeof setup>["store"], name: string, want: string) =>
  waitFor(
    store,
    () => {
      const p = store.find(R.pods, "ns", name);
      return p?.status?.phase === want && p;
    },
    `${name} ${want}`,
  );

describe("kubelet", () => {
  test("runs the container with resolved env; status, events and logs follow", async () => {
    let seen: Record<string, string> = {};
    const { store, logs } = setup({
      runtime: async (ctx) => {
        seen = ctx.env;
        ctx.stdout("hello\n");
        ctx.stderr(new TextEncoder().encode("warn: x\n"));
        return { exitCode: 0 };
      },
    });
    store.create(R.cm, { metadata: { name: "cfg", namespace: "ns" }, data: { level: "debug", extra: "1" } });
    const container = {
      name: "aicr",
      image: "aicr:1",
      envFrom: [{ configMapRef: { name: "cfg" }, prefix: "CFG_" }],
      env: [
        { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
        { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
        { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
        { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
        { name: "SA", valueFrom: { fieldRef: { fieldPath: "spec.serviceAccountName" } } },
        { name: "APP", valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
        { name: "LEVEL", valueFrom: { configMapKeyRef: { name: "cfg", key: "level" } } },
        { name: "GREETING", value: "on $(NODE_NAME) at $$HOME" },
      ],
    };
    const created = store.create(R.pods, pod("p", { containers: [container] }));
    const done = await phase(store, "p", "Succeeded");
    expect(seen).toMatchObject({
      CFG_level: "debug",
      CFG_extra: "1",
      NODE_NAME: "node-1",
      POD_NAME: "p",
      POD_NAMESPACE: "ns",
      SA: "default",
      APP: "aicr",
      LEVEL: "debug",
      GREETING: "on node-1 at $HOME",
    });
    expect(seen.POD_IP).toMatch(/^10\.244\.\d+\.\d+$/);
    expect(done.status.podIP).toBe(seen.POD_IP);
    expect(done.status.hostIP).toBe("192.168.0.10");
    const [cs] = done.status.containerStatuses;
    expect(cs.state.terminated).toMatchObject({ exitCode: 0, reason: "Completed" });
    expect(cs.state.terminated.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    expect(cs.ready).toBe(false);
    const types = done.status.conditions.map(
      (c: { type: string; status: string }) => `${c.type}=${c.status}`,
    );
    expect(types).toEqual([
      "PodReadyToStartContainers=False",
      "Initialized=True",
      "Ready=False",
      "ContainersReady=False",
      "PodScheduled=True",
    ]);
    expect(condition(done, "Ready").reason).toBe("PodCompleted");
    expect(events(store, "p").map((e) => e.reason)).toEqual(["Scheduled", "Pulled", "Created", "Started"]);
    expect(events(store, "p")[2]!.involvedObject.fieldPath).toBe("spec.containers{aicr}");
    const found = logs.get("ns", "p");
    if (!("log" in found)) throw new Error(found.error.message);
    expect(found.log.text()).toBe("hello\nwarn: x\n");
    expect(found.log.text({ timestamps: true })).toMatch(
      /^2026-01-01T00:00:00\.000000000Z hello\n2026-01-01T00:00:00\.000000000Z warn: x\n$/,
    );
    expect(found.log.text({ tailLines: 1 })).toBe("warn: x\n");
    expect(created.metadata.uid).toBe(done.metadata.uid);
  });

  test("a running pod is Ready; a non-zero exit fails it with the log tail as termination message", async () => {
    let release = (_: number) => {};
    const { store } = setup({
      runtime: (ctx) =>
        new Promise((resolve) => {
          ctx.stdout("step 1\nboom: no GPU found\n");
          release = (exitCode) => resolve({ exitCode });
        }),
    });
    store.create(
      R.pods,
      pod("p", {
        containers: [{ name: "aicr", image: "aicr:1", terminationMessagePolicy: "FallbackToLogsOnError" }],
      }),
    );
    const running = await phase(store, "p", "Running");
    expect(condition(running, "Ready")?.status).toBe("True");
    expect(running.status.containerStatuses[0]).toMatchObject({ ready: true, started: true });
    release(3);
    const failed = await phase(store, "p", "Failed");
    expect(failed.status.containerStatuses[0].state.terminated).toMatchObject({
      exitCode: 3,
      reason: "Error",
      message: "step 1\nboom: no GPU found\n",
    });
  });

  test("the runtime's termination message wins; init containers run first, in order", async () => {
    const order: string[] = [];
    const { store } = setup({
      runtime: async (ctx) => {
        order.push(ctx.container.name);
        return { exitCode: 0, message: `done ${ctx.container.name}` };
      },
    });
    store.create(
      R.pods,
      pod("p", {
        initContainers: [
          { name: "i1", image: "aicr:1" },
          { name: "i2", image: "aicr:1" },
        ],
      }),
    );
    const done = await phase(store, "p", "Succeeded");
    expect(order).toEqual(["i1", "i2", "aicr"]);
    expect(done.status.containerStatuses[0].state.terminated.message).toBe("done aicr");
    expect(done.status.initContainerStatuses.map((s: { ready: boolean }) => s.ready)).toEqual([true, true]);
  });

  test("an unpullable image goes ErrImagePull then ImagePullBackOff, and the pod stays Pending", async () => {
    const { store, clock, logs } = setup({
      unpullableImages: ["ghcr.io/nope:1"],
      timing: { imagePullBackoffMs: 10_000 },
    });
    store.create(R.pods, pod("p", { containers: [{ name: "aicr", image: "ghcr.io/nope:1" }] }));
    const waiting = (reason: string) =>
      waitFor(
        store,
        () => {
          const w = store.find(R.pods, "ns", "p")?.status?.containerStatuses?.[0]?.state?.waiting;
          return w?.reason === reason && w;
        },
        reason,
      );
    expect((await waiting("ErrImagePull")).message).toContain(
      'failed to pull and unpack image "ghcr.io/nope:1"',
    );
    clock.advance(10_000);
    expect(await waiting("ImagePullBackOff")).toEqual({
      reason: "ImagePullBackOff",
      message: 'Back-off pulling image "ghcr.io/nope:1"',
    });
    expect(store.find(R.pods, "ns", "p")?.status.phase).toBe("Pending");
    expect(events(store, "p").map((e) => `${e.reason}:${e.message}`)).toContain(
      "Failed:Error: ImagePullBackOff",
    );
    expect(logs.get("ns", "p")).toEqual({
      error: {
        code: 400,
        reason: "BadRequest",
        message: 'container "aicr" in pod "p" is waiting to start: trying and failing to pull image',
      },
    });
  });

  test("deleting a pod aborts its container", async () => {
    let onAbort = () => {};
    const aborted = new Promise<void>((resolve) => {
      onAbort = resolve;
    });
    const { store } = setup({
      runtime: (ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener("abort", () => {
            onAbort();
            resolve({ exitCode: 143 });
          });
        }),
    });
    store.create(R.pods, pod("p"));
    await phase(store, "p", "Running");
    store.delete(R.pods, "ns", "p");
    await aborted;
  });

  test("a missing ConfigMap is CreateContainerConfigError", async () => {
    const { store } = setup();
    const env = [{ name: "X", valueFrom: { configMapKeyRef: { name: "absent", key: "k" } } }];
    store.create(R.pods, pod("p", { containers: [{ name: "aicr", image: "aicr:1", env }] }));
    const w = await waitFor(
      store,
      () => {
        const s = store.find(R.pods, "ns", "p")?.status?.containerStatuses?.[0]?.state?.waiting;
        return s?.reason === "CreateContainerConfigError" && s;
      },
      "CreateContainerConfigError",
    );
    expect(w.message).toBe('configmap "absent" not found');
  });

  test("log lookups answer as the apiserver does", async () => {
    const { store, logs } = setup({ enable: { scheduler: false } });
    store.create(
      R.pods,
      pod("two", {
        containers: [
          { name: "a", image: "x" },
          { name: "b", image: "x" },
        ],
      }),
    );
    expect(logs.get("ns", "two")).toMatchObject({
      error: { code: 400, message: "a container name must be specified for pod two, choose one of: [a b]" },
    });
    expect(logs.get("ns", "two", "c")).toMatchObject({
      error: { code: 400, message: "container c is not valid for pod two" },
    });
    const unscheduled = logs.get("ns", "two", "a");
    expect("log" in unscheduled && unscheduled.log.text()).toBe("");
    expect(logs.get("ns", "nope")).toMatchObject({ error: { code: 404, message: 'pods "nope" not found' } });
  });
});
