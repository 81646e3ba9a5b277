import { writeAgentRbac } from "../rbac/write.ts";
import { resolveNamespace } from "./_args.ts";
import { defineAicrCommand } from "./_define.ts";
import { textOrJson, textOrJsonArg } from "./_output.ts";

/** aicr render-rbac <sa>: validate → render (pure) → write a new directory → tell the operator. */
export default defineAicrCommand({
  name: "render-rbac",
  examples: [
    "aicr render-rbac irsa-agent -n gpu-operator",
    "aicr render-rbac irsa-agent -n gpu-operator --discover-network --dir rbac/",
    "aicr render-rbac irsa-agent -n gpu-operator -o json",
  ],
  cluster: false,
  transport: "offline",
  args: {
    "service-account": {
      type: "positional",
      description: "The existing ServiceAccount the agent will run as (e.g. one annotated for IRSA)",
    },
    "discover-network": {
      type: "boolean",
      description: "Also grant the read-only rules NetworkTopology uses (NicDevice, NicClusterPolicy)",
    },
    dir: {
      type: "string",
      description: "Parent directory for snapshot-rbac-<run-id>/ (default: .)",
      valueHint: "path",
    },
    output: textOrJsonArg("json: print a machine-readable summary on stdout"),
  },
  async run(ctx, flags) {
    const output = textOrJson(flags, "pass -o json for a machine-readable summary, or omit -o");
    await writeAgentRbac({
      namespace: resolveNamespace(flags.string("namespace"), ctx.env),
      serviceAccount: flags.string("service-account") ?? "",
      discoverNetwork: flags.bool("discover-network"),
      runId: ctx.runId,
      dir: flags.string("dir") ?? ".",
      json: output === "json",
      log: ctx.log,
      writeStdout: (text) => void process.stdout.write(text),
    });
  },
});
