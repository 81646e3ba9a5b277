/**
 * A real node leaves nothing behind (test/cluster/real/node/leftovers.ts says what is looked for):
 * after stop(), after its test process is killed outright (bun test runs no exit hooks; the node's
 * supervisor sees its stdin close), and after the supervisor itself is killed (the next `aicr-node up`,
 * or `aicr-node sweep`, cleans what it left). Each node first runs a pod on the pod network, so there
 * are containers, shims, overlay and shm mounts, a pod network namespace and pod cgroups to remove.
 * Real backend only.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { nodeLeftovers, sysctls } from "../cluster/real/node/leftovers.ts";
import { realNodeMissing } from "../cluster/real/node/node.ts";
import { resource } from "../cluster/resources.ts";
import { BACKENDS, startTestCluster, type TestCluster } from "../cluster/testbed.ts";
import { nodeBinaries } from "../node/build.ts";
import { until, untilStore } from "../support/until.ts";

const TEST_MS = 240_000;
const before = sysctls();

async function runningPod(cluster: TestCluster): Promise<void> {
  const { node, images } = cluster.realNode!;
  await cluster.store.create(resource("pods"), {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "forever", namespace: "default" },
    spec: {
      nodeName: node.name,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: "t", image: images.ticker, args: ["-n", "0", "-every", "1s"] }],
    },
  });
  await untilStore(
    cluster,
    () => cluster.store.find(resource("pods"), "default", "forever")?.status?.phase === "Running",
    "the pod running on the real node",
    60_000,
  );
}

/** What a node with a running pod shows while it lives: the check sees each kind of thing it removes. */
function expectAlive(only: { index: number; dir: string }): void {
  const live = nodeLeftovers({ only });
  for (const kind of ["process", "network namespace", "network device", "cgroup", "directory", "claim"])
    expect(live.some((l) => l.startsWith(kind))).toBe(true);
  expect(live.some((l) => /process .*containerd-shim-runc-v2/.test(l))).toBe(true);
  expect(live.some((l) => /process \d+: \/ticker/.test(l))).toBe(true);
  // The node's mounts (overlay roots, shm, volumes, pod network namespaces) live in its own mount
  // namespace: the host sees one, the node's network namespace that `ip netns add` bound.
  const mounts = live.filter((l) => l.startsWith("mount"));
  expect(mounts).toHaveLength(1);
  expect(mounts[0]).toContain(`/run/netns/aicr-node-${only.index}`);
}

describe.skipIf(!BACKENDS.includes("real"))("[real] a real node leaves nothing behind", () => {
  const missing = realNodeMissing();

  test(
    "stop(): no process, mount, cgroup, namespace, device, rule, file or changed sysctl",
    async () => {
      if (missing) throw new Error(`a real node cannot run here: ${missing}`);
      const cluster = await startTestCluster("real", { realNode: { name: "real-stop" } });
      const only = { index: cluster.realNode!.node.index, dir: cluster.realNode!.node.dir };
      try {
        await runningPod(cluster);
        expectAlive(only);
      } finally {
        await cluster.stop();
      }
      expect(nodeLeftovers({ only })).toEqual([]);
      expect(sysctls()).toEqual(before);
    },
    TEST_MS,
  );

  test(
    "a test process killed with SIGKILL: its node's supervisor sees stdin close and removes everything",
    async () => {
      if (missing) throw new Error(`a real node cannot run here: ${missing}`);
      const child = Bun.spawn([process.execPath, join(import.meta.dir, "_node-child.ts")], {
        stdout: "pipe",
        stderr: "pipe",
        stdin: "ignore",
      });
      const reader = child.stdout.getReader();
      let line = "";
      while (!line.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the child ended: ${await new Response(child.stderr).text()}`);
        line += new TextDecoder().decode(value);
      }
      const info = JSON.parse(line) as { index: number; dir: string; controlPlaneDir: string };
      const only = { index: info.index, dir: info.dir };
      expectAlive(only);
      child.kill("SIGKILL");
      await child.exited;
      await until(() => nodeLeftovers({ only }), "the killed process's node gone", {
        accept: (left) => left.length === 0,
        ms: 60_000,
      });
      // The control plane's supervisor went the same way (its stdin closed too).
      await until(() => !existsSync(info.controlPlaneDir), "the control plane's directory removed", 30_000);
      expect(sysctls()).toEqual(before);
    },
    TEST_MS,
  );

  test(
    "a supervisor killed with SIGKILL: the kernel ends the node's processes, `aicr-node sweep` the rest",
    async () => {
      if (missing) throw new Error(`a real node cannot run here: ${missing}`);
      const cluster = await startTestCluster("real", { realNode: { name: "real-killed" } });
      const { node } = cluster.realNode!;
      const only = { index: node.index, dir: node.dir };
      try {
        await runningPod(cluster);
        expectAlive(only);
        process.kill(node.supervisorPid, "SIGKILL");
        // Its init dies with it (parent-death signal), and with init, every process of the node's PID
        // namespace: no shim, container, kubelet or containerd outlives it.
        await until(
          () => nodeLeftovers({ only }).filter((l) => l.startsWith("process")),
          "no process of the node left",
          { accept: (procs) => procs.length === 0, ms: 30_000 },
        );
        // What only the supervisor removes is still there, and is found.
        const left = nodeLeftovers({ only });
        expect(left.some((l) => l.startsWith("network namespace"))).toBe(true);
        expect(left.some((l) => l.startsWith("directory"))).toBe(true);
        const sweep = Bun.spawn([(await nodeBinaries()).aicrNode, "sweep"], {
          stdout: "pipe",
          stderr: "pipe",
        });
        expect(await sweep.exited).toBe(0);
        expect(await new Response(sweep.stdout).text()).toContain(
          `cleaning node ${node.index} left by pid ${node.supervisorPid}`,
        );
        expect(nodeLeftovers({ only })).toEqual([]);
      } finally {
        await cluster.stop();
      }
      expect(sysctls()).toEqual(before);
    },
    TEST_MS,
  );
});
