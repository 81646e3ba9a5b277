import { AicrError } from "../core/errors.ts";
import { dns1123SubdomainProblems, MAX_LABEL_LENGTH } from "../core/names.ts";

/** Default prefix for every user-settable name; the rest are fixed prefixes. */
export const NAME_BASE = "aicr";
export const CLUSTER_ROLE_PREFIX = "aicr-node-reader";
/** validate's ServiceAccount, ClusterRole and bindings: `aicr-validator-<runID>`. */
export const VALIDATOR_PREFIX = "aicr-validator";
/** Not `aicr-snapshot-`: validate names its own data ConfigMap `aicr-snapshot-<runID>`. */
export const STAGING_PREFIX = "aicr-agent-snapshot";

/**
 * `<prefix>-<runID>`, the prefix cut so the whole stays ≤ 63 characters (a Job name becomes a pod
 * label value) and trailing dashes trimmed; an empty prefix leaves the bare run ID.
 */
export function nameWithRunId(prefix: string, runId: string): string {
  if (runId === "") return prefix.replace(/-+$/, "");
  const budget = Math.max(0, MAX_LABEL_LENGTH - runId.length - 1);
  const cut = prefix.slice(0, budget).replace(/-+$/, "");
  return cut === "" ? runId : `${cut}-${runId}`;
}

export interface RunNames {
  job: string;
  /** Also the Role and RoleBinding name. */
  serviceAccount: string;
  /** Also the ClusterRoleBinding name. */
  clusterRole: string;
  stagingConfigMap: string;
}

export interface RunNameInput {
  runId: string;
  /** --job-name; empty or absent → `aicr`. */
  jobPrefix?: string | undefined;
  /** --service-account-name used as a prefix; empty or absent → `aicr`. */
  serviceAccountPrefix?: string | undefined;
}

function checked(flag: string, prefix: string, name: string, names: string): string {
  const problems = dns1123SubdomainProblems(name);
  if (name.length > MAX_LABEL_LENGTH) problems.push(`must be no more than ${MAX_LABEL_LENGTH} characters`);
  if (problems.length > 0) {
    throw new AicrError(
      "INVALID_REQUEST",
      `invalid ${flag} ${JSON.stringify(prefix)}: the ${names} name would be ${JSON.stringify(name)}, which ${problems.join("; ")}`,
      {
        remedy: `pass a prefix of lower-case letters, digits, '-' and '.', starting with a letter or digit (e.g. "aicr")`,
        context: { field: flag, value: prefix, resolvedName: name },
      },
    );
  }
  return name;
}

/** Every run-scoped name, validated before any request is made. */
export function runNames(input: RunNameInput): RunNames {
  const jobPrefix = input.jobPrefix || NAME_BASE;
  const saPrefix = input.serviceAccountPrefix || NAME_BASE;
  return {
    job: checked("--job-name", jobPrefix, nameWithRunId(jobPrefix, input.runId), "Job"),
    serviceAccount: checked(
      "--service-account-name",
      saPrefix,
      nameWithRunId(saPrefix, input.runId),
      "ServiceAccount, Role and RoleBinding",
    ),
    clusterRole: nameWithRunId(CLUSTER_ROLE_PREFIX, input.runId),
    stagingConfigMap: nameWithRunId(STAGING_PREFIX, input.runId),
  };
}

export const stagingConfigMapName = (runId: string): string => nameWithRunId(STAGING_PREFIX, runId);

/**
 * One node's objects in a fleet run (`aicr snapshot --all-nodes`): `<prefix>-<runID>-<index>` for its
 * Job and `aicr-agent-snapshot-<runID>-<index>` for its staging ConfigMap, each within 63 characters
 * (the prefix is cut, never the run ID or the index). Validated like runNames.
 */
export function fleetNodeNames(
  input: RunNameInput,
  index: number,
): { job: string; stagingConfigMap: string } {
  const jobPrefix = input.jobPrefix || NAME_BASE;
  const suffix = `${input.runId}-${index}`;
  return {
    job: checked("--job-name", jobPrefix, nameWithRunId(jobPrefix, suffix), "Job"),
    stagingConfigMap: nameWithRunId(STAGING_PREFIX, suffix),
  };
}
