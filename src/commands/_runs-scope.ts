import { AicrError } from "../core/errors.ts";
import { dns1123LabelProblems } from "../core/names.ts";
import type { RunsScope } from "../runs/types.ts";
import { resolveNamespace } from "./_args.ts";
import type { BooleanFlag } from "./_flag-spec.ts";
import type { Flags } from "./_flags.ts";

/** `-A` for every namespace, also declared once for both runs verbs. */
export const allNamespacesArg = {
  type: "boolean",
  alias: "A",
  description: "Look in every namespace (cluster-scoped run objects are always read)",
} as const satisfies BooleanFlag;

/** -n (or its defaults) or -A, checked before any request. */
export function runsScope(
  flags: Flags<"namespace" | "all-namespaces" | "kubeconfig" | "context">,
  env: Readonly<Record<string, string | undefined>>,
): RunsScope {
  const given = flags.string("namespace");
  if (flags.bool("all-namespaces")) {
    if (given) {
      throw new AicrError(
        "INVALID_REQUEST",
        `--all-namespaces and -n ${JSON.stringify(given)} were both given`,
        {
          remedy: "pass either -A or -n <namespace>",
          context: { field: "--namespace", value: given },
        },
      );
    }
    return { allNamespaces: true };
  }
  const kube = { kubeconfig: flags.string("kubeconfig"), context: flags.string("context") };
  const namespace = resolveNamespace(given, env, kube);
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
