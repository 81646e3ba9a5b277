import { AicrError } from "../core/errors.ts";
import type { PolicyRule } from "../rbac/rules.ts";
import { PHASES, type Phase, type Recipe } from "./recipe.ts";

/** A validator built into the binary (`aicr validator <name>` in its Job's pod). */
export interface ValidatorEntry {
  name: string;
  phase: Phase;
  description: string;
}

export const VALIDATORS: readonly ValidatorEntry[] = [
  {
    name: "operator-health",
    phase: "deployment",
    description: "the GPU Operator's ClusterPolicy reports ready and its operand pods are Running",
  },
  {
    name: "expected-resources",
    phase: "deployment",
    description: "every GPU node advertises allocatable nvidia.com/gpu > 0, consistent with the snapshot",
  },
  {
    name: "gpu-operator-version",
    phase: "deployment",
    description: "the deployed GPU Operator version satisfies Deployment.gpu-operator.version",
  },
  {
    name: "check-nvidia-smi",
    phase: "deployment",
    description:
      "on each GPU node (at most 8, sampled deterministically), a pod holding one nvidia.com/gpu runs nvidia-smi; it must report the node's nvidia.com/gpu capacity",
  },
];

/** The validator that runs one pod per GPU node instead of one Job. */
export const NVIDIA_SMI_CHECK = "check-nvidia-smi";
/** check-nvidia-smi runs on at most this many GPU nodes. */
export const MAX_NVIDIA_SMI_NODES = 8;

/**
 * The only cluster-wide reads the built-in validators make — never more (no secrets, no writes).
 * The two data ConfigMaps are granted by name in a Role of their own.
 */
export const VALIDATOR_CLUSTER_RULES: readonly PolicyRule[] = [
  { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list"] },
  { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
  { apiGroups: ["nvidia.com"], resources: ["clusterpolicies"], verbs: ["get", "list"] },
];

export const findValidator = (name: string): ValidatorEntry | undefined =>
  VALIDATORS.find((v) => v.name === name);

export interface PlannedCheck {
  phase: Phase;
  name: string;
  /** Withheld by --skip-check: reported skipped, never deployed. */
  skipped: boolean;
}

/**
 * The checks to run, phase by phase, after proving every declared check resolves to a built-in
 * validator of that phase and every --skip-check names a declared check. Offenders are listed all at once.
 */
export function planChecks(
  recipe: Recipe,
  options: { phases: readonly Phase[]; skip: readonly string[] },
): PlannedCheck[] {
  const offenders: string[] = [];
  const unknown: string[] = [];
  const planned: PlannedCheck[] = [];
  const declared = new Set<string>();
  for (const phase of PHASES) {
    const checks = recipe.spec.validation?.[phase]?.checks ?? [];
    checks.forEach((name, i) => {
      declared.add(name);
      const entry = findValidator(name);
      const at = `spec.validation.${phase}.checks[${i}]`;
      const withheld = options.skip.includes(name);
      // A check this build does not have may be withheld: it is reported skipped, never run.
      if (!entry && withheld) {
        if (options.phases.includes(phase)) planned.push({ phase, name, skipped: true });
      } else if (!entry) {
        offenders.push(`${at}: "${name}" is not a built-in validator`);
        unknown.push(name);
      } else if (entry.phase !== phase) offenders.push(`${at}: "${name}" belongs to phase ${entry.phase}`);
      else if (options.phases.includes(phase))
        planned.push({ phase, name, skipped: options.skip.includes(name) });
    });
  }
  for (const name of options.skip)
    if (!declared.has(name)) offenders.push(`--skip-check "${name}": the recipe declares no such check`);
  if (offenders.length > 0) {
    throw new AicrError(
      "INVALID_REQUEST",
      `${offenders.length} check(s) cannot be run:\n  ${offenders.join("\n  ")}`,
      {
        remedy: `${unknown.length > 0 ? `withhold a check this build does not have with --skip-check <name> (here: ${unknown.map((n) => `--skip-check ${n}`).join(" ")}); ` : ""}the built-in validators: ${VALIDATORS.map((v) => `${v.name} (${v.phase})`).join(", ")}`,
        context: { offenders },
      },
    );
  }
  return planned;
}

/** The env contract between a validation Job and the validator mode (see jobs/objects.ts). */
export const VALIDATOR_ENV = {
  namespace: "AICR_NAMESPACE",
  snapshotConfigMap: "AICR_SNAPSHOT_CONFIGMAP",
  recipeConfigMap: "AICR_RECIPE_CONFIGMAP",
  phase: "AICR_VALIDATOR_PHASE",
  name: "AICR_VALIDATOR_NAME",
  /** check-nvidia-smi: the node its pod runs on (downward API spec.nodeName). */
  nodeName: "AICR_NODE_NAME",
} as const;
