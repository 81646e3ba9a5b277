import { AicrError } from "../core/errors.ts";
import {
  checkFileDestination,
  checkNewDirectoryDestination,
  checkOutputsApart,
  type NamedPath,
} from "../core/files.ts";
import { INPUT_LIMITS, readCaFile } from "../core/input-file.ts";
import { runNames } from "../run/names.ts";
import { type ConfigMapRef, isConfigMapUri, parseConfigMapUri } from "../snapshot/cm-uri.ts";
import { parseSource as documentSource } from "../snapshot/source.ts";
import {
  CAPTURE_JOB_PREFIX,
  DEFAULT_VALIDATE_NAMESPACE,
  DEFAULT_VALIDATE_TIMEOUT_MS,
  type PodPlacement,
  type Source,
  VALIDATE_COMMAND,
  type ValidateOptions,
} from "../validate/options.ts";
import { PHASES, type Phase } from "../validate/recipe.ts";
import { badFlag, parseDuration, parseKeyValue, parseToleration } from "./_parse.ts";
import { resolveSnapshotOptions } from "./_snapshot-flags.ts";

/** The raw inputs of `aicr validate` (the remote side). */
export interface ValidateFlags {
  recipe?: string | undefined;
  /** --kubeconfig, only so that no report replaces it. */
  kubeconfig?: string | undefined;
  snapshot?: string | undefined;
  /** A PEM CA trusted for an https:// --recipe or --snapshot. */
  caFile?: string | undefined;
  namespace?: string | undefined;
  phases: string[];
  skipChecks: string[];
  failOnError?: boolean | undefined;
  failFast?: boolean | undefined;
  noCluster?: boolean | undefined;
  allowMissing?: boolean | undefined;
  output?: string | undefined;
  format?: string | undefined;
  junit?: string | undefined;
  image?: string | undefined;
  timeout?: string | undefined;
  noCleanup?: boolean | undefined;
  /** The live capture's agent: exact-if-exists, else a name prefix. */
  serviceAccountName?: string | undefined;
  /** The live capture's Job prefix (default aicr-validate). */
  jobName?: string | undefined;
  /** The capture agent and the validator pods. */
  nodeSelectors?: string[] | undefined;
  tolerations?: string[] | undefined;
  imagePullSecrets?: string[] | undefined;
  /** The live capture's agent requests one GPU. */
  requireGpu?: boolean | string | undefined;
  /** Cloud node-pool dumps merged into the live capture (never into a given --snapshot). */
  okeAddons?: string | undefined;
  aksGpuPools?: string | undefined;
  gkeGpuPools?: string | undefined;
  /** nccl-all-reduce-bw's test image: the operator's, never a default. */
  ncclImage?: string | undefined;
  /** Where the CNCF evidence files go: a new directory. */
  cncfSubmission?: string | undefined;
}

/** Any run ID has this length (run/run-id.ts): names are checked with it before the run has one. */
const SAMPLE_RUN_ID = "00000000-000000-0000000000000000";

const SECRET_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** --node-selector, --toleration, --image-pull-secret: the same forms as aicr snapshot's. */
export function parsePlacement(
  f: Pick<ValidateFlags, "nodeSelectors" | "tolerations" | "imagePullSecrets">,
): PodPlacement {
  const selectors = f.nodeSelectors ?? [];
  const tolerations = f.tolerations ?? [];
  const secrets = f.imagePullSecrets ?? [];
  for (const s of secrets)
    if (!SECRET_NAME.test(s) || s.length > 253)
      throw badFlag("--image-pull-secret", s, "a Secret name (DNS-1123 subdomain)");
  return {
    nodeSelector:
      selectors.length > 0
        ? Object.fromEntries(selectors.map((v) => parseKeyValue("--node-selector", v)))
        : undefined,
    tolerations:
      tolerations.length > 0 ? tolerations.map((t) => parseToleration("--toleration", t)) : undefined,
    imagePullSecrets: [...new Set(secrets)],
  };
}

