import { AicrError } from "../core/errors.ts";
import { writeNewDirectory } from "../core/files.ts";
import { renderAgentRbac } from "../rbac/render.ts";
import { resolveNamespace } from "./_args.ts";
import { defineAicrCommand } from "./_define.ts";

/** aicr render-rbac <sa>: validate → render (pure) → write a new directory → tell the operator. */
export default defineAicrCommand({
  name: "render-rbac",
  description: "Write the RBAC manifests that let an existing ServiceAccount run the agent (applies nothing)",
  transport: "offline",
  args: {
    "service-account": {
      type: "positional",
      description: "The existing ServiceAccount the agent will run as (e.g. one annotated for IRSA)",
    },
    "discover-network": {
      type: "boolean",
      description: "Also grant the mutating rules live network discovery needs",
    },
    dir: {
      type: "string",
      description: "Parent directory for snapshot-rbac-<run-id>/ (default: .)",
      valueHint: "path",
    },
    output: {
      type: "string",
      alias: "o",
      description: "json: print a machine-readable summary on stdout",
      valueHint: "json",
    },
  },
  async run(ctx, args) {
    const output = args.output ?? "text";
    if (output !== "text" && output !== "json") {
      throw new AicrError(
        "INVALID_REQUEST",
        `invalid --output ${JSON.stringify(output)}: expected "json" or "text"`,
        {
          remedy: "pass -o json for a machine-readable summary, or omit -o",
          context: { field: "--output", value: output },
        },
      );
    }
    const namespace = resolveNamespace(args.namespace, ctx.env);
    const serviceAccount = args["service-account"] ?? "";
    const rendered = renderAgentRbac({
      namespace,
      serviceAccount,
      discoverNetwork: Boolean(args["discover-network"]),
      runId: ctx.runId,
    });
    const parent = args.dir ?? ".";
    const path = await writeNewDirectory(parent, rendered.directory, { files: rendered.files });

    const { log } = ctx;
    const subject = `system:serviceaccount:${namespace}:${serviceAccount}`;
    log.info(`wrote ${path}/ — NOTHING has been applied to any cluster`);
    for (const f of rendered.files) {
      log.info(
        `  ${f.file}  ${f.kind}/${f.name}${f.namespace ? ` (namespace ${f.namespace})` : " (cluster-scoped)"}`,
      );
    }
    log.info(`review, then grant:  kubectl apply -f ${path}/`);
    log.info(`revoke later:        kubectl delete -f ${path}/`);
    log.info(`check the grant:     kubectl auth can-i --list --as ${subject} -n ${namespace}`);
    log.info(
      "trade-off: every run using this ServiceAccount shares these grants, so runs are not permission-isolated from each other",
    );
    if (args["discover-network"]) {
      log.warn("these grants include MUTATING cluster-wide rules and stay until you delete them");
    }
    if (output === "json") {
      const summary = {
        directory: path,
        runId: ctx.runId,
        namespace,
        serviceAccount,
        discoverNetwork: Boolean(args["discover-network"]),
        objects: rendered.files.map((f) => ({
          file: `${path}/${f.file}`,
          kind: f.kind,
          name: f.name,
          ...(f.namespace ? { namespace: f.namespace } : {}),
        })),
        apply: `kubectl apply -f ${path}/`,
        delete: `kubectl delete -f ${path}/`,
      };
      process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    }
  },
});
