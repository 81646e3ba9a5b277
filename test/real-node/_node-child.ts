/**
 * A test process holding a real node with a running pod, for teardown.test.ts to kill outright: a
 * control plane, the node (no GPUs) and its registries, and a pod on the pod network that runs until
 * stopped. Prints one JSON line — the node's index, its directory, the control plane's — once the
 * pod's container runs, then waits to be killed.
 */
import { startControlPlane } from "../cluster/real/control-plane.ts";
import { startRealNodeStack } from "../cluster/real/node/stack.ts";

const cp = await startControlPlane([]);
const stack = await startRealNodeStack(
  { name: "real-child" },
  { apiserverPort: cp.port, servicePort: cp.port },
);
const kubectl = async (args: string[], input?: string) => {
  const p = Bun.spawn([cp.kubectl, "--kubeconfig", cp.adminKubeconfig, ...args], {
    stdout: "pipe",
    stderr: "pipe",
    stdin: input === undefined ? "ignore" : new TextEncoder().encode(input),
  });
  const [out, err] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return out + err;
};
const pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "forever", namespace: "default" },
  spec: {
    nodeName: "real-child",
    containers: [{ name: "t", image: stack.images.ticker, args: ["-n", "0", "-every", "1s"] }],
  },
};
// Pods are refused until the controller-manager has made the namespace's default ServiceAccount,
// which on a loaded machine can come after the node is up: the create is retried until it is taken.
for (let i = 0; ; i++) {
  const created = await kubectl(["create", "-f", "-"], JSON.stringify(pod));
  if (created.includes("created") || created.includes("AlreadyExists")) break;
  if (i > 120) throw new Error(`pod not created: ${created}`);
  await Bun.sleep(500);
}
for (let i = 0; ; i++) {
  const phase = await kubectl(["get", "pod", "forever", "-o", "jsonpath={.status.phase}"]);
  if (phase.trim() === "Running") break;
  if (i > 120) throw new Error(`pod not running: ${phase}\n${stack.node.tail("kubelet")}`);
  await Bun.sleep(500);
}
console.log(JSON.stringify({ index: stack.node.index, dir: stack.node.dir, controlPlaneDir: cp.dir }));
await new Promise(() => {});
