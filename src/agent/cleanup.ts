import { LABEL, LABEL_VALUE } from "../core/labels.ts";
import type { Logger } from "../core/log.ts";
import { describe, type KubeClient, type KubeObject, type ObjectRef } from "../kube/client.ts";
import { isConflictError, isNotFoundError } from "../kube/errors.ts";
import type { CreatedEntry, CreatedSet } from "./created-set.ts";
import { carriesInvocationLabels, type RunIdentity } from "./labels.ts";

export type CleanupOutcome = "deleted" | "already-gone" | "not-ours" | "left-behind" | "failed";

export interface ReceiptRow {
  kind: string;
  namespace?: string | undefined;
  name: string;
  uid?: string | undefined;
  outcome: CleanupOutcome;
  detail?: string | undefined;
}

export interface CleanupOptions {
  client: KubeClient;
  created: CreatedSet;
  identity: RunIdentity;
  log: Logger;
  /** The run's staging ConfigMap, when the run owns its output (never a delivered cm:// target). */
  staging?: { namespace: string; name: string } | undefined;
  /** The kind whose object anchors the run; deleted after its dependents so the receipt reads true. */
  anchorKind?: string | undefined;
}

const row = (ref: ObjectRef, outcome: CleanupOutcome, extra: Partial<ReceiptRow> = {}): ReceiptRow => ({
  kind: ref.kind,
  ...(ref.namespace ? { namespace: ref.namespace } : {}),
  name: ref.name,
  outcome,
  ...extra,
});

async function deletePinned(client: KubeClient, ref: ObjectRef, uid: string): Promise<ReceiptRow> {
  try {
    await client.delete(ref, { uid, propagationPolicy: ref.kind === "Job" ? "Foreground" : "Background" });
    return row(ref, "deleted", { uid });
  } catch (err) {
    if (isNotFoundError(err)) return row(ref, "already-gone", { uid });
    if (isConflictError(err))
      return row(ref, "not-ours", { uid, detail: "a different object now stands at this name" });
    return row(ref, "failed", { uid, detail: (err as Error).message });
  }
}

/** A lost create response: delete only with proof (this invocation's labels and a UID), pinned to that UID. */
async function resolveIntent(o: CleanupOptions, entry: CreatedEntry): Promise<ReceiptRow> {
  let live: KubeObject;
  try {
    live = await o.client.get<KubeObject>(entry);
  } catch (err) {
    if (isNotFoundError(err)) return row(entry, "already-gone");
    return row(entry, "failed", {
      detail: `cannot verify ownership, so not deleted: ${(err as Error).message}`,
    });
  }
  const uid = live.metadata?.uid;
  if (uid && carriesInvocationLabels(live.metadata?.labels, o.identity))
    return deletePinned(o.client, entry, uid);
  const labels = live.metadata?.labels ?? {};
  o.log.warn(
    "cleanup left behind an object it cannot prove this run created; if it is a stale orphan of this run, remove it by hand",
    {
      kind: entry.kind,
      name: entry.name,
      namespace: entry.namespace,
      uid,
      runID: o.identity.runId,
      objectRunID: labels[LABEL.runId],
      objectInvocationID: labels[LABEL.invocationId],
    },
  );
  return row(entry, "left-behind", { uid, detail: "not provably created by this invocation" });
}

/** Sweeps a staging ConfigMap the run never observed, but only while the Job this invocation created still stands. */
async function sweepStaging(
  o: CleanupOptions,
  staging: { namespace: string; name: string },
  holdsJob: boolean,
): Promise<ReceiptRow | undefined> {
  const ref = { apiVersion: "v1", kind: "ConfigMap", ...staging };
  const cm = await o.client
    .get<KubeObject>(ref)
    .catch((err: unknown) => (isNotFoundError(err) ? undefined : err));
  if (cm === undefined) return undefined;
  if (cm instanceof Error) return row(ref, "failed", { detail: cm.message });
  const obj = cm as KubeObject;
  if (!holdsJob || obj.metadata?.labels?.[LABEL.name] !== LABEL_VALUE.app || !obj.metadata?.uid) {
    o.log.warn(
      "cleanup left behind the ConfigMap at this run's staging name: this run cannot prove its own agent wrote it",
      {
        name: staging.name,
        namespace: staging.namespace,
      },
    );
    return row(ref, "left-behind", {
      uid: obj.metadata?.uid,
      detail: "no live Job of this invocation vouches for it",
    });
  }
  return deletePinned(o.client, ref, obj.metadata.uid);
}

async function deleteEntry(o: CleanupOptions, e: CreatedEntry): Promise<ReceiptRow> {
  return e.confirmed && e.uid ? deletePinned(o.client, e, e.uid) : resolveIntent(o, e);
}

/**
 * Deletes exactly what this invocation created, each pinned by UID: never the namespace, never a
 * delivered ConfigMap, never another run's object. Every deletion is attempted; the receipt says how each went.
 */
export async function cleanupRun(o: CleanupOptions): Promise<ReceiptRow[]> {
  const entries = o.created.list();
  const job = entries.find((e) => e.kind === "Job");
  let holdsJob = false;
  const needsSweep = o.staging && !entries.some((e) => e.kind === "ConfigMap");
  if (needsSweep && job) {
    // Checked before the fan-out: the Job's own delete runs concurrently with it. A Job whose create
    // response was lost vouches only with the same proof that lets cleanup delete it.
    const live = await o.client.get<KubeObject>(job).catch(() => undefined);
    const liveUid = live?.metadata?.uid;
    holdsJob =
      liveUid !== undefined &&
      liveUid !== "" &&
      (job.confirmed ? liveUid === job.uid : carriesInvocationLabels(live?.metadata?.labels, o.identity));
  }
  // Leaves first (the staging ConfigMap is owned by the Job), the anchor last: each delete is ours
  // rather than the garbage collector's, so the receipt says what this cleanup did.
  const anchor = entries.find((e) => e.kind === o.anchorKind);
  const leaves = entries.filter((e) => e.kind === "ConfigMap");
  const middle = entries.filter((e) => e !== anchor && !leaves.includes(e));
  const rows: (ReceiptRow | undefined)[] = await Promise.all([
    ...leaves.map((e) => deleteEntry(o, e)),
    ...(needsSweep && o.staging ? [sweepStaging(o, o.staging, holdsJob)] : []),
  ]);
  rows.push(...(await Promise.all(middle.map((e) => deleteEntry(o, e)))));
  if (anchor) rows.push(await deleteEntry(o, anchor));
  const receipt = rows.filter((r): r is ReceiptRow => r !== undefined);
  for (const r of receipt)
    o.log.debug(`cleanup: ${r.outcome} ${describe({ apiVersion: "", ...r })}`, { uid: r.uid });
  return receipt;
}
