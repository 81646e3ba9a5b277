import { AicrError } from "../core/errors.ts";
import { askYesNo } from "../legacy/confirm.ts";
import { checkRunIds, deleteRuns, deleteRunsDocument, deleteVerdict } from "../runs/delete.ts";
import { defineAicrCommand } from "./_define.ts";
import { deleteArgs, deleteConsent } from "./_delete-flags.ts";
import { textOrJson, textOrJsonArg } from "./_output.ts";
import { allNamespacesArg, runsScope } from "./_runs-scope.ts";

/** aicr runs delete: removes stale runs by their anchor (UID-pinned), the garbage collector takes the rest. */
export default defineAicrCommand({
  name: "delete",
  group: "runs",
  announceRun: false,
  examples: [
    "aicr runs delete 20260101-120000-0123456789abcdef -n gpu-operator --dry-run",
    "aicr runs delete 20260101-120000-0123456789abcdef -n gpu-operator --yes -o json",
  ],
  transport: "remote",
  args: {
    run: {
      type: "positional",
      description: "Run ID(s) to delete, one or more (see aicr runs list)",
      valueHint: "run-id…",
      required: false,
      variadic: true,
    },
    "all-namespaces": allNamespacesArg,
    ...deleteArgs,
    force: { type: "boolean", description: "Also delete a run whose Job is still active" },
    output: textOrJsonArg("json: print the plan (dry run) or the receipt on stdout"),
  },
  async run(ctx, flags) {
    const ids = checkRunIds(flags.positionals);
    const output = textOrJson(flags, "pass -o json for the plan or receipt on stdout, or omit -o");
    const scope = runsScope(flags, ctx.env);
    const { dryRun, yes } = deleteConsent(flags);
    const client = await ctx.transport.connect();
    if (!client) throw new AicrError("INTERNAL", "the remote transport returned no cluster client");
    const result = await deleteRuns(client, {
      ids,
      scope,
      dryRun,
      yes,
      force: flags.bool("force"),
      log: ctx.log,
      signal: ctx.signal,
      confirm: (runs, objects) =>
        askYesNo(
          `Delete ${runs} run(s) (${objects} object(s); the garbage collector takes the rest)? [y/N] `,
          ctx.signal,
        ),
    });
    if (output === "json")
      process.stdout.write(`${JSON.stringify(deleteRunsDocument(result, dryRun), null, 2)}\n`);
    const failure = deleteVerdict(result);
    if (failure) throw failure;
    if (result.stage === "receipt")
      ctx.log.info(`deleted ${ids.length} run(s); the garbage collector removes what their anchors owned`);
  },
});
