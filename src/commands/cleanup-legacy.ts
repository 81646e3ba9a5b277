import { AicrError } from "../core/errors.ts";
import { dns1123LabelProblems } from "../core/names.ts";
import { cleanupLegacy, verdict } from "../legacy/cleanup.ts";
import { askYesNo } from "../legacy/confirm.ts";
import { toJson } from "../legacy/report.ts";
import type { Scope } from "../legacy/types.ts";
import { resolveNamespace } from "./_args.ts";
import { defineAicrCommand } from "./_define.ts";
import { deleteArgs, deleteConsent } from "./_delete-flags.ts";
import type { Flags } from "./_flags.ts";
import { textOrJson, textOrJsonArg } from "./_output.ts";

const invalid = (message: string, detail: { remedy: string; context: Record<string, unknown> }): AicrError =>
  new AicrError("INVALID_REQUEST", message, detail);

/** -n is repeatable here, each value a namespace or a comma list of them. */
function scopeFrom(
  flags: Flags<"namespace" | "all-namespaces" | "kubeconfig" | "context">,
  env: Readonly<Record<string, string | undefined>>,
): Scope {
  const given = flags.list("namespace");
  if (flags.bool("all-namespaces")) {
    if (given.length > 0) {
      throw invalid(`--all-namespaces and -n ${JSON.stringify(given.join(","))} were both given`, {
        remedy: "pass either --all-namespaces or one or more -n <namespace>",
        context: { field: "--namespace", value: given },
      });
    }
    return { allNamespaces: true };
  }
  const kube = { kubeconfig: flags.string("kubeconfig"), context: flags.string("context") };
  const namespaces = given.length > 0 ? given : [resolveNamespace(undefined, env, kube)];
  for (const ns of namespaces) {
    const problems = dns1123LabelProblems(ns);
    if (problems.length > 0) {
      throw invalid(`invalid namespace ${JSON.stringify(ns)}: it ${problems.join("; ")}`, {
        remedy:
          "pass an existing namespace's name: lower-case letters, digits and '-' (e.g. -n gpu-operator)",
        context: { field: "--namespace", value: ns },
      });
    }
  }
  return { allNamespaces: false, namespaces };
}

/** aicr cleanup-legacy: validate flags → gate → plan (pure) → confirm → delete → receipt. */
export default defineAicrCommand({
  name: "cleanup-legacy",
  examples: [
    "aicr cleanup-legacy -n gpu-operator --dry-run",
    "aicr cleanup-legacy -n gpu-operator",
    "aicr cleanup-legacy --all-namespaces --yes -o json > receipt.json",
  ],
  transport: "remote",
  globals: { namespace: { list: true } },
  args: {
    "all-namespaces": {
      type: "boolean",
      alias: "A",
      description: "Look for the namespaced legacy objects in every namespace (instead of -n, repeatable)",
    },
    ...deleteArgs,
    force: { type: "boolean", description: "Also delete a still-active legacy Job and what it runs with" },
    "include-configmaps": {
      type: "boolean",
      description: "Also delete the legacy aicr-snapshot ConfigMap (kept by default: it may be a user's)",
    },
    output: textOrJsonArg("json: print the plan (dry run) or the receipt on stdout"),
  },
  async run(ctx, flags) {
    const output = textOrJson(flags, "pass -o json for the plan or receipt on stdout, or omit -o");
    const scope = scopeFrom(flags, ctx.env);
    const { dryRun, yes } = deleteConsent(flags);
    const client = await ctx.transport.connect();
    if (!client) throw new AicrError("INTERNAL", "the remote transport returned no cluster client");
    ctx.log.info(`cluster ${client.server} (credentials from ${client.origin})`);

    const result = await cleanupLegacy(client, {
      scope,
      dryRun,
      yes,
      force: flags.bool("force"),
      includeConfigMaps: flags.bool("include-configmaps"),
      signal: ctx.signal,
      log: ctx.log,
      confirm: (count) => askYesNo(`Delete ${count} object(s)? [y/N] `, ctx.signal),
    });
    if (output === "json") {
      const doc = toJson(result.receipt, { runId: ctx.runId, dryRun, stage: result.stage });
      process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    }
    const failure = verdict(result.receipt, ctx.signal);
    if (failure) throw failure;
  },
});