/** -o cm://<ns>/<name>: only in the run's namespace (which the run ensures), never with -t table or --no-cluster. */
function reportConfigMap(output: string, namespace: string, f: ValidateFlags): ConfigMapRef {
  const ref = parseConfigMapUri(output);
  if (ref.namespace !== namespace) {
    throw new AicrError(
      "INVALID_REQUEST",
      `invalid --output ${JSON.stringify(output)}: a report ConfigMap must be in the run's namespace "${namespace}"`,
      {
        remedy: `write to cm://${namespace}/${ref.name}, or pass -n ${ref.namespace}`,
        context: { field: "--output", value: output },
      },
    );
  }
  if (f.noCluster)
    throw badFlag("--output", output, "a file path or stdout with --no-cluster (cm:// needs a cluster)");
  if (f.format === "table")
    throw badFlag("--format", "table", "json with a cm:// output (the ConfigMap holds the CTRF JSON)");
  for (const [flag, value] of [
    ["--recipe", f.recipe],
    ["--snapshot", f.snapshot],
  ] as const) {
    if (value && isConfigMapUri(value)) {
      const src = parseConfigMapUri(value);
      if (src.namespace === ref.namespace && src.name === ref.name)
        throw badFlag("--output", output, `a ConfigMap other than ${flag}'s (the report would replace it)`);
    }
  }
  return ref;
}

/** --service-account-name, --job-name and --require-gpu shape the live capture: with -s there is none. */
function refuseCaptureOnly(f: ValidateFlags): void {
  const given: [string, unknown][] = [
    ["--service-account-name", f.serviceAccountName],
    ["--job-name", f.jobName],
    ["--require-gpu", f.requireGpu === undefined || f.requireGpu === false ? undefined : f.requireGpu],
    ["--oke-addons", f.okeAddons],
    ["--aks-gpu-pools", f.aksGpuPools],
    ["--gke-gpu-pools", f.gkeGpuPools],
  ];
  const set = given.filter(([, v]) => v !== undefined && v !== "").map(([flag]) => flag);
  if (set.length === 0) return;
  throw new AicrError(
    "INVALID_REQUEST",
    `${set.join(", ")} shape${set.length === 1 ? "s" : ""} the live capture, and --snapshot means there is none`,
    {
      remedy: `drop ${set.join(", ")}, or drop --snapshot to capture a live snapshot`,
      context: { field: set[0] },
    },
  );
}

/** A file path, cm://<namespace>/<name> or an https:// URL (checked now: no request is sent). */
export function parseSource(flag: string, value: string): Source {
  if (value === "") throw badFlag(flag, value, "a file path, cm://<namespace>/<name> or an https:// URL");
  return documentSource(value, { flag, what: flag.slice(2), command: VALIDATE_COMMAND });
}

const CA_INPUT = {
  flag: "--ca-file",
  what: "a PEM CA certificate",
  maxBytes: INPUT_LIMITS.pem,
  remedy: "pass a readable PEM file with the CA certificate that issued the https:// server's certificate",
};

/** --ca-file: read now (before any request), and only beside an https:// --recipe or --snapshot. */
function readValidateCa(caFile: string | undefined, sources: (Source | undefined)[]): string | undefined {
  if (caFile === undefined) return undefined;
  if (!sources.some((s) => s?.kind === "url")) {
    throw new AicrError(
      "INVALID_REQUEST",
      "--ca-file trusts the server of an https:// --recipe or --snapshot, and neither is one",
      { remedy: "drop --ca-file, or pass -r/-s https://…", context: { field: "--ca-file", value: caFile } },
    );
  }
  return readCaFile(caFile, CA_INPUT);
}

