import { resolve } from "node:path";
import { checkClusterConfigFile } from "../collect/index.ts";
import { AicrError } from "../core/errors.ts";
import { OS_FAMILIES } from "../remote/options.ts";
import type { RunContext } from "../run/context.ts";
import { collectNodeSnapshot } from "../snapshot/collect-node.ts";
import { checkDestination, type Destination, parseDestination } from "../snapshot/deliver.ts";
import { loadTemplate, readProviderDumps } from "../snapshot/inputs.ts";
import { PRESENTATION_FORMATS, type Presentation } from "../snapshot/render.ts";
import type { Subtype } from "../snapshot/schema.ts";
import type { SnapshotFormat } from "../snapshot/serialize.ts";
import type { FlagSpecs } from "./_flag-spec.ts";
import type { Flags } from "./_flags.ts";
import { badFlag, parseBool, parseCount } from "./_parse.ts";

/** The flags of a node collection (the in-pod agent, `snapshot --local`), declared once. */
export const nodeArgs = {
  output: {
    type: "string",
    alias: "o",
    description: "stdout (default), a file path, or cm://<namespace>/<name>",
    valueHint: "dest",
  },
  format: {
    type: "enum",
    options: PRESENTATION_FORMATS,
    alias: "t",
    description:
      "yaml (default), json, or table (FIELD/VALUE rows for reading only: not readable back, not with cm://)",
    valueHint: "yaml|json|table",
  },
  "max-nodes-per-entry": {
    type: "string",
    description: "Truncate node lists in topology readings to N names (0: no limit)",
    valueHint: "n",
    env: "AICR_MAX_NODES_PER_ENTRY",
  },
} as const satisfies FlagSpecs;

/** The cloud node-pool dumps, read on the operator's side (snapshot, and validate's live capture). */
export const providerArgs = {
  "oke-addons": {
    type: "string",
    description:
      "JSON of `oci ce cluster list-addons --cluster-id <id> --all --output json` → K8s.oke-addons readings (≤ 1 MiB; read here, never sent to the pod)",
    valueHint: "file",
  },
  "aks-gpu-pools": {
    type: "string",
    description: "JSON of `az aks nodepool list -o json` → K8s.aks-gpu-pools readings (≤ 1 MiB)",
    valueHint: "file",
  },
  "gke-gpu-pools": {
    type: "string",
    description:
      "JSON of `gcloud container node-pools list --cluster <name> --format=json` → K8s.gke-gpu-pools readings (≤ 1 MiB)",
    valueHint: "file",
  },
} as const satisfies FlagSpecs;

/** The snapshot's extra inputs on the operator's side (remote and --local): files read before any request. */
export interface PresentationFlags {
  format?: string | undefined;
  template?: string | undefined;
  okeAddons?: string | undefined;
  aksGpuPools?: string | undefined;
  gkeGpuPools?: string | undefined;
}

export interface ResolvedPresentation {
  /** What a ConfigMap or the agent writes: yaml or json. */
  format: SnapshotFormat;
  presentation: Presentation;
  providerReadings: Subtype[];
}

const refusedWithConfigMap = (flag: string, value: string, why: string): AicrError =>
  new AicrError(
    "INVALID_REQUEST",
    `${flag} ${JSON.stringify(value)} cannot be combined with a cm:// --output: ${why}`,
    {
      remedy: `write to stdout or a file (-o <path>) with ${flag}, or drop ${flag} to write the ConfigMap`,
      context: { field: flag, value },
    },
  );

/**
 * -t, --template and the provider files, checked and read before the first request: a table or a
 * template rendering is never written to a cm:// ConfigMap (it could not be read back), nor are provider
 * readings (the agent writes that ConfigMap; its document would differ from what is returned).
 */
