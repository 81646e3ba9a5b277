/**
 * `aicr render-rbac --recipe <file>`: the RBAC of a validation with that recipe, for review before a
 * run, computed exactly as the run computes it (nothing applied, nothing read from a cluster):
 * - `caller.yaml`: a ClusterRole with everything the operator running `aicr validate -s <snapshot>`
 *   needs — what the gate asks of the caller, and every rule the run grants (Kubernetes lets no one
 *   grant what it does not hold, unless it may escalate and bind);
 * - `validator.yaml`: the deployment checks' shared ClusterRole;
 * - `<check>.yaml` per conformance or performance check: its own ClusterRole and Role, as the run
 *   creates them for the run ID of this invocation.
 * Pure.
 */
import { stringify } from "yaml";
import type { NewFile } from "../core/files.ts";
import { LABEL, LABEL_VALUE } from "../core/labels.ts";
import type { AccessCheck } from "../kube/client.ts";
import { type CheckRule, isolatedEntries, planChecks, VALIDATOR_CLUSTER_RULES } from "./_catalog.ts";
import { callerChecks, isolatedCallerChecks, planIsolated } from "./jobs/_gate.ts";
import { buildCheckIdentity, type Ctx, checkJobName, validationNames } from "./jobs/_objects.ts";
import { PHASES, type Recipe } from "./recipe.ts";

export const VALIDATE_RBAC_DIR_PREFIX = "validate-rbac-";
export const CALLER_ROLE_NAME = "aicr-validate-caller";

export interface RenderValidateRbacInput {
  recipe: Recipe;
  recipeSource: string;
  namespace: string;
  runId: string;
}

const doc = (object: unknown): string => stringify(object, { lineWidth: 0 });

const comment = (lines: readonly string[]): string => `${lines.map((l) => `# ${l}`.trimEnd()).join("\n")}\n`;

/** Rules merged by group and resource, each verb once, sorted: a stable, readable union. */
export function mergeRules(rules: readonly CheckRule[]): CheckRule[] {
  const byKey = new Map<string, { group: string; resource: string; names?: string[]; verbs: Set<string> }>();
  for (const r of rules)
    for (const group of r.apiGroups)
      for (const resource of r.resources) {
        const names = r.resourceNames?.length ? [...r.resourceNames].sort() : undefined;
        const key = `${group}\u0000${resource}\u0000${names?.join(",") ?? ""}`;
        const entry = byKey.get(key) ?? {
          group,
          resource,
          ...(names ? { names } : {}),
          verbs: new Set<string>(),
        };
        for (const v of r.verbs) entry.verbs.add(v);
        byKey.set(key, entry);
      }
  return [...byKey.values()]
    .sort((a, b) => `${a.group}/${a.resource}`.localeCompare(`${b.group}/${b.resource}`))
    .map((e) => ({
      apiGroups: [e.group],
      resources: [e.resource],
      verbs: [...e.verbs].sort(),
      ...(e.names ? { resourceNames: e.names } : {}),
    }));
}

const accessRule = (c: AccessCheck): CheckRule => ({
  apiGroups: [c.group],
  resources: [c.subresource ? `${c.resource}/${c.subresource}` : c.resource],
  verbs: [c.verb],
});

export function renderValidateRbac(input: RenderValidateRbacInput): { directory: string; files: NewFile[] } {
  const directory = `${VALIDATE_RBAC_DIR_PREFIX}${input.runId}`;
  const labels = { [LABEL.managedBy]: LABEL_VALUE.app, [LABEL.name]: LABEL_VALUE.app };
  const ctx: Ctx = { names: validationNames(input.runId), namespace: input.namespace, labels };
  const owner = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    name: ctx.names.rbac,
    uid: "<the run's>",
  };
  const checks = planChecks(input.recipe, { phases: [...PHASES], skip: [] });
  const isolated = isolatedEntries(checks);
  const plans = planIsolated(checks, input.recipe, input.runId);
  const callerRules = mergeRules([
    ...[...callerChecks(input.namespace), ...isolatedCallerChecks(plans)].map(accessRule),
    ...VALIDATOR_CLUSTER_RULES,
    { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
    ...plans.flatMap((p) => [...p.clusterRules, ...p.namespaceRules]),
    // check-nvidia-smi's node list, and the validation namespace's own read
    { apiGroups: [""], resources: ["nodes"], verbs: ["list"] },
    { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "create"] },
  ]);
  const files: NewFile[] = [
    {
      file: "caller.yaml",
      content:
        comment([
          `What the operator running \`aicr validate -r ${input.recipeSource} -s <snapshot> -n ${input.namespace}\` needs: the`,
          "gate's checks and every rule the run grants to its checks (no one may grant what it does not hold).",
          "A live capture (no -s) also needs the snapshot agent's permissions (aicr render-rbac <sa>).",
          "Bind it to the operator: kubectl create clusterrolebinding aicr-validate-caller --clusterrole aicr-validate-caller --user <name>",
        ]) +
        doc({
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          metadata: { name: CALLER_ROLE_NAME, labels },
          rules: callerRules,
        }),
    },
    {
      file: "validator.yaml",
      content:
        comment([
          "The deployment checks' shared identity: read-only, cluster-wide (the run's anchor ClusterRole).",
        ]) +
        doc({
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          metadata: { name: ctx.names.rbac, labels },
          rules: VALIDATOR_CLUSTER_RULES,
        }),
    },
    ...isolated.map((entry) => {
      const { rest } = buildCheckIdentity(ctx, { entry, runId: input.runId, recipe: input.recipe }, owner);
      const roles = rest.filter((o) => o.kind === "ClusterRole" || o.kind === "Role");
      return {
        file: `${entry.name}.yaml`,
        content:
          comment([
            `Check ${entry.name} (${entry.phase}): its own ServiceAccount ${checkJobName(entry.name, input.runId)} in ${input.namespace}.`,
            "Cluster-wide: the ClusterRole below. In the namespace the run makes for it (same name): the Role below.",
          ]) + roles.map((o) => doc(o)).join("---\n"),
      };
    }),
  ];
  return { directory, files };
}
