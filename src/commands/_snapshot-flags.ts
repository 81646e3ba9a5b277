import { AicrError } from "../core/errors.ts";
import { dns1123LabelProblems } from "../core/names.ts";
import { quantityValue } from "../core/quantity.ts";
import { DEFAULT_IMAGE } from "../core/version.ts";
import { DEFAULT_TIMEOUT_MS, type SnapshotRunOptions } from "../remote/options.ts";
import { parseDestination } from "../snapshot/deliver.ts";
import type { Presentation } from "../snapshot/render.ts";
import { type PresentationFlags, resolveOs, resolvePresentation } from "./_node.ts";
import {
  badFlag,
  parseBool,
  parseCount,
  parseDuration,
  parseKeyValue,
  parseResourceList,
  parseToleration,
} from "./_parse.ts";

/** The raw inputs of `aicr snapshot` in remote mode (from a jump host): flags, then their environment fallbacks. */
export interface SnapshotFlags extends PresentationFlags {
  namespace: string;
  output?: string | undefined;
  image?: string | undefined;
  imagePullSecrets: string[];
  jobName?: string | undefined;
  serviceAccountName?: string | undefined;
  nodeSelectors: string[];
  tolerations: string[];
  timeout?: string | undefined;
  noCleanup?: boolean | undefined;
  privileged?: boolean | string | undefined;
  requireGpu?: boolean | string | undefined;
  runtimeClass?: string | undefined;
  os?: string | undefined;
  requests?: string | undefined;
  limits?: string | undefined;
  discoverNetwork?: boolean | string | undefined;
  maxNodesPerEntry?: string | undefined;
  debug?: boolean | undefined;
  /** Write into an existing cm:// target that aicr did not write. */
  overwrite?: boolean | string | undefined;
  /** Local mode only: refused here. */
  clusterConfig?: string | undefined;
}

/** The run's options, and how the CLI shows the returned document (-t table, --template). */
export type ResolvedSnapshotFlags = SnapshotRunOptions & {
  /** Absent: the agent's YAML as written. */
  presentation?: Presentation | undefined;
};

/** Every value checked before the first request; an error names the flag, the value and the form. */
export function resolveSnapshotOptions(
  f: SnapshotFlags,
  env: Readonly<Record<string, string | undefined>>,
): ResolvedSnapshotFlags {
  if (f.clusterConfig !== undefined)
    throw new AicrError(
      "INVALID_REQUEST",
      `--cluster-config ${JSON.stringify(f.clusterConfig)} is read only by a local collection: the agent's pod cannot see this host's file`,
      {
        remedy:
          "run `aicr snapshot --local --cluster-config <file>` on the node itself, or use --discover-network with the agent Job",
        context: { field: "--cluster-config", value: f.clusterConfig },
      },
    );
  const nsProblems = dns1123LabelProblems(f.namespace);
  if (nsProblems.length > 0)
    throw badFlag("--namespace", f.namespace, `a namespace name (DNS-1123 label: ${nsProblems.join("; ")})`);
  const destination = parseDestination(f.output);
  if (destination.kind === "configmap" && destination.ref.namespace !== f.namespace) {
    throw new AicrError(
      "INVALID_REQUEST",
      `invalid --output "cm://${destination.ref.namespace}/${destination.ref.name}": its namespace must be the run's namespace "${f.namespace}"`,
      {
        remedy: `write to cm://${f.namespace}/${destination.ref.name}, or pass --namespace ${destination.ref.namespace} (the agent may only write ConfigMaps where it runs)`,
        context: { field: "--output", value: f.output },
      },
    );
  }
  if (destination.kind === "configmap" && f.format === "json") {
    throw badFlag("--format", f.format, "yaml with a cm:// output (the agent writes YAML there)");
  }
  const { format, presentation, providerReadings } = resolvePresentation(f, destination);
  const requireGpu = parseBool("--require-gpu", f.requireGpu ?? env.AICR_REQUIRE_GPU, false);
  const runtimeClassName = f.runtimeClass || env.AICR_RUNTIME_CLASS || undefined;
  if (requireGpu && runtimeClassName) {
    throw new AicrError(
      "INVALID_REQUEST",
      `--require-gpu and --runtime-class ${JSON.stringify(runtimeClassName)} cannot be combined`,
      {
        remedy:
          "use --require-gpu to request a GPU, or --runtime-class to reach nvidia-smi without consuming one",
        context: { field: "--require-gpu" },
      },
    );
  }
  const os = resolveOs(f.os || env.AICR_OS);
  const image = f.image || env.AICR_IMAGE || DEFAULT_IMAGE;
  if (/\s/.test(image) || image.length > 512)
    throw badFlag("--image", image, "an image reference such as ghcr.io/nvidia/aicr:v1.0.0");
  const nodeSelector =
    f.nodeSelectors.length > 0
      ? Object.fromEntries(f.nodeSelectors.map((v) => parseKeyValue("--node-selector", v)))
      : undefined;
  const requestsText = f.requests ?? env.AICR_REQUESTS;
  const limitsText = f.limits ?? env.AICR_LIMITS;
  for (const s of f.imagePullSecrets)
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(s))
      throw badFlag("--image-pull-secret", s, "a Secret name (DNS-1123)");
  return {
    namespace: f.namespace,
    destination,
    format,
    image,
    imagePullSecrets: f.imagePullSecrets,
    jobPrefix: f.jobName || undefined,
    serviceAccountName: f.serviceAccountName || undefined,
    nodeSelector,
    tolerations:
      f.tolerations.length > 0 ? f.tolerations.map((t) => parseToleration("--toleration", t)) : undefined,
    timeoutMs: f.timeout ? parseDuration("--timeout", f.timeout) : DEFAULT_TIMEOUT_MS,
    cleanup: !f.noCleanup,
    privileged: parseBool("--privileged", f.privileged, true),
    requireGpu,
    runtimeClassName,
    os,
    ...requestsWithinLimits(
      requestsText ? parseResourceList("--requests", requestsText) : undefined,
      limitsText ? parseResourceList("--limits", limitsText) : undefined,
    ),
    discoverNetwork: parseBool("--discover-network", f.discoverNetwork ?? env.AICR_DISCOVER_NETWORK, false),
    maxNodesPerEntry: parseCount(
      "--max-nodes-per-entry",
      f.maxNodesPerEntry ?? env.AICR_MAX_NODES_PER_ENTRY ?? "0",
    ),
    debug: Boolean(f.debug),
    autoTarget: !nodeSelector && !requireGpu && !runtimeClassName,
    overwrite: parseBool("--overwrite", f.overwrite, false),
    providerReadings: providerReadings.length > 0 ? providerReadings : undefined,
    presentation: presentation.kind === "yaml" ? undefined : presentation,
  };
}

/** A request above a limit the operator also gave is refused here, as kube-apiserver would refuse the pod. */
function requestsWithinLimits(
  requests: Record<string, string> | undefined,
  limits: Record<string, string> | undefined,
): { requests: Record<string, string> | undefined; limits: Record<string, string> | undefined } {
  for (const [name, qty] of Object.entries(requests ?? {})) {
    const limit = limits?.[name];
    if (limit !== undefined && quantityValue(qty) > quantityValue(limit))
      throw badFlag(
        "--requests",
        `${name}=${qty}`,
        `at most the limit ${name}=${limit} given with --limits`,
        `raise --limits ${name} to at least ${qty}, or lower the request`,
      );
  }
  return { requests, limits };
}