export function resolvePresentation(f: PresentationFlags, destination: Destination): ResolvedPresentation {
  const format = f.format ?? "yaml";
  if (!(PRESENTATION_FORMATS as readonly string[]).includes(format))
    throw badFlag("--format", format, "yaml, json or table", "pass -t yaml, -t json or -t table");
  const toConfigMap = destination.kind === "configmap";
  if (toConfigMap && format === "table")
    throw refusedWithConfigMap("--format", format, "a table cannot be read back");
  let presentation: Presentation = { kind: format as "yaml" | "json" | "table" };
  if (f.template !== undefined) {
    if (format !== "yaml")
      throw badFlag(
        "--template",
        f.template,
        "-t yaml (the default) with --template",
        "drop -t, or drop --template",
      );
    if (toConfigMap) throw refusedWithConfigMap("--template", f.template, "a rendering cannot be read back");
    presentation = { kind: "template", template: loadTemplate(f.template) };
  }
  const files = { "oke-addons": f.okeAddons, "aks-gpu-pools": f.aksGpuPools, "gke-gpu-pools": f.gkeGpuPools };
  for (const [kind, path] of Object.entries(files))
    if (path !== undefined && toConfigMap)
      throw refusedWithConfigMap(
        `--${kind}`,
        path,
        "the agent writes that ConfigMap without the provider readings",
      );
  const providerReadings = readProviderDumps(
    Object.fromEntries(Object.entries(files).filter(([, p]) => p !== undefined)),
  );
  return { format: format === "json" ? "json" : "yaml", presentation, providerReadings };
}

/** --os / AICR_OS: one of the known families, else exit 2. */
export function resolveOs(value: string | undefined): string | undefined {
  const os = value || undefined;
  if (os !== undefined && !OS_FAMILIES.includes(os))
    throw badFlag("--os", os, `one of ${OS_FAMILIES.join(", ")}`);
  return os;
}

/** What only `snapshot --local` takes on top of the node flags (the agent gets these through its env). */
export interface LocalFlags extends PresentationFlags {
  requireGpu?: boolean | string | undefined;
  os?: string | undefined;
  clusterConfig?: string | undefined;
  discoverNetwork?: boolean | string | undefined;
}

/** Collects the node this process runs on and delivers it; every input is checked first. */
export async function runNodeSnapshot(
  ctx: RunContext,
  flags: Flags<keyof typeof nodeArgs>,
  writeStdout: (text: string) => void,
  local: LocalFlags = {},
): Promise<void> {
  const destination = parseDestination(flags.string("output"));
  const resolved = resolvePresentation({ ...local, format: flags.string("format") }, destination);
  const maxNodesPerEntry = parseCount(
    "--max-nodes-per-entry",
    flags.string("max-nodes-per-entry") ?? ctx.env.AICR_MAX_NODES_PER_ENTRY ?? "0",
  );
  const agentMode = ctx.transport.name === "in-cluster";
  // In the agent's pod these arrive through the Job's env (AICR_OS, AICR_DISCOVER_NETWORK), read by the collectors.
  const os = resolveOs(local.os ?? ctx.env.AICR_OS);
  const collectEnv: Record<string, string> = {};
  if (os) collectEnv.AICR_OS = os;
  if (!agentMode) {
    if (parseBool("--discover-network", local.discoverNetwork ?? ctx.env.AICR_DISCOVER_NETWORK, false))
      collectEnv.AICR_DISCOVER_NETWORK = "true";
    if (local.clusterConfig !== undefined) {
      await checkClusterConfigFile(local.clusterConfig);
      collectEnv.AICR_CLUSTER_CONFIG_PATH = resolve(local.clusterConfig);
    }
  }
  const requireGpu =
    !agentMode && parseBool("--require-gpu", local.requireGpu ?? ctx.env.AICR_REQUIRE_GPU, false);
  checkDestination(destination);
  const client = await ctx.transport.connect();
  return collectNodeSnapshot({
    agentMode,
    client,
    destination,
    format: resolved.format,
    presentation: resolved.presentation,
    providerReadings: resolved.providerReadings,
    requireGpu,
    collectEnv,
    maxNodesPerEntry,
    runId: ctx.runId,
    version: ctx.version,
    env: ctx.env,
    log: ctx.log,
    signal: ctx.signal,
    writeStdout,
  });
}
