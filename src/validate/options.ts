import { AicrError } from "../core/errors.ts";
import { badFlag, parseDuration } from "../remote/parse.ts";
import { type ConfigMapRef, isConfigMapUri, parseConfigMapUri } from "../snapshot/cm-uri.ts";
import { PHASES, type Phase } from "./recipe.ts";

export const DEFAULT_VALIDATE_NAMESPACE = "aicr-validation";
export const DEFAULT_VALIDATE_TIMEOUT_MS = 5 * 60_000;
/** Job prefix of the live capture's agent. */
export const CAPTURE_JOB_PREFIX = "aicr-validate";

export type Source = { kind: "file"; path: string } | { kind: "configmap"; ref: ConfigMapRef };

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

export interface ValidateOptions {
  recipe: Source;
  /** Absent → a live capture through the agent. */
  snapshot?: Source | undefined;
  namespace: string;
  phases: Phase[];
  skipChecks: string[];
  failOnError: boolean;
  failFast: boolean;
  noCluster: boolean;
  allowMissing: boolean;
  /** Absent → stdout. */
  outputPath?: string | undefined;
  format: "json" | "table";
  junitPath?: string | undefined;
  /** Image of the capture agent and of the validators (the same binary). */
  image?: string | undefined;
  timeoutMs: number;
  cleanup: boolean;
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
  return {
    recipe: parseSource("--recipe", f.recipe),
    snapshot,
    namespace: f.namespace || env.AICR_NAMESPACE || DEFAULT_VALIDATE_NAMESPACE,
    phases: phases.length > 0 ? [...new Set(phases)] : [...PHASES],
    skipChecks: f.skipChecks,
    failOnError: f.failOnError ?? true,
    failFast: Boolean(f.failFast),
    noCluster: Boolean(f.noCluster),
    allowMissing: Boolean(f.allowMissing),
    outputPath: output,
    format,
    junitPath: f.junit || undefined,
    image: f.image || env.AICR_VALIDATOR_IMAGE || env.AICR_IMAGE || undefined,
    timeoutMs: f.timeout ? parseDuration("--timeout", f.timeout) : DEFAULT_VALIDATE_TIMEOUT_MS,
    cleanup: !f.noCleanup,
  };
}
