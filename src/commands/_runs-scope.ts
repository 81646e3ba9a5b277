import { AicrError } from "../core/errors.ts";
import { dns1123LabelProblems } from "../core/names.ts";
import type { RunsScope } from "../runs/types.ts";
import { type KubeconfigFlags, resolveNamespace } from "./_args.ts";
import type { BooleanFlag } from "./_flag-spec.ts";

/** `-A` for every namespace, also declared once for both runs verbs. */
export const allNamespacesArg = {
  type: "boolean",
  alias: "A",
  description: "Look in every namespace (cluster-scoped run objects are always read)",
} as const satisfies BooleanFlag;

/** -n (or its defaults) or -A, checked before any request. */
export function runsScope(
  args: KubeconfigFlags & { namespace?: string | undefined; "all-namespaces"?: boolean | undefined },
  env: Readonly<Record<string, string | undefined>>,
): RunsScope {
  if (args["all-namespaces"]) {
    if (args.namespace) {
      throw new AicrError(
        "INVALID_REQUEST",
        `--all-namespaces and -n ${JSON.stringify(args.namespace)} were both given`,
        {
          remedy: "pass either -A or -n <namespace>",
          context: { field: "--namespace", value: args.namespace },
        },
      );
    }
    return { allNamespaces: true };
  }
  const namespace = resolveNamespace(args.namespace, env, args);
  const problems = dns1123LabelProblems(namespace);
  if (problems.length > 0) {
    throw new AicrError(
      "INVALID_REQUEST",
      `invalid namespace ${JSON.stringify(namespace)}: it ${problems.join("; ")}`,
      {
        remedy: "pass an existing namespace's name: lower-case letters, digits and '-'",
        context: { field: "--namespace", value: namespace },
      },
    );
  }
  return { allNamespaces: false, namespace };
}
