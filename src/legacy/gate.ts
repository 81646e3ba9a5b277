/**
 * The permission gate, run before anything is read: SelfSubjectAccessReviews for exactly the
 * reads and deletes this cleanup makes, every missing one reported at once. Reviews persist nothing.
 */
import { AicrError } from "../core/errors.ts";
import type { AccessCheck, KubeClient } from "../kube/client.ts";
import { CLUSTER_TARGETS, type LegacyTarget, NAMESPACED_TARGETS } from "./names.ts";
import type { Scope } from "./types.ts";

export interface GateCheck extends AccessCheck {
  /** A missing "delete" only matters when something will be deleted. */
  need: "read" | "delete";
}

export interface GateOptions {
  scope: Scope;
  includeConfigMaps: boolean;
}

const check = (
  verb: string,
  where: { target: LegacyTarget; namespace?: string; name?: string },
): GateCheck => ({
  verb,
  group: where.target.group,
  resource: where.target.resource,
  ...(where.namespace ? { namespace: where.namespace } : {}),
  ...(where.name ? { name: where.name } : {}),
  need: verb === "delete" ? "delete" : "read",
});

/** The access reviews for a scope, in a stable order. Pure. */
export function requiredChecks(options: GateOptions): GateCheck[] {
  const deletable = (t: LegacyTarget): boolean => t.kind !== "ConfigMap" || options.includeConfigMaps;
  const checks: GateCheck[] = [];
  for (const t of CLUSTER_TARGETS) {
    checks.push(check("get", { target: t, name: t.name }), check("delete", { target: t, name: t.name }));
  }
  const { scope } = options;
  if (scope.allNamespaces) {
    const listed = new Set<string>();
    for (const t of NAMESPACED_TARGETS) {
      if (!listed.has(t.resource)) checks.push(check("list", { target: t }));
      listed.add(t.resource);
      if (deletable(t)) checks.push(check("delete", { target: t, name: t.name }));
    }
    return checks;
  }
  for (const namespace of scope.namespaces) {
    for (const t of NAMESPACED_TARGETS) {
      checks.push(check("get", { target: t, namespace, name: t.name }));
      if (deletable(t)) checks.push(check("delete", { target: t, namespace, name: t.name }));
    }
  }
  return checks;
}

/** `cannot "delete" jobs.batch "aicr" (namespace "gpu-operator")`, the form the report lists. */
export function describeCheck(c: AccessCheck): string {
  const resource = `${c.resource}${c.subresource ? `/${c.subresource}` : ""}${c.group ? `.${c.group}` : ""}`;
  const name = c.name ? ` ${JSON.stringify(c.name)}` : "";
  const where = c.namespace ? `namespace ${JSON.stringify(c.namespace)}` : "cluster-wide";
  return `cannot ${JSON.stringify(c.verb)} ${resource}${name} (${where})`;
}

const CONCURRENCY = 16;

/** Every check's answer; at most 16 reviews in flight. */
async function reviewAll(client: KubeClient, checks: GateCheck[]): Promise<boolean[]> {
  const answers: boolean[] = new Array(checks.length).fill(false);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < checks.length) {
      const i = next++;
      const { need: _need, ...attributes } = checks[i] as GateCheck;
      answers[i] = (await client.review(attributes)).allowed;
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, checks.length) }, worker));
  return answers;
}

export interface GateResult {
  /** Missing deletes when nothing will be deleted (dry run): worth a warning, not a failure. */
  missingDeletes: GateCheck[];
}

/**
 * Throws UNAUTHORIZED listing every missing permission. With `dryRun`, only reads are required and
 * the missing deletes are returned for a warning.
 */
export async function runGate(
  client: KubeClient,
  options: GateOptions & { dryRun: boolean },
): Promise<GateResult> {
  const checks = requiredChecks(options);
  const answers = await reviewAll(client, checks);
  const missing = checks.filter((_, i) => !answers[i]);
  const fatal = options.dryRun ? missing.filter((c) => c.need === "read") : missing;
  if (fatal.length > 0) {
    const lines = fatal.map((c) => `  the caller (your kubeconfig identity) ${describeCheck(c)}`);
    throw new AicrError("UNAUTHORIZED", `missing required permissions:\n${lines.join("\n")}`, {
      remedy:
        "ask a cluster admin to grant these (check one with `kubectl auth can-i <verb> <resource> -n <namespace>`), or narrow the scope with -n; nothing was read or deleted",
      context: { missing: fatal.map(describeCheck) },
    });
  }
  return { missingDeletes: missing.filter((c) => c.need === "delete") };
}
