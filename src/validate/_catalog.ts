import { AicrError } from "../core/errors.ts";
import type { PolicyRule } from "../rbac/rules.ts";
import { PHASES, type Phase, type Recipe } from "./recipe.ts";

/** A rule of a check's own identity: a PolicyRule, optionally pinned to object names. */
export type CheckRule = PolicyRule & { resourceNames?: string[] };

/** A validator built into the binary (`aicr validator <name>` in its Job's pod). */
export interface ValidatorEntry {
  name: string;
  phase: Phase;
  description: string;
  /** The longest one run of the check may take (the original's catalog timeout). */
  timeoutMs: number;
  /**
   * A conformance or performance check: it runs under an identity of its own (ServiceAccount,
   * ClusterRole, and a Role in a namespace of its own that the run creates and deletes).
   */
  isolated?: boolean;
  /** It holds GPUs while it runs: such checks run one after another, never beside each other. */
  exclusive?: boolean;
  /** The CNCF AI Conformance requirement it gives evidence for, and the evidence file; none for diagnostics. */
  cncf?: { requirement: string; file: string };
  /** Cluster-wide rules of its identity (reads, but for what the recipe names). */
  clusterRules?: (recipe: Recipe) => CheckRule[];
  /** What its identity may do in its own namespace (every object it creates lives there). */
  namespaceRules?: CheckRule[];
}

const MINUTE = 60_000;
const r = (
  apiGroups: string[],
  resources: string[],
  verbs: string[],
  resourceNames?: string[],
): CheckRule => ({
  apiGroups,
  resources,
  verbs,
  ...(resourceNames ? { resourceNames } : {}),
});
const CORE = [""];
const APPS = ["apps"];
const READ = ["get", "list"];
const CRUD_OWN = ["create", "get", "list", "watch", "delete"];
const CRDS = r(["apiextensions.k8s.io"], ["customresourcedefinitions"], ["get"]);
const POD_LOGS = r(CORE, ["pods/log"], ["get"]);
const PROBE_PODS = [
  r(CORE, ["pods"], CRUD_OWN),
  POD_LOGS,
  r(["resource.k8s.io"], ["resourceclaims"], CRUD_OWN),
];

/** The names of the Secrets a recipe's expected resources list (platform-health reads only those). */
function expectedSecretNames(recipe: Recipe): string[] {
  const refs = Array.isArray(recipe.spec.componentRefs) ? (recipe.spec.componentRefs as unknown[]) : [];
  const names = new Set<string>();
  for (const ref of refs) {
    const expected = (ref as { expectedResources?: unknown })?.expectedResources;
    if (!Array.isArray(expected)) continue;
    for (const e of expected as { kind?: unknown; name?: unknown }[])
      if (e?.kind === "Secret" && typeof e.name === "string" && e.name !== "") names.add(e.name);
  }
  return [...names].sort();
}

