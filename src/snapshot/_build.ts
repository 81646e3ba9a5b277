import { AicrError } from "../core/errors.ts";
import {
  type Measurement,
  type Readings,
  SNAPSHOT_API_VERSION,
  SNAPSHOT_KIND,
  type Snapshot,
  type Subtype,
} from "./schema.ts";

/** Where this snapshot came from, when the agent knows it (empty values are left out). */
export interface Provenance {
  runId?: string | undefined;
  podUid?: string | undefined;
  jobUid?: string | undefined;
}

export interface BuildSnapshotOptions {
  measurements: readonly Measurement[];
  version: string;
  sourceNode: string;
  now: Date;
  provenance?: Provenance;
}

/** RFC 3339 in UTC with whole seconds, as the reference writes it (`2026-01-31T10:30:00Z`). */
export function formatTimestamp(now: Date): string {
  return now.toISOString().replace(/\.\d+Z$/, "Z");
}

function sortedKeys<T>(map: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const key of Object.keys(map).sort()) out[key] = map[key] as T;
  return out;
}

function normalizeSubtype(subtype: Subtype): Subtype {
  const out: Subtype = { subtype: subtype.subtype, data: sortedKeys<Readings[string]>(subtype.data) };
  if (subtype.context) out.context = sortedKeys(subtype.context);
  if (subtype.items) {
    out.items = subtype.items.map((item) => ({
      ...(item.context ? { context: sortedKeys(item.context) } : {}),
      data: sortedKeys<Readings[string]>(item.data),
    }));
  }
  return out;
}

/**
 * Assembles the snapshot document. Pure: the clock and every input come from the caller. Measurement
 * and subtype order is kept as given (collectors emit a stable order); keys inside data and context
 * maps are sorted so the same readings always serialize to the same bytes.
 */
export function buildSnapshot(options: BuildSnapshotOptions): Snapshot {
  const seen = new Set<string>();
  for (const m of options.measurements) {
    if (seen.has(m.type)) {
      throw new AicrError("INTERNAL", `Measurement type "${m.type}" was collected twice`, {
        remedy: "This is a bug in aicr: each collector must emit its type once. Please report it.",
        context: { type: m.type },
      });
    }
    seen.add(m.type);
  }
  const metadata: Snapshot["metadata"] = {
    timestamp: formatTimestamp(options.now),
    version: options.version,
    "source-node": options.sourceNode,
  };
  const { runId, podUid, jobUid } = options.provenance ?? {};
  if (runId) metadata["run-id"] = runId;
  if (podUid) metadata["pod-uid"] = podUid;
  if (jobUid) metadata["job-uid"] = jobUid;
  return {
    apiVersion: SNAPSHOT_API_VERSION,
    kind: SNAPSHOT_KIND,
    metadata,
    measurements: options.measurements.map((m) => ({
      type: m.type,
      subtypes: m.subtypes.map(normalizeSubtype),
    })),
  };
}

/** Environment the agent reads its identity from (the Job sets these through the downward API). */
export const PROVENANCE_ENV = {
  runId: "AICR_RUN_ID",
  podUid: "AICR_POD_UID",
  jobUid: "AICR_JOB_UID",
} as const;

export function provenanceFromEnv(env: Readonly<Record<string, string | undefined>>): Provenance {
  return {
    runId: env[PROVENANCE_ENV.runId] || undefined,
    podUid: env[PROVENANCE_ENV.podUid] || undefined,
    jobUid: env[PROVENANCE_ENV.jobUid] || undefined,
  };
}

/** `NODE_NAME`, else `KUBERNETES_NODE_NAME`, else the hostname the caller looked up. */
export function sourceNodeFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  hostname: string,
): string {
  return env.NODE_NAME || env.KUBERNETES_NODE_NAME || hostname;
}
