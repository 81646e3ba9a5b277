import { LABEL, LABEL_VALUE } from "../core/labels.ts";
import type { Logger } from "../core/log.ts";
import { describe, type KubeClient, type KubeObject, type ObjectRef } from "../kube/client.ts";
import { isConflict, isNotFound } from "../kube/errors.ts";
import { type CreatedEntry, type CreatedSet, ownerUids } from "./created-set.ts";
import { carriesInvocationLabels, type RunIdentity } from "./labels.ts";

export type CleanupOutcome = "deleted" | "already-gone" | "not-ours" | "left-behind" | "failed";

export interface ReceiptRow {
  kind: string;
  namespace?: string | undefined;
  name: string;
  uid?: string | undefined;
  outcome: CleanupOutcome;
  detail?: string | undefined;
  /** Owner UIDs, when known (the swept staging ConfigMap's Job). */
  owners?: string[] | undefined;
}

export interface CleanupOptions {
  client: KubeClient;
  created: CreatedSet;
  identity: RunIdentity;
  log: Logger;
  /** The run's staging ConfigMap, when the run owns its output (never a delivered cm:// target). */
  staging?: { namespace: string; name: string } | undefined;
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
    if (isNotFound(err)) return row(ref, "already-gone", { uid });
    if (isConflict(err))
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
    if (isNotFound(err)) return row(entry, "already-gone");
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

/** Whether this invocation still holds the Job whose agent writes the staging ConfigMap, and what was compared. */
interface JobHold {
  holds: boolean;
  /** The Job's name, the UID recorded at its create (absent when the response was lost) and the live one. */
  fields: { job?: string | undefined; jobUID?: string | undefined; liveJobUID?: string | undefined };
}

/**
 * A staging ConfigMap the run never observed: read before the wave (its Job's delete would let the
 * garbage collector take it first), kept unless the Job this invocation created still vouches for it
 * and the ConfigMap carries aicr's name label.
 */
async function planStagingSweep(
  o: CleanupOptions,
  staging: { namespace: string; name: string },
  heldJob: Promise<JobHold>,
): Promise<{ row?: ReceiptRow; delete?: { ref: ObjectRef; uid: string; owners?: string[] | undefined } }> {
  const ref = { apiVersion: "v1", kind: "ConfigMap", ...staging };
  const [cm, job] = await Promise.all([
    o.client.get<KubeObject>(ref).catch((err: unknown) => (isNotFound(err) ? undefined : err)),
    heldJob,
  ]);
  if (cm === undefined) return {};
  if (cm instanceof Error) return { row: row(ref, "failed", { detail: cm.message }) };
  const obj = cm as KubeObject;
  const uid = obj.metadata?.uid;
  const where = { name: staging.name, namespace: staging.namespace, uid, runID: o.identity.runId };
  if (!job.holds) {
    o.log.warn(
      "cleanup kept the ConfigMap at this run's staging name: the Job whose agent would write it is no longer this run's",
      { ...where, ...job.fields },
    );
    return { row: row(ref, "left-behind", { uid, detail: "no live Job of this invocation vouches for it" }) };
  }
  const appName = obj.metadata?.labels?.[LABEL.name];
  if (appName !== LABEL_VALUE.app || !uid) {
    o.log.warn("cleanup kept the ConfigMap at this run's staging name: it does not carry aicr's name label", {
      ...where,
      label: LABEL.name,
      value: appName,
    });
    return { row: row(ref, "left-behind", { uid, detail: `not labelled ${LABEL.name}=${LABEL_VALUE.app}` }) };
  }
  return { delete: { ref, uid, owners: ownerUids(obj) } };
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
  const needsSweep = o.staging && !entries.some((e) => e.kind === "ConfigMap");
  // Checked before the fan-out, in one read-only wave: the Job's own delete runs concurrently with
  // the rest. A Job whose create response was lost vouches only with the proof that lets cleanup delete it.
  const holdsJob = async (): Promise<JobHold> => {
    if (!job) return { holds: false, fields: {} };
    const live = await o.client.get<KubeObject>(job).catch(() => undefined);
    const liveUid = live?.metadata?.uid;
    const fields = { job: job.name, jobUID: job.uid, liveJobUID: liveUid };
    if (!liveUid) return { holds: false, fields };
    const holds = job.confirmed
      ? liveUid === job.uid
      : carriesInvocationLabels(live?.metadata?.labels, o.identity);
    return { holds, fields };
  };
  const sweep = needsSweep && o.staging ? await planStagingSweep(o, o.staging, holdsJob()) : {};
  // One concurrent wave: every delete carries its own UID precondition, so sending them together is
  // as safe as in sequence.
  const swept = sweep.delete;
  const rows: (ReceiptRow | undefined)[] = await Promise.all([
    ...entries.map((e) => deleteEntry(o, e)),
    ...(swept
      ? [deletePinned(o.client, swept.ref, swept.uid).then((r) => ({ ...r, owners: swept.owners }))]
      : []),
  ]);
  if (sweep.row) rows.push(sweep.row);
  creditCollected(rows, entries);
  const receipt = rows.filter((r): r is ReceiptRow => r !== undefined);
  for (const r of receipt)
    o.log.debug(`cleanup: ${r.outcome} ${describe({ apiVersion: "", ...r })}`, { uid: r.uid });
  return receipt;
}

/**
 * A dependent whose owner this cleanup deleted may be gone before its own DELETE arrives: the garbage
 * collector took it, because of this cleanup. Such a row reads "deleted", not "already-gone".
 */
function creditCollected(rows: (ReceiptRow | undefined)[], entries: CreatedEntry[]): void {
  const owners = new Map(entries.map((e) => [`${e.kind}/${e.namespace ?? ""}/${e.name}`, e.owners ?? []]));
  for (let changed = true; changed; ) {
    changed = false;
    const deleted = new Set(rows.filter((r) => r?.outcome === "deleted").map((r) => r?.uid));
    for (const r of rows) {
      if (r?.outcome !== "already-gone") continue;
      const mine = owners.get(`${r.kind}/${r.namespace ?? ""}/${r.name}`) ?? r.owners ?? [];
      if (!mine.some((uid) => deleted.has(uid))) continue;
      r.outcome = "deleted";
      r.detail = "collected with its owner by the garbage collector";
      changed = true;
    }
  }
  for (const r of rows) if (r) delete r.owners;
}
