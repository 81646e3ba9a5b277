import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { KObject } from "../store.ts";
import { startControllers } from "./index.ts";
import { processArgv, processRuntime } from "./process-runtime.ts";
import type { RunResult } from "./runtime.ts";
import { R, testStore, waitFor } from "./testing.ts";

const FAKE = join(import.meta.dir, "fixtures", "fake-aicr.sh");
let stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.map((s) => s()));
  stops = [];
});

function setup() {
  const { store } = testStore();
  const runtime = processRuntime({
    images: { "ghcr.io/nvidia/aicr:v1": FAKE },
    kubeconfigForServiceAccount: async (ns, name) => `# kubeconfig for ${ns}/${name}`,
  });
  const results: Promise<RunResult>[] = [];
  // The real clock: these pods run real processes.
  const c = startControllers(store, {
    runtime: {
      run: (ctx) => {
        const r = runtime.run(ctx);
        results.push(r);
        return r;
      },
      close: () => runtime.close?.() ?? Promise.resolve(),
    },
  });
  stops.push(() => c.stop());
  return { store, logs: c.logs, results };
}

const pod = (name: string, command: string[], extra: Record<string, unknown> = {}): KObject => ({
  metadata: { name, namespace: "ns" },
  spec: {
    restartPolicy: "Never",
    containers: [
      {
        name: "aicr",
        image: "ghcr.io/nvidia/aicr:v1",
        command,
        args: ["--pod=$(POD_NAME)"],
        env: [
          { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
          { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
          { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
        ],
        ...extra,
      },
    ],
  },
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

describe("process runtime", () => {
  test("argv: command[0] becomes the executable, $(VAR) expanded", () => {
    const env = { POD_NAME: "p" };
    expect(
      processArgv("/bin/x", { command: ["aicr", "snapshot"], args: ["--name=$(POD_NAME)"] }, env),
    ).toEqual(["/bin/x", "snapshot", "--name=p"]);
    expect(processArgv("/bin/x", { args: ["a"] }, env)).toEqual(["/bin/x", "a"]);
  });

  test("runs the configured executable with the pod's env and a ServiceAccount kubeconfig; output is the log", async () => {
    const { store, logs } = setup();
    store.create(R.pods, pod("p", ["aicr", "snapshot"]));
    await phase(store, "p", "Succeeded");
    const found = logs.get("ns", "p");
    if (!("log" in found)) throw new Error(found.error.message);
    const text = found.log.text();
    expect(text).toContain("argv: snapshot --pod=p\n");
    expect(text).toContain("node=node-1 pod=p ns=ns host=p\n");
    expect(text).toContain("kubeconfig: # kubeconfig for ns/default\n");
    expect(text).toContain("to stderr\n");
  });

  test("a failing process: exit code and FallbackToLogsOnError message", async () => {
    const { store } = setup();
    store.create(R.pods, pod("p", ["aicr", "fail"], { terminationMessagePolicy: "FallbackToLogsOnError" }));
    const failed = await phase(store, "p", "Failed");
    const t = failed.status.containerStatuses[0].state.terminated;
    expect(t.exitCode).toBe(4);
    expect(t.reason).toBe("Error");
    expect(t.message).toContain("fatal: it broke\n");
  });

  test("deleting the pod terminates the process and removes its kubeconfig", async () => {
    const { store, logs, results } = setup();
    store.create(R.pods, pod("p", ["aicr", "sleep"]));
    await phase(store, "p", "Running");
    const found = logs.get("ns", "p");
    if (!("log" in found)) throw new Error(found.error.message);
    // Wait until the script has set its TERM trap and started sleeping.
    await new Promise<void>((resolve) => {
      const ac = new AbortController();
      found.log.follow((c) => {
        if (c.includes("sleeping")) {
          ac.abort();
          resolve();
        }
      }, ac.signal);
    });
    store.delete(R.pods, "ns", "p");
    const res = await results[0]!;
    expect(res.exitCode).toBe(143);
    const path = /kubeconfig-path: (.*)\n/.exec(found.log.text())?.[1];
    expect(path).toEndWith("/kubeconfig");
    expect(existsSync(path!)).toBe(false);
  });

  test("images without an executable use the fallback (exit 0)", async () => {
    const { store } = setup();
    store.create(R.pods, {
      ...pod("p", ["x"]),
      spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox" }] },
    });
    await phase(store, "p", "Succeeded");
  });
});
