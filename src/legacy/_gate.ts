/**
 * The permission gate, run before anything is read: exactly the reads and deletes this cleanup makes,
 * as checks for the one gate runner (kube/gate.ts), every missing one reported at once.
 */
import { bulletList } from "../core/errors.ts";
import type { KubeClient } from "../kube/client.ts";
import { passGate } from "../kube/gate.ts";
import type { AccessCheck } from "../kube/reviews.ts";
import { CLUSTER_TARGETS, type LegacyTarget, NAMESPACED_TARGETS } from "./_names.ts";
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
  options: GateOptions & { dryRun: boolean; signal?: AbortSignal | undefined },
): Promise<GateResult> {
  const access = requiredChecks(options).map((c) => ({
    ...c,
    required: !options.dryRun || c.need === "read",
  }));
  const { unmet } = await passGate(
    client,
    { access },
    {
      signal: options.signal,
      refusal: {
        message: (lines) => `missing required permissions:${bulletList(lines)}`,
        remedy:
          "ask a cluster admin to grant these (check one with `kubectl auth can-i <verb> <resource> -n <namespace>`), or narrow the scope with -n; nothing was read or deleted",
      },
    },
  );
  return { missingDeletes: unmet.filter((c) => c.need === "delete") };
}