export const VALIDATORS: readonly ValidatorEntry[] = [
  {
    name: "operator-health",
    phase: "deployment",
    timeoutMs: 5 * MINUTE,
    description: "the GPU Operator's ClusterPolicy reports ready and its operand pods are Running",
  },
  {
    name: "expected-resources",
    phase: "deployment",
    timeoutMs: 5 * MINUTE,
    description: "every GPU node advertises allocatable nvidia.com/gpu > 0, consistent with the snapshot",
  },
  {
    name: "gpu-operator-version",
    phase: "deployment",
    timeoutMs: 5 * MINUTE,
    description: "the deployed GPU Operator version satisfies Deployment.gpu-operator.version",
  },
  {
    name: "check-nvidia-smi",
    phase: "deployment",
    timeoutMs: 5 * MINUTE,
    description:
      "on each GPU node (at most 8, sampled deterministically), a pod holding one nvidia.com/gpu runs nvidia-smi; it must report the node's nvidia.com/gpu capacity",
  },
  {
    name: "nccl-all-reduce-bw",
    phase: "performance",
    timeoutMs: 30 * MINUTE,
    isolated: true,
    exclusive: true,
    description:
      "NCCL all-reduce bus bandwidth across the GPU nodes (Kubeflow Trainer TrainJob, the operator's --nccl-image) meets the recipe's nccl-all-reduce-bw constraint",
    clusterRules: () => [
      r(CORE, ["nodes"], ["list"]),
      CRDS,
      r(["networking.gke.io"], ["networks"], ["list"]),
    ],
    namespaceRules: [
      r(["trainer.kubeflow.org"], ["trainingruntimes", "trainjobs"], ["create", "get", "delete"]),
      r(CORE, ["pods"], ["get", "list"]),
      POD_LOGS,
    ],
  },
  {
    name: "gpu-operator-health",
    phase: "conformance",
    timeoutMs: 2 * MINUTE,
    isolated: true,
    description: "the GPU Operator runs, its ClusterPolicy is ready and the DCGM exporter is up (diagnostic)",
    clusterRules: () => [
      r(APPS, ["deployments"], READ),
      r(APPS, ["daemonsets"], ["get"]),
      r(["nvidia.com"], ["clusterpolicies"], ["get"]),
    ],
  },
  {
    name: "platform-health",
    phase: "conformance",
    timeoutMs: 5 * MINUTE,
    isolated: true,
    description:
      "every recipe component's namespace is Active and every expected resource it lists is healthy (diagnostic)",
    clusterRules: (recipe) => {
      const secrets = expectedSecretNames(recipe);
      return [
        r(CORE, ["namespaces"], ["get"]),
        r(APPS, ["deployments", "daemonsets", "statefulsets"], ["get"]),
        r(CORE, ["services", "configmaps"], ["get"]),
        ...(secrets.length > 0 ? [r(CORE, ["secrets"], ["get"], secrets)] : []),
      ];
    },
  },
  {
    name: "dra-support",
    phase: "conformance",
    timeoutMs: 5 * MINUTE,
    isolated: true,
    exclusive: true,
    cncf: { requirement: "dra_support", file: "dra-support.md" },
    description:
      "the DRA API is served, the NVIDIA DRA driver is healthy, ResourceSlices exist, and a pod holding a ResourceClaim sees its GPU",
    clusterRules: () => [
      r(CORE, ["pods"], ["list"]),
      r(APPS, ["deployments", "daemonsets"], ["get"]),
      r(["resource.k8s.io"], ["resourceslices"], ["list"]),
    ],
    namespaceRules: PROBE_PODS,
  },
  {
    name: "secure-accelerator-access",
    phase: "conformance",
    timeoutMs: 10 * MINUTE,
    isolated: true,
    exclusive: true,
    cncf: { requirement: "secure_accelerator_access", file: "secure-accelerator-access.md" },
    description:
      "GPU access goes only through DRA: the claim pod gets a GPU with no device-plugin limit or hostPath, a claim-less pod on its node sees none",
    clusterRules: () => [
      r(CORE, ["pods"], ["list"]),
      r(APPS, ["daemonsets"], ["list"]),
      r(["nvidia.com"], ["clusterpolicies"], ["get"]),
      r(["resource.k8s.io"], ["resourceslices"], ["list"]),
    ],
    namespaceRules: PROBE_PODS,
  },
  {
    name: "gang-scheduling",
    phase: "conformance",
    timeoutMs: 10 * MINUTE,
    isolated: true,
    exclusive: true,
    cncf: { requirement: "gang_scheduling", file: "gang-scheduling.md" },
    description: "the KAI scheduler is healthy and starts a 2-member PodGroup of DRA GPU pods together",
    clusterRules: () => [
      r(APPS, ["deployments"], ["get"]),
      r(CORE, ["pods"], ["list"]),
      CRDS,
      r(["resource.k8s.io"], ["resourceslices", "resourceclaims"], ["list"]),
    ],
    namespaceRules: [...PROBE_PODS, r(["scheduling.run.ai"], ["podgroups"], CRUD_OWN)],
  },
  {
    name: "accelerator-metrics",
    phase: "conformance",
    timeoutMs: 5 * MINUTE,
    isolated: true,
    cncf: { requirement: "accelerator_metrics", file: "accelerator-metrics.md" },
    description: "the DCGM exporter serves the required GPU metrics",
    clusterRules: () => [
      r(CORE, ["services"], ["get"]),
      r(["discovery.k8s.io"], ["endpointslices"], ["list"]),
    ],
  },
  {
    name: "ai-service-metrics",
    phase: "conformance",
    timeoutMs: 5 * MINUTE,
    isolated: true,
    cncf: { requirement: "accelerator_metrics", file: "accelerator-metrics.md" },
    description: "DCGM series reach Prometheus and the custom metrics API is served",
    clusterRules: () => [r(CORE, ["services"], READ), r(["discovery.k8s.io"], ["endpointslices"], ["list"])],
  },
  {
    name: "inference-gateway",
    phase: "conformance",
    timeoutMs: 5 * MINUTE,
    isolated: true,
    cncf: { requirement: "ai_inference", file: "inference-gateway.md" },
    description:
      "Gateway API and kgateway have an accepted class and a programmed inference Gateway with ready endpoints",
    clusterRules: () => [
      r(APPS, ["deployments"], ["list"]),
      r(CORE, ["pods"], ["list"]),
      r(["gateway.networking.k8s.io"], ["gatewayclasses", "gateways"], ["get"]),
      r(["gateway.networking.k8s.io"], ["httproutes"], ["list"]),
      CRDS,
      r(["discovery.k8s.io"], ["endpointslices"], ["list"]),
    ],
  },
  {
    name: "pod-autoscaling",
    phase: "conformance",
    timeoutMs: 10 * MINUTE,
    isolated: true,
    cncf: { requirement: "pod_autoscaling", file: "pod-autoscaling.md" },
    description: "DCGM → Prometheus → prometheus-adapter → HPA scales a Deployment up and back down",
    clusterRules: () => [
      r(CORE, ["pods"], ["list"]),
      r(["custom.metrics.k8s.io"], ["*"], ["get"]),
      // An external metric's path names no object: the authorizer reads it as a list.
      r(["external.metrics.k8s.io"], ["*"], ["get", "list"]),
    ],
    namespaceRules: [
      r(APPS, ["deployments"], CRUD_OWN),
      r(["autoscaling"], ["horizontalpodautoscalers"], [...CRUD_OWN, "update"]),
    ],
  },
  {
    name: "cluster-autoscaling",
    phase: "conformance",
    timeoutMs: 10 * MINUTE,
    isolated: true,
    exclusive: true,
    cncf: { requirement: "cluster_autoscaling", file: "cluster-autoscaling.md" },
    description: "GPU capacity grows on demand (Karpenter, else the EKS or GKE node-group autoscaler)",
    clusterRules: () => [
      r(APPS, ["deployments"], ["list"]),
      r(["karpenter.sh"], ["nodepools"], ["list"]),
      r(CORE, ["nodes"], ["list"]),
      r(CORE, ["events"], ["list"]),
      r(CORE, ["configmaps"], ["get"], ["cluster-autoscaler-status"]),
    ],
    namespaceRules: [
      r(APPS, ["deployments"], CRUD_OWN),
      r(["autoscaling"], ["horizontalpodautoscalers"], CRUD_OWN),
      r(CORE, ["pods"], ["list"]),
    ],
  },
  {
    name: "robust-controller",
    phase: "conformance",
    timeoutMs: 5 * MINUTE,
    isolated: true,
    cncf: { requirement: "robust_controller", file: "robust-operator.md" },
    description:
      "a CRD-based AI operator runs, its validating webhook has endpoints, and it rejects an invalid custom resource",
    clusterRules: () => [
      r(APPS, ["deployments"], ["get"]),
      r(CORE, ["pods"], ["list"]),
      r(["admissionregistration.k8s.io"], ["validatingwebhookconfigurations"], ["list"]),
      r(["discovery.k8s.io"], ["endpointslices"], ["list"]),
      CRDS,
      r(["nvidia.com"], ["dynamographdeployments", "dynamocomponentdeployments"], ["list"]),
    ],
    namespaceRules: [
      r(["nvidia.com"], ["dynamographdeployments"], ["create", "delete"]),
      r(["trainer.kubeflow.org"], ["trainjobs"], ["create", "delete"]),
    ],
  },
];

