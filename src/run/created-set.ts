import type { ObjectRef } from "../kube/client.ts";

/** One object this run means to own: recorded before its create, confirmed with the UID the create returned. */
export interface CreatedEntry extends ObjectRef {
  uid?: string | undefined;
  confirmed: boolean;
  /** UIDs of its ownerReferences: deleting an owner lets the garbage collector take it too. */
  owners?: string[] | undefined;
  /** Found by a read after a lost create response, not returned by the create itself. */
  adopted?: boolean | undefined;
}

/** The owner UIDs an object's metadata names. */
export const ownerUids = (o: { metadata?: { ownerReferences?: { uid?: string }[] } }): string[] | undefined =>
  o.metadata?.ownerReferences?.map((r) => r.uid ?? "").filter(Boolean);

const key = (r: ObjectRef): string => `${r.kind}/${r.namespace ?? ""}/${r.name}`;

/**
 * The cleanup journal. An intent is recorded before the request, so a create whose response was lost
 * is still known; cleanup then proves ownership before deleting it.
 */
export class CreatedSet {
  private readonly entries = new Map<string, CreatedEntry>();

  recordIntent(ref: ObjectRef, owners?: string[]): void {
    const k = key(ref);
    if (!this.entries.has(k)) this.entries.set(k, { ...ref, confirmed: false, owners });
  }

  confirm(ref: ObjectRef, uid: string, owners?: string[], options: { adopted?: boolean } = {}): void {
    const known = this.entries.get(key(ref))?.owners;
    this.entries.set(key(ref), {
      ...ref,
      uid,
      confirmed: true,
      owners: owners ?? known,
      adopted: options.adopted,
    });
  }

  discard(ref: ObjectRef): void {
    this.entries.delete(key(ref));
  }

  find(kind: string): CreatedEntry | undefined {
    for (const e of this.entries.values()) if (e.kind === kind) return { ...e };
    return undefined;
  }

  /** A copy: callers never hold the live map. */
  list(): CreatedEntry[] {
    return [...this.entries.values()].map((e) => ({ ...e }));
  }
}
