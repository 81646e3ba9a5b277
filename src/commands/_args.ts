import type { ArgsDef } from "citty";

/** Flags every command shares, declared once and spread into each command's args. */
export const globalArgs = {
  kubeconfig: {
    type: "string",
    alias: "k",
    description: "Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)",
    valueHint: "path",
  },
  context: {
    type: "string",
    description: "kubeconfig context to use (default: the current context)",
    valueHint: "name",
  },
  namespace: {
    type: "string",
    alias: "n",
    description: "Namespace to work in (default: $AICR_NAMESPACE, then default)",
    valueHint: "namespace",
  },
  debug: { type: "boolean", description: "Log debug detail" },
  "log-json": { type: "boolean", description: "Log one JSON object per line on stderr" },
  "run-id": {
    type: "string",
    description:
      "Use this run ID instead of a generated one (also $AICR_RUN_ID); form YYYYMMDD-HHMMSS-<16 hex>",
    valueHint: "id",
  },
} as const satisfies ArgsDef;

/** `--namespace`, else AICR_NAMESPACE, else `default`. */
export function resolveNamespace(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string {
  if (flag !== undefined && flag !== "") return flag;
  return env.AICR_NAMESPACE || "default";
}