/** Every flag checked before the first request or file read; an error names the flag and its value. */
export function resolveValidateOptions(
  f: ValidateFlags,
  env: Readonly<Record<string, string | undefined>>,
  stdoutIsTty: boolean,
): ValidateOptions {
  if (!f.recipe) {
    throw new AicrError("INVALID_REQUEST", "missing --recipe: validate needs a recipe to check against", {
      remedy: "pass -r <recipe.yaml>, -r cm://<namespace>/<name> or -r https://… (see examples/recipe.yaml)",
      context: { field: "--recipe" },
    });
  }
  const recipe = parseSource("--recipe", f.recipe);
  const snapshot = f.snapshot !== undefined ? parseSource("--snapshot", f.snapshot) : undefined;
  if (f.noCluster && !snapshot) {
    throw new AicrError(
      "INVALID_REQUEST",
      "--no-cluster needs --snapshot: there is no cluster to capture one from",
      {
        remedy: "pass -s <snapshot.yaml> written earlier by aicr snapshot",
        context: { field: "--no-cluster" },
      },
    );
  }
  const phases: Phase[] = [];
  for (const p of f.phases) {
    if (p === "all") phases.push(...PHASES);
    else if ((PHASES as readonly string[]).includes(p)) phases.push(p as Phase);
    else throw badFlag("--phase", p, `one of ${PHASES.join(", ")}, all`);
  }
  const format = f.format ?? (stdoutIsTty && !f.output ? "table" : "json");
  if (format !== "json" && format !== "table") throw badFlag("--format", format, "json or table");
  const output = f.output && f.output !== "stdout" ? f.output : undefined;
  const namespace = f.namespace || env.AICR_NAMESPACE || DEFAULT_VALIDATE_NAMESPACE;
  const outputConfigMap =
    output && isConfigMapUri(output) ? reportConfigMap(output, namespace, f) : undefined;
  const placement = parsePlacement(f);
  if (snapshot) refuseCaptureOnly(f);
  const jobName = f.jobName || CAPTURE_JOB_PREFIX;
  const serviceAccountName = f.serviceAccountName || undefined;
  // Names are checked now (before any file is read), not when the capture is planned.
  if (!snapshot)
    runNames({ runId: SAMPLE_RUN_ID, jobPrefix: jobName, serviceAccountPrefix: serviceAccountName });
  const timeoutMs = f.timeout ? parseDuration("--timeout", f.timeout) : DEFAULT_VALIDATE_TIMEOUT_MS;
  const ncclImage = f.ncclImage || undefined;
  if (ncclImage && (/\s/.test(ncclImage) || ncclImage.length > 512))
    throw badFlag(
      "--nccl-image",
      ncclImage,
      "an image reference such as registry.example.com/nccl-tests:2.16.9",
    );
  const cncfSubmissionDir = f.cncfSubmission || undefined;
  if (cncfSubmissionDir) checkNewDirectoryDestination(cncfSubmissionDir, "--cncf-submission");
  // The report files are checked now: a validation's results are never made only to be lost.
  const outputPath = outputConfigMap ? undefined : output;
  if (outputPath) checkFileDestination(outputPath, "--output");
  const junitPath = f.junit || undefined;
  if (junitPath) checkFileDestination(junitPath, "--junit");
  const fileOf = (flag: string, value: string | undefined): NamedPath[] =>
    value && !isConfigMapUri(value) ? [{ flag, path: value }] : [];
  const sourceFile = (flag: string, s: Source | undefined): NamedPath[] =>
    s?.kind === "file" ? [{ flag, path: s.path }] : [];
  checkOutputsApart(
    [...fileOf("--output", outputPath), ...fileOf("--junit", junitPath)],
    [
      ...sourceFile("--recipe", recipe),
      ...sourceFile("--snapshot", snapshot),
      ...fileOf("--oke-addons", f.okeAddons),
      ...fileOf("--aks-gpu-pools", f.aksGpuPools),
      ...fileOf("--gke-gpu-pools", f.gkeGpuPools),
      ...fileOf("--kubeconfig", f.kubeconfig ?? env.KUBECONFIG?.split(":")[0]),
    ],
  );
  // The live capture is a snapshot run: its agent settings (AICR_IMAGE, AICR_OS, …) are read as
  // `aicr snapshot` reads them, and only when there is a capture to make.
  const capture = snapshot
    ? undefined
    : resolveSnapshotOptions(
        {
          namespace,
          image: f.image,
          imagePullSecrets: placement.imagePullSecrets,
          jobName,
          serviceAccountName,
          nodeSelectors: f.nodeSelectors ?? [],
          tolerations: f.tolerations ?? [],
          requireGpu: f.requireGpu,
          okeAddons: f.okeAddons,
          aksGpuPools: f.aksGpuPools,
          gkeGpuPools: f.gkeGpuPools,
          timeout: `${timeoutMs}ms`,
          noCleanup: f.noCleanup,
        },
        env,
      );
  // the CA last: every cheaper refusal comes first
  const ca = readValidateCa(f.caFile, [recipe, snapshot]);
  return {
    capture,
    recipe,
    snapshot,
    ca,
    namespace,
    phases: phases.length > 0 ? [...new Set(phases)] : [...PHASES],
    skipChecks: f.skipChecks,
    failOnError: f.failOnError ?? true,
    failFast: Boolean(f.failFast),
    noCluster: Boolean(f.noCluster),
    allowMissing: Boolean(f.allowMissing),
    outputPath,
    outputConfigMap,
    format,
    junitPath,
    image: f.image || env.AICR_VALIDATOR_IMAGE || env.AICR_IMAGE || undefined,
    timeoutMs,
    timeoutGiven: Boolean(f.timeout),
    ncclImage,
    cncfSubmissionDir,
    cleanup: !f.noCleanup,
    placement,
  };
}
