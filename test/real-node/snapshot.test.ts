/**
 * aicr on a real node (test/cluster/real/node): the compiled binary deploys its agent — the project's
 * image, pulled by containerd from a registry — onto a kubelet v1.36.3 node with containerd 2.x, runc
 * and the CNI bridge, whose /run/systemd is a real systemd's, and whose containers see the nvidia-smi
 * stand-in as NVIDIA's container runtime would show the driver's. Real backend only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseSnapshot, type Snapshot } from "../../src/snapshot/schema.ts";
import { resource } from "../cluster/resources.ts";
import { BACKENDS, type TestCluster } from "../cluster/testbed.ts";
import { KUBERNETES_VERSION } from "../control-plane/build.ts";
import { CONTAINERD_VERSION } from "../node/build.ts";
import { runObjects, runSnapshot, untilNoRunObjects } from "../snapshot/_harness.ts";
import { until, untilStore } from "../support/until.ts";
import {
  CONTAINER_GC_MS,
  kubectlAs,
  NODE,
  type RealNodeCluster,
  SETUP_MS,
  startRealNodeCluster,
  tasks,
  untilNoContainers,
} from "./_support.ts";

describe.skipIf(!BACKENDS.includes("real"))("[real] aicr snapshot on a real node", () => {
  let env: RealNodeCluster;
  let cluster: TestCluster;
  let kubectl: string;
  let admin: string;

  beforeAll(async () => {
    env = await startRealNodeCluster();
    ({ cluster, kubectl, admin } = env);
  }, SETUP_MS);

  afterAll(async () => {
    await env?.stop();
  }, SETUP_MS);

  const node = () => cluster.realNode!.node;
  const k = (args: string[], input?: string) => kubectlAs(kubectl, admin, args, input);

  test("the node registered itself: Ready, untainted, a GPU node with 8 nvidia.com/gpu from its device plugin", () => {
    const n = cluster.store.find(resource("nodes"), undefined, NODE)!;
    expect(n.metadata.labels).toMatchObject({
      "kubernetes.io/hostname": NODE,
      "nvidia.com/gpu.present": "true",
    });
    expect(n.status.allocatable["nvidia.com/gpu"]).toBe("8");
    expect(n.status.nodeInfo).toMatchObject({
      kubeletVersion: KUBERNETES_VERSION,
      containerRuntimeVersion: `containerd://${CONTAINERD_VERSION}`,
    });
    expect(n.status.addresses).toContainEqual({ type: "InternalIP", address: node().nodeIP });
    expect(n.spec.taints ?? []).toEqual([]);
  });

  test("dist/aicr snapshot --image <registry>/aicr:local completes there: OS, K8s, GPU (smi) and SystemD readings; nothing left", async () => {
    const image = cluster.realNode!.images.aicr!;
    const res = await runSnapshot(admin, [
      "--image",
      image,
      "--node-selector",
      `kubernetes.io/hostname=${NODE}`,
      "--timeout",
      "3m",
    ]);
    expect(res.stderr).toContain(`running on ${NODE}`);
    expect(res.code).toBe(0);
    const doc: Snapshot = parseSnapshot(res.stdout, "stdout");
    const data = (type: string, subtype: string) =>
      doc.measurements.find((m) => m.type === type)?.subtypes.find((s) => s.subtype === subtype)?.data;
    expect(doc.metadata["source-node"]).toBe(NODE);

    // K8s: the apiserver and this node as the kubelet reports it.
    expect(data("K8s", "server")?.version).toBe(KUBERNETES_VERSION);
    expect(data("K8s", "node")).toMatchObject({
      "container-runtime-name": "containerd",
      "container-runtime-version": CONTAINERD_VERSION,
      "kubelet-version": KUBERNETES_VERSION,
      "source-node": NODE,
    });
    expect(data("K8s", "image")).toBeDefined();
    // GPU: the nvidia-smi stand-in the node's runtime mounts at /usr/bin/nvidia-smi (the image has none).
    expect(data("GPU", "smi")).toMatchObject({
      "gpu-count": 8,
      driver: "570.124.06",
      "cuda-version": "12.8",
    });
    // OS: the host's os-release (hostPath), /proc of the node's kernel, its sysctls.
    expect(data("OS", "release")?.ID).toBe("debian");
    expect(Object.keys(data("OS", "sysctl") ?? {}).length).toBeGreaterThan(50);
    // SystemD: the real systemd behind the node's /run/systemd, over D-Bus.
    expect(data("SystemD", "containerd.service")).toMatchObject({
      ActiveState: "active",
      SubState: "running",
    });
    expect(data("SystemD", "kubelet.service")).toMatchObject({
      ActiveState: "active",
      SubState: "running",
    });
    expect(data("SystemD", "docker.service")).toMatchObject({ ActiveState: "failed" });
    // NodeTopology: the node's labels.
    expect(data("NodeTopology", "label")?.["nvidia.com/gpu.present"]).toBe(`true|${NODE}`);

    // The agent wrote its result through the fault proxy, as its own ServiceAccount: the kubelet gave
    // it KUBERNETES_SERVICE_HOST=10.96.0.1, which the node's one DNAT rule leads to the proxy.
    const agentWrites = cluster.log.entries.filter(
      (e) => e.user.startsWith("system:serviceaccount:default:") && /aicr-agent-snapshot-/.test(e.path),
    );
    expect(agentWrites.length).toBeGreaterThan(0);

    // Nothing of the run is left: no object, no running sandbox or container (no task) in containerd;
    // their records go at the kubelet's next container garbage collection (the last test).
    await untilNoRunObjects(cluster, "default");
    expect(runObjects(cluster, "default")).toEqual([]);
    await until(() => tasks(cluster), "no sandbox or container running in containerd", {
      accept: (live) => live.length === 0,
      ms: 60_000,
      everyMs: 250,
    });
  }, 180_000);

  test("kubectl logs -f streams a running pod's CRI log through the apiserver's proxy to the kubelet", async () => {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "ticker", namespace: "default" },
      spec: {
        nodeSelector: { "kubernetes.io/hostname": NODE },
        restartPolicy: "Never",
        containers: [
          { name: "t", image: cluster.realNode!.images.ticker, args: ["-n", "6", "-every", "700ms"] },
        ],
      },
    };
    expect((await k(["create", "-f", "-"], JSON.stringify(pod))).code).toBe(0);
    await untilStore(
      cluster,
      () => cluster.store.find(resource("pods"), "default", "ticker")?.status?.phase === "Running",
      "the ticker pod Running",
      60_000,
    );
    const follow = Bun.spawn([kubectl, "--kubeconfig", admin, "logs", "-f", "ticker"], {
      stdout: "pipe",
      stderr: "pipe",
    });
    // Lines arrive while the container runs: the first before it has ended.
    const reader = follow.stdout.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toStartWith("tick ");
    expect(cluster.store.find(resource("pods"), "default", "ticker")?.status?.phase).toBe("Running");
    let rest = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(await follow.exited).toBe(0);
    expect((first + rest).trim().split("\n")).toEqual([1, 2, 3, 4, 5, 6].map((i) => `tick ${i}`));

    // What the kubelet read: the CRI log file containerd wrote (timestamp, stream, tag, line).
    const uid = cluster.store.find(resource("pods"), "default", "ticker")!.metadata.uid;
    const dir = join(node().dir, "var/log/pods", `default_ticker_${uid}`, "t");
    const file = readFileSync(join(dir, readdirSync(dir)[0]!), "utf8");
    expect(file.split("\n")[0]).toMatch(/^\d{4}-\d\d-\d\dT\S+Z stdout F tick 1$/);
    expect((await k(["delete", "pod", "ticker", "--wait=true"])).code).toBe(0);
  }, 120_000);

  test(
    "afterwards containerd holds no container: the kubelet collected the agent's and the ticker's",
    () => untilNoContainers(cluster),
    CONTAINER_GC_MS + 10_000,
  );
});
