import { AicrError } from "../core/errors.ts";
import { contextNamespace } from "../kube/config.ts";
import type { FlagSpecs } from "./_flag-spec.ts";

const LOGGING = (flag: string) =>
  `logging starts before the config is read: pass ${flag} on the command line`;

/** Flags every command shares, declared once and spread into each command's flags. */
export const globalArgs = {
  kubeconfig: {
    type: "string",
    alias: "k",
    description: "Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)",
    valueHint: "path",
  },
  context: {
    type: "string",
    description:
      "kubeconfig context to use (default: the current context); aicr snapshot takes it repeated, one snapshot per context",
    valueHint: "name",
    repeatable: true,
  },
  namespace: {
    type: "string",
    alias: "n",
    description:
      "Namespace to work in (default: $AICR_NAMESPACE, then the kubeconfig context's namespace, then default)",
    valueHint: "namespace",
    env: "AICR_NAMESPACE",
  },
  debug: {
    type: "boolean",
    description: "Log debug detail",
    env: "AICR_DEBUG",
    notInConfig: LOGGING("--debug"),
  },
  v: {
    type: "string",
    description: "Log verbosity as kubectl reads it (-v=4 and above: debug detail, as --debug)",
    valueHint: "level",
    notInConfig: LOGGING("-v"),
  },
  "log-json": {
    type: "boolean",
    description: "Log one JSON object per line on stderr",
    env: "AICR_LOG_JSON",
    notInConfig: LOGGING("--log-json"),
  },
  "run-id": {
    type: "string",
    description:
      "Use this run ID instead of a generated one (also $AICR_RUN_ID); form YYYYMMDD-HHMMSS-<16 hex>",
    valueHint: "id",
    env: "AICR_RUN_ID",
    notInConfig: "a run ID names a single run: pass --run-id (or $AICR_RUN_ID) for the run that needs it",
  },
} as const satisfies FlagSpecs;

/** Where the kubeconfig comes from: --kubeconfig and --context as given (the environment supplies the rest). */
export interface KubeconfigFlags {
  kubeconfig?: string | undefined;
  context?: string | undefined;
}

/**
 * `--namespace`, else AICR_NAMESPACE, else the kubeconfig context's namespace (as kubectl and Helm
 * use it; read from the file, offline), else `default`. Without `kube`, the kubeconfig is the one the
 * environment names (KUBECONFIG, then ~/.kube/config) and its current context: a command with
 * --kubeconfig/--context passes them.
 */
export function resolveNamespace(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  kube: KubeconfigFlags = {},
): string {
  if (flag !== undefined && flag !== "") return flag;
  if (env.AICR_NAMESPACE) return env.AICR_NAMESPACE;
  return contextNamespace({ kubeconfig: kube.kubeconfig, context: kube.context, env }) || "default";
}

/** `-v`/`--v` as kubectl reads it: a level 0–10; 4 and above log debug detail. */
export function verbosity(value: string | undefined): number {
  if (value === undefined) return 0;
  if (!/^(10|[0-9])$/.test(value))
    throw new AicrError(
      "INVALID_REQUEST",
      `invalid -v ${JSON.stringify(value)}: expected a level from 0 to 10`,
      {
        remedy: "write -v=4 (or --debug) for debug detail, as kubectl reads -v",
        context: { field: "-v", value },
      },
    );
  return Number(value);
}

/** A command that takes one cluster refuses a second --context (before anything else happens). */
export function checkOneContext(command: string, given: readonly string[]): void {
  if (given.length > 1)
    throw new AicrError(
      "INVALID_REQUEST",
      `--context given ${given.length} times (${given.join(", ")}): only aicr snapshot takes several contexts`,
      {
        remedy: `run "aicr ${command}" once per context, each with one --context`,
        context: { field: "--context", value: given },
      },
    );
}
