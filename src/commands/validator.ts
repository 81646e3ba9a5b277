import { finishVerdict, runValidatorCheck } from "../validate/validator/run.ts";
import { defineAicrCommand } from "./_define.ts";

/**
 * aicr validator <check> — internal, hidden from help: one built-in validator inside its Job's pod,
 * reading the cluster with the pod's ServiceAccount; the exit code is the verdict.
 */
export default defineAicrCommand({
  name: "validator",
  transport: "in-cluster",
  args: {
    check: { type: "positional", description: "The built-in validator to run", required: true },
  },
  async run(ctx, flags) {
    const client = await ctx.transport.connect();
    if (!client) throw new Error("the in-cluster transport always yields a client");
    const writeStdout = (text: string) => void process.stdout.write(text);
    return finishVerdict(
      await runValidatorCheck(flags.string("check") ?? "", client, ctx.env, ctx.signal, {
        writeStdout,
        log: ctx.log,
      }),
      writeStdout,
    );
  },
});
