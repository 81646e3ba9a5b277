import { AicrError } from "../core/errors.ts";
import { writeNewDirectory } from "../core/files.ts";
import { INPUT_LIMITS, readInputText } from "../core/input-file.ts";
import { checkRbacDir, writeAgentRbac } from "../rbac/write.ts";
import { DEFAULT_VALIDATE_NAMESPACE } from "../validate/options.ts";
import { renderValidateRbac } from "../validate/rbac-render.ts";
import { parseRecipe } from "../validate/recipe.ts";
import { resolveNamespace } from "./_args.ts";
import { defineAicrCommand } from "./_define.ts";
import { textOrJson, textOrJsonArg } from "./_output.ts";
import { badFlag } from "./_parse.ts";

/** aicr render-rbac <sa>: validate → render (pure) → write a new directory → tell the operator. */
export default defineAicrCommand({
  name: "render-rbac",
  examples: [
    "aicr render-rbac irsa-agent -n gpu-operator",
    "aicr render-rbac irsa-agent -n gpu-operator --discover-network --dir rbac/",
    "aicr render-rbac irsa-agent -n gpu-operator -o json",
    "aicr render-rbac --recipe recipe.yaml -n aicr-validation --dir rbac/",
  ],
  cluster: false,
  transport: "offline",
  args: {
    "service-account": {
      type: "positional",
      // Left out with --recipe; checked in run.
      required: false,
      description: "The existing ServiceAccount the agent will run as (e.g. one annotated for IRSA)",
    },
    recipe: {
      type: "string",
      alias: "r",
      description:
        "Instead: the RBAC of aicr validate with this recipe file (what the caller needs, each check's own roles)",
      valueHint: "file",
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
    const recipePath = flags.string("recipe");
    if (recipePath !== undefined) {
      if (flags.string("service-account") !== undefined)
        throw badFlag(
          "--recipe",
          recipePath,
          "either a ServiceAccount (the agent's RBAC) or --recipe (the validator's), not both",
        );
      if (flags.bool("discover-network"))
        throw badFlag("--discover-network", "true", "an agent option: it does not apply to --recipe");
      const dir = flags.string("dir") ?? ".";
      checkRbacDir(dir);
      const text = readInputText(recipePath, {
        flag: "--recipe",
        what: "a recipe file written as YAML",
        maxBytes: INPUT_LIMITS.recipe,
      });
      const recipe = parseRecipe(text, recipePath);
      const rendered = renderValidateRbac({
        recipe,
        recipeSource: recipePath,
        namespace: flags.string("namespace") || ctx.env.AICR_NAMESPACE || DEFAULT_VALIDATE_NAMESPACE,
        runId: ctx.runId,
      });
      const path = await writeNewDirectory(dir, rendered.directory, {
        files: rendered.files,
        fileMode: 0o644,
      });
      if (output === "json")
        process.stdout.write(
          `${JSON.stringify({ directory: path, files: rendered.files.map((f) => f.file) }, null, 2)}\n`,
        );
      ctx.log.info(`wrote ${path}/ — NOTHING has been applied to any cluster`);
      ctx.log.info(
        `review caller.yaml: what the operator running aicr validate needs, instead of cluster-admin`,
      );
      return;
    }
    const serviceAccount = flags.string("service-account");
    if (serviceAccount === undefined)
      throw new AicrError(
        "INVALID_REQUEST",
        "Missing required positional argument: SERVICE-ACCOUNT (or --recipe <file>)",
        { remedy: 'run "aicr render-rbac --help" for usage' },
      );
    await writeAgentRbac({
      namespace: resolveNamespace(flags.string("namespace"), ctx.env),
      serviceAccount,
      discoverNetwork: flags.bool("discover-network"),
      runId: ctx.runId,
      dir: flags.string("dir") ?? ".",
      json: output === "json",
      log: ctx.log,
      writeStdout: (text) => void process.stdout.write(text),
    });
  },
});
