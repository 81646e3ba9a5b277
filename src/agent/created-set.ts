import type { ObjectRef } from "../kube/client.ts";

/** One object this run means to own: recorded before its create, confirmed with the UID the create returned. */
export interface CreatedEntry extends ObjectRef {
  uid?: string | undefined;
  confirmed: boolean;
}

const key = (r: ObjectRef): string => `${r.kind}/${r.namespace ?? ""}/${r.name}`;

/**
 * The cleanup journal. An intent is recorded before the request, so a create whose response was lost
 * is still known; cleanup then proves ownership before deleting it.
 */
export class CreatedSet {
  private readonly entries = new Map<string, CreatedEntry>();

  recordIntent(ref: ObjectRef): void {
    const k = key(ref);
    if (!this.entries.has(k)) this.entries.set(k, { ...ref, confirmed: false });
  }

  confirm(ref: ObjectRef, uid: string): void {
    this.entries.set(key(ref), { ...ref, uid, confirmed: true });
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
