import { AicrError } from "../core/errors.ts";
import { checkFileDestination } from "../core/files.ts";
import { isConfigMapUri, parseConfigMapUri } from "../snapshot/cm-uri.ts";
import {
  CAPTURE_JOB_PREFIX,
  DEFAULT_VALIDATE_NAMESPACE,
  DEFAULT_VALIDATE_TIMEOUT_MS,
  type Source,
  type ValidateOptions,
} from "../validate/options.ts";
import { PHASES, type Phase } from "../validate/recipe.ts";
import { badFlag, parseDuration } from "./_parse.ts";
import { resolveSnapshotOptions } from "./_snapshot-flags.ts";

/** The raw inputs of `aicr validate` (the remote side). */
export interface ValidateFlags {
  recipe?: string | undefined;
  snapshot?: string | undefined;
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
}

export function parseSource(flag: string, value: string): Source {
  if (value === "") throw badFlag(flag, value, "a file path or cm://<namespace>/<name>");
  return isConfigMapUri(value)
    ? { kind: "configmap", ref: parseConfigMapUri(value) }
    : { kind: "file", path: value };
}

/** Every flag checked before the first request or file read; an error names the flag and its value. */
export function resolveValidateOptions(
  f: ValidateFlags,
  env: Readonly<Record<string, string | undefined>>,
  stdoutIsTty: boolean,
): ValidateOptions {
  if (!f.recipe) {
    throw new AicrError("INVALID_REQUEST", "missing --recipe: validate needs a recipe to check against", {
      remedy: "pass -r <recipe.yaml> or -r cm://<namespace>/<name> (see examples/recipe.yaml)",
      context: { field: "--recipe" },
    });
  }
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
  if (output && isConfigMapUri(output))
    throw badFlag("--output", output, "a file path or stdout (cm:// is not supported for reports)");
  // The report files are checked now: a validation's results are never made only to be lost.
  if (output) checkFileDestination(output, "--output");
  const junitPath = f.junit || undefined;
  if (junitPath) checkFileDestination(junitPath, "--junit");
  const namespace = f.namespace || env.AICR_NAMESPACE || DEFAULT_VALIDATE_NAMESPACE;
  const timeoutMs = f.timeout ? parseDuration("--timeout", f.timeout) : DEFAULT_VALIDATE_TIMEOUT_MS;
  // The live capture is a snapshot run: its agent settings (AICR_IMAGE, AICR_OS, …) are read as
  // `aicr snapshot` reads them, and only when there is a capture to make.
  const capture = snapshot
    ? undefined
    : resolveSnapshotOptions(
        {
          namespace,
          image: f.image,
          imagePullSecrets: [],
          jobName: CAPTURE_JOB_PREFIX,
          nodeSelectors: [],
          tolerations: [],
          timeout: `${timeoutMs}ms`,
          noCleanup: f.noCleanup,
        },
        env,
      );
  return {
    capture,
    recipe: parseSource("--recipe", f.recipe),
    snapshot,
    namespace,
    phases: phases.length > 0 ? [...new Set(phases)] : [...PHASES],
    skipChecks: f.skipChecks,
    failOnError: f.failOnError ?? true,
    failFast: Boolean(f.failFast),
    noCluster: Boolean(f.noCluster),
    allowMissing: Boolean(f.allowMissing),
    outputPath: output,
    format,
    junitPath,
    image: f.image || env.AICR_VALIDATOR_IMAGE || env.AICR_IMAGE || undefined,
    timeoutMs,
    cleanup: !f.noCleanup,
  };
}
