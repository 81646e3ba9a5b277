/**
 * `npm run cluster`: one fake cluster over HTTPS with two GPU nodes (one tainted), a CPU node and a
 * ready GPU Operator. `npm run cluster:real` (`--real`): the same nodes and GPU Operator on the real
 * control plane (test/control-plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler),
 * our process kubelet and the fault proxy clients connect through (testbed.ts). On either, the image
 * `ghcr.io/nvidia/aicr:fake` runs dist/aicr (when built), so `aicr snapshot --image
 * ghcr.io/nvidia/aicr:fake` and `aicr validate` work against it.
 * The first stdout line is `KUBECONFIG=<path>` (admin); runs until SIGINT or SIGTERM.
 *
 * `--real --real-node` (`npm run cluster -- --real --real-node`) adds one real node (real/node/README.md):
 * a kubelet, containerd and runc in network namespaces of their own, with a real systemd behind its
 * /run/systemd when this machine can run one. The second stdout line is then `REGISTRY=<host:port>`:
 * the registry the node pulls from without credentials, holding this checkout's image as
 * `<registry>/aicr:local` (`npm run image` first when it is stale).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { KUBERNETES_VERSION } from "../control-plane/build.ts";
import { realSystemdMissing, startRealSystemd } from "../support/real-systemd.ts";
import { processRuntime } from "./controllers/process-runtime.ts";
import { installGpuOperator, operandRuntime } from "./gpu-operator.ts";
import { demoNodes } from "./nodes.ts";
import { type Backend, startTestCluster } from "./testbed.ts";

export const FAKE_AGENT_IMAGE = "ghcr.io/nvidia/aicr:fake";
const root = join(import.meta.dir, "../..");
const binary = join(root, "dist/aicr");
const backend: Backend = process.argv.includes("--real") ? "real" : "fake";
const withRealNode = process.argv.includes("--real-node");
if (withRealNode && backend !== "real") {
  console.error("--real-node needs --real (a real kubelet talks to a real apiserver)");
  process.exit(2);
}
const REAL_NODE = "real-gpu-node";

// A real systemd for the real node's /run/systemd, when this machine can run one (SystemD readings).
const systemd = withRealNode && realSystemdMissing() === undefined ? await startRealSystemd() : undefined;

const cluster = await startTestCluster(backend, {
  ...(withRealNode
    ? {
        realNode: {
          name: REAL_NODE,
          aicrImage: true,
          ...(systemd ? { systemdDir: join(systemd.runDir, "systemd") } : {}),
        },
      }
    : {}),
  https: true,
  nodes: demoNodes().map((n) => n.object),
  runtime: (api) =>
    processRuntime({
      images: (image) => (image === FAKE_AGENT_IMAGE && existsSync(binary) ? binary : undefined),
      kubeconfigForServiceAccount: api.kubeconfigForServiceAccount,
      // The agent reads a recorded 8×H100 node instead of this machine.
      baseEnv: {
        PATH: `${join(root, "test/fixtures/bin/h100")}:${process.env.PATH}`,
        AICR_HOST_ROOT: join(root, "test/fixtures/hosts/h100-node"),
      },
      fallback: operandRuntime,
    }),
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`# ${signal}: stopping`);
  await cluster.stop();
  await systemd?.stop();
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));

try {
  await installGpuOperator(cluster);
} catch (e) {
  await cluster.stop();
  await systemd?.stop();
  throw e;
}
const kubeconfig = cluster.kubeconfigFor("admin");
console.log(`KUBECONFIG=${kubeconfig}`);
const real = cluster.realNode;
if (real) {
  console.log(`REGISTRY=${real.registry.host}`);
  const n = real.node;
  console.log(
    `# real node ${n.name} at ${n.nodeIP} (kubelet ${KUBERNETES_VERSION}, containerd, runc; 8 fake nvidia.com/gpu); its files and logs: ${n.dir}`,
  );
  console.log(
    `#   aicr snapshot --image ${real.images.aicr} --node-selector kubernetes.io/hostname=${n.name}`,
  );
  console.log(
    `#   containers see nvidia-smi at /usr/bin/nvidia-smi (the stand-in for NVIDIA's container runtime); hostPath (File) for your own Jobs: ${n.nvidiaSmi}`,
  );
  console.log(
    `# private registry ${real.privateRegistry.host} (TLS, CA ${real.privateRegistry.caFile}; user ${real.privateRegistry.user}, password ${real.privateRegistry.password}): ${real.images.privateTicker}`,
  );
  console.log(
    systemd
      ? `# the node's /run/systemd is a real systemd's (${systemd.runDir}/systemd)`
      : `# no real systemd here (${realSystemdMissing()}): the node's /run/systemd is empty`,
  );
}
if (backend === "real")
  console.log(
    `# kube-apiserver (test/control-plane) behind the fault proxy at ${cluster.url} (user admin, group system:masters); Ctrl-C stops it`,
  );
else console.log(`# fake apiserver at ${cluster.url} (user admin, group system:masters); Ctrl-C stops it`);
console.log(
  `# agent image ${FAKE_AGENT_IMAGE} runs ${existsSync(binary) ? binary : "dist/aicr (not built yet: npm run build)"}`,
);
if (backend === "fake") console.log("# no OpenAPI documents: use `kubectl create/apply --validate=false`");
else console.log(`# kubectl of the same release: ${await cluster.kubectl()}`);
