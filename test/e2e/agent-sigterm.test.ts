/**
 * The agent's pod being stopped (SIGTERM from its kubelet) while the agent waits for the answer to its
 * ConfigMap write: the request in flight is abandoned and the agent exits as cancelled at once. Found
 * on the real node, where the agent used to sit out the grace period (its write bound is 30 s) and the
 * pod lingered until then. The write is held by the cluster until the agent has exited, so a waiting
 * agent could only end by that bound (exit 6), never by 9.
 */
import { expect, test } from "bun:test";
import { node } from "../cluster/nodes.ts";
import { H100_BIN, H100_ROOT, spawnSnapshot } from "../snapshot/_harness.ts";
import { useCluster } from "../support/cluster.ts";
import { until } from "../support/until.ts";
import { ensureBuilt } from "./_aicr.ts";

const cluster = useCluster("fake", { nodes: [node("gpu-node-1", { gpus: 8 })], controllers: false });

test("SIGTERM during the agent's ConfigMap write: exit 9 (CANCELED), without waiting for the answer", async () => {
  await ensureBuilt();
  let exited = () => {};
  const gone = new Promise<void>((resolve) => {
    exited = resolve;
  });
  const hold = cluster().faults.add({
    method: "PATCH",
    path: "/api/v1/namespaces/default/configmaps/sigterm-snapshot",
    holdUntil: gone,
  });
  try {
    const run = spawnSnapshot(cluster().kubeconfigFor("admin"), ["-o", "cm://default/sigterm-snapshot"], {
      AICR_AGENT_MODE: "true",
      NODE_NAME: "gpu-node-1",
      AICR_HOST_ROOT: H100_ROOT,
      PATH: `${H100_BIN}:${process.env.PATH}`,
    });
    await until(() => hold.fired > 0, "the agent's held ConfigMap write", 60_000);
    run.proc.kill("SIGTERM");
    const r = await run.done;
    expect(r.code, r.stderr).toBe(9);
    expect(r.stderr).toContain(`"code":"CANCELED"`);
  } finally {
    exited();
    hold.remove();
  }
}, 90_000);
