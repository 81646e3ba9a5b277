import { defineAicrCommand } from "./_define.ts";
import { nodeArgs, runNodeSnapshot } from "./_node.ts";

/**
 * aicr agent — internal, hidden from help: the agent inside its Job's pod collects its node and
 * writes the snapshot ConfigMap with the pod's ServiceAccount. The Job runs `aicr snapshot -o cm://…`
 * with AICR_AGENT_MODE=true (the contract with earlier images); cli.ts routes that here.
 */
export default defineAicrCommand({
  name: "agent",
  transport: "in-cluster",
  args: nodeArgs,
  run: (ctx, flags) => runNodeSnapshot(ctx, flags, (text) => void process.stdout.write(text)),
});
