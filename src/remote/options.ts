import { DEFAULT_IMAGE } from "../core/version.ts";
import type { Toleration } from "../deployer/job-spec.ts";
import type { Destination } from "../snapshot/deliver.ts";
import type { Subtype } from "../snapshot/schema.ts";
import type { SnapshotFormat } from "../snapshot/serialize.ts";

export const DEFAULT_TIMEOUT_MS = 5 * 60_000;
export const OS_FAMILIES = ["ubuntu", "rhel", "cos", "amazonlinux", "ol", "talos"];

/** What `aicr snapshot` in remote mode resolved from its flags (commands/_snapshot-flags.ts). */
export interface SnapshotRunOptions {
  namespace: string;
  destination: Destination;
  format: SnapshotFormat;
  image: string;
  imagePullSecrets: string[];
  jobPrefix?: string | undefined;
  serviceAccountName?: string | undefined;
  nodeSelector?: Record<string, string> | undefined;
  tolerations?: Toleration[] | undefined;
  timeoutMs: number;
  cleanup: boolean;
  privileged: boolean;
  requireGpu: boolean;
  runtimeClassName?: string | undefined;
  os?: string | undefined;
  requests?: Record<string, string> | undefined;
  limits?: Record<string, string> | undefined;
  discoverNetwork: boolean;
  maxNodesPerEntry: number;
  debug: boolean;
  /** No placement flag was given: the run may target GPU nodes by itself. */
  autoTarget: boolean;
  /** A cm:// target that exists and was not written by aicr may be written over (default: refused). */
  overwrite: boolean;
  /**
   * K8s subtypes projected from cloud node-pool dumps (the CLI's --oke-addons, --aks-gpu-pools,
   * --gke-gpu-pools): merged into the returned document on this side; they never enter the pod.
   * Not with a delivered cm:// target (the agent writes it without them).
   */
  providerReadings?: Subtype[] | undefined;
}

/**
 * The library's options of one snapshot run: only `namespace` is required; the rest default as the
 * CLI does (its flags resolve to these, in commands/_snapshot-flags.ts).
 */
export type SnapshotOptions = Pick<SnapshotRunOptions, "namespace"> &
  Partial<Omit<SnapshotRunOptions, "namespace" | "destination" | "format">>;

export type ResolvedSnapshotOptions = Omit<SnapshotRunOptions, "destination" | "format">;

/** Fills what the caller left out with the CLI's defaults. */
export function withSnapshotDefaults(o: SnapshotOptions): ResolvedSnapshotOptions {
  const placed = Boolean(o.nodeSelector) || Boolean(o.requireGpu) || Boolean(o.runtimeClassName);
  return {
    ...o,
    image: o.image ?? DEFAULT_IMAGE,
    imagePullSecrets: o.imagePullSecrets ?? [],
    timeoutMs: o.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    cleanup: o.cleanup ?? true,
    privileged: o.privileged ?? true,
    requireGpu: o.requireGpu ?? false,
    discoverNetwork: o.discoverNetwork ?? false,
    maxNodesPerEntry: o.maxNodesPerEntry ?? 0,
    debug: o.debug ?? false,
    autoTarget: o.autoTarget ?? !placed,
    overwrite: o.overwrite ?? false,
  };
}
