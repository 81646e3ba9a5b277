import type { Toleration } from "../agent/job-spec.ts";
import type { Destination } from "../snapshot/deliver.ts";
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
}
