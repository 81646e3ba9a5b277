/**
 * `npm run cluster`: one fake cluster over HTTPS with two GPU nodes (one tainted), a CPU node and a
 * ready GPU Operator. The image `ghcr.io/nvidia/aicr:fake` runs dist/aicr (when built), so
 * `aicr snapshot --image ghcr.io/nvidia/aicr:fake` and `aicr validate` work against it.
 * The first stdout line is `KUBECONFIG=<path>`; runs until SIGINT or SIGTERM.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { processRuntime } from "./controllers/process-runtime.ts";
import { installGpuOperator, operandRuntime } from "./gpu-operator.ts";
import { demoNodes } from "./nodes.ts";
import { startCluster } from "./server.ts";

export const FAKE_AGENT_IMAGE = "ghcr.io/nvidia/aicr:fake";
const root = join(import.meta.dir, "../..");
const binary = join(root, "dist/aicr");

const cluster = await startCluster({
  https: true,
  objects: demoNodes(),
  controllers: {
    runtimeFactory: (api: { kubeconfigForServiceAccount(ns: string, name: string): Promise<string> }) =>
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
  },
});
await installGpuOperator(cluster);
const kubeconfig = cluster.kubeconfigFor("admin");
console.log(`KUBECONFIG=${kubeconfig}`);
console.log(`# fake apiserver at ${cluster.url} (user admin, group system:masters); Ctrl-C stops it`);
console.log(
  `# agent image ${FAKE_AGENT_IMAGE} runs ${existsSync(binary) ? binary : "dist/aicr (not built yet: npm run build)"}`,
);
console.log("# no OpenAPI documents: use `kubectl create/apply --validate=false`");

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`# ${signal}: stopping`);
  await cluster.stop();
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
