import type { ConfigMapRef } from "./cm-uri.ts";
import type { SnapshotFormat } from "./serialize.ts";

/**
 * The ConfigMap the agent applies: a plain object, ready for server-side apply. A type alias, not an
 * interface, so it is assignable to the kube client's `Record<string, unknown>`-based object type.
 */
export type SnapshotConfigMap = {
  apiVersion: "v1";
  kind: "ConfigMap";
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    ownerReferences?: {
      apiVersion: string;
      kind: string;
      name: string;
      uid: string;
      blockOwnerDeletion: boolean;
    }[];
  };
  data: Record<string, string>;
};

export interface SnapshotConfigMapOptions {
  /** The serialized snapshot, exactly as serializeSnapshot wrote it. */
  content: string;
  format: SnapshotFormat;
  /** metadata.timestamp of the snapshot. */
  timestamp: string;
  /** aicr version; anything a label value cannot hold is replaced (see labelSafeVersion). */
  version: string;
  /** The agent's Job, when this ConfigMap is the run's staging object. */
  ownerJob?: { name: string; uid: string } | undefined;
}

const LABEL_VALUE_MAX = 63;

/**
 * A label value is at most 63 characters of [A-Za-z0-9._-], starting and ending alphanumeric; build
 * metadata such as `0.1.0+dirty` is not, so other characters become '-' and an empty result is "unknown".
 */
export function labelSafeVersion(version: string): string {
  const cleaned = version
    .replace(/[^A-Za-z0-9._-]/g, "-")
    .slice(0, LABEL_VALUE_MAX)
    .replace(/^[^A-Za-z0-9]+/, "")
    .replace(/[^A-Za-z0-9]+$/, "");
  return cleaned || "unknown";
}

export function snapshotDataKey(format: SnapshotFormat): string {
  return `snapshot.${format}`;
}

/** Labels and data keys as the remote side expects them (the reference agent's staging ConfigMap). */
export function buildSnapshotConfigMap(
  ref: ConfigMapRef,
  options: SnapshotConfigMapOptions,
): SnapshotConfigMap {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: ref.name,
      namespace: ref.namespace,
      labels: {
        "app.kubernetes.io/name": "aicr",
        "app.kubernetes.io/component": "Snapshot",
        "app.kubernetes.io/version": labelSafeVersion(options.version),
      },
      // Owned by the Job only when it is the run's staging object, never a delivered cm:// target:
      // if the run is killed, deleting its Job (or the Job's TTL) takes the staging copy with it.
      ...(options.ownerJob
        ? {
            ownerReferences: [
              { apiVersion: "batch/v1", kind: "Job", ...options.ownerJob, blockOwnerDeletion: false },
            ],
          }
        : {}),
    },
    data: {
      [snapshotDataKey(options.format)]: options.content,
      format: options.format,
      timestamp: options.timestamp,
    },
  };
}