/** The planned conformance and performance checks (isolated, not withheld), as catalog entries. */
export function isolatedEntries(checks: readonly PlannedCheck[]): ValidatorEntry[] {
  return checks.flatMap((c) => {
    const e = findValidator(c.name);
    return !c.skipped && e?.isolated ? [e] : [];
  });
}

/**
 * The run's default --timeout for a plan: 5 minutes, and with conformance or performance checks enough
 * for each to use its own limit — the GPU-holding ones run one after another, the rest beside them.
 */
export function defaultTimeoutMs(checks: readonly PlannedCheck[], base: number): number {
  const entries = isolatedEntries(checks);
  if (entries.length === 0) return base;
  const chain = entries.filter((e) => e.exclusive).reduce((t, e) => t + e.timeoutMs + 30_000, 0);
  const beside = Math.max(0, ...entries.filter((e) => !e.exclusive).map((e) => e.timeoutMs + 30_000));
  return base + Math.max(chain, beside);
}

/** Every check of a phase, in catalog order. */
export const checksOfPhase = (phase: Phase): ValidatorEntry[] => VALIDATORS.filter((v) => v.phase === phase);

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
  for (const phase of PHASES)
    (recipe.spec.validation?.[phase]?.constraints ?? []).forEach((c, i) => {
      // A plain name is the check that reads it: it must be one of this phase's.
      if (c.name.includes(".")) return;
      const entry = findValidator(c.name);
      if (!entry || entry.phase !== phase)
        offenders.push(
          `spec.validation.${phase}.constraints[${i}].name: "${c.name}" is not a ${phase} check (its checks: ${checksOfPhase(
            phase,
          )
            .map((v) => v.name)
            .join(", ")})`,
        );
    });
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
  /** An isolated check: the namespace the run made for it, where everything it creates lives. */
  testNamespace: "AICR_TEST_NAMESPACE",
  /** An isolated check: the image its probe pods run (the run's own). */
  probeImage: "AICR_PROBE_IMAGE",
  /** An isolated check: its time limit in milliseconds. */
  checkTimeoutMs: "AICR_CHECK_TIMEOUT_MS",
  /** An isolated check: --node-selector and --toleration for its probe pods (JSON). */
  probePlacement: "AICR_PROBE_PLACEMENT",
  /** nccl-all-reduce-bw: the operator's NCCL test image (--nccl-image). */
  ncclImage: "AICR_NCCL_IMAGE",
  /** An isolated check: the labels of everything it creates (the run's and its own; JSON). */
  labels: "AICR_CHECK_LABELS",
  /** Scales every wait of an isolated check (default 1): the tests' way to shorten a failing case. */
  waitScale: "AICR_CHECK_WAIT_SCALE",
} as const;
