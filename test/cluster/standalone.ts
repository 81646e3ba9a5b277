/**
 * `npm run cluster`: one fake cluster over HTTPS with two GPU nodes (one tainted) and a CPU node.
 * The first stdout line is `KUBECONFIG=<path>`; runs until SIGINT or SIGTERM.
 */
import { demoNodes } from "./nodes.ts";
import { startCluster } from "./server.ts";

const cluster = await startCluster({ https: true, objects: demoNodes() });
const kubeconfig = cluster.kubeconfigFor("admin");
console.log(`KUBECONFIG=${kubeconfig}`);
console.log(`# fake apiserver at ${cluster.url} (user admin, group system:masters); Ctrl-C stops it`);
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
