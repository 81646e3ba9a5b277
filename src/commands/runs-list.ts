import { AicrError } from "../core/errors.ts";
import { listRuns, runsDocument, runsText } from "../runs/list.ts";
import { defineAicrCommand } from "./_define.ts";
import { outputArg, outputFormat, render } from "./_output.ts";
import { allNamespacesArg, runsScope } from "./_runs-scope.ts";

/** aicr runs list: the runs whose objects are in the cluster (read with list calls only). */
export default defineAicrCommand({
  name: "list",
  group: "runs",
  announceRun: false,
  examples: ["aicr runs list -A", "aicr runs list -n gpu-operator -o json"],
  transport: "remote",
  args: { "all-namespaces": allNamespacesArg, output: outputArg },
  async run(ctx, flags) {
    const format = outputFormat(flags.string("output"));
    const scope = runsScope(flags, ctx.env);
    const client = await ctx.transport.connect();
    if (!client) throw new AicrError("INTERNAL", "the remote transport returned no cluster client");
    const runs = await listRuns(client, scope);
    const now = new Date();
    process.stdout.write(render(format, runsDocument(runs, now), () => runsText(runs, now)));
  },
});
