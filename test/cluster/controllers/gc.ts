/**
 * The garbage collector: deletes dependents whose owners are gone, runs Foreground deletion (dependents
 * first; the owner waits for those with blockOwnerDeletion) and Orphan deletion (ownerReferences removed).
 */
import { type KObject, RESOURCES, type ResourceType, type Store, type StoreEvent } from "../store.ts";
import type { Clock } from "./clock.ts";
import { isStatusError, resourceForKind, sameJson } from "./k8s.ts";
import { type Backoff, WorkQueue } from "./queue.ts";

const ORPHAN = "orphan";
const FOREGROUND = "foregroundDeletion";

type Ref = NonNullable<KObject["metadata"]["ownerReferences"]>[number];

const objKey = (kind: "dep" | "owner", r: ResourceType, o: KObject) =>
  [kind, r.group, r.plural, o.metadata.namespace ?? "", o.metadata.name].join("|");

export class GarbageCollector {
  private readonly queue: WorkQueue;

  constructor(
    private readonly store: Store,
    opts: { clock: Clock; backoff: Backoff; onError?: (key: string, err: unknown) => void },
  ) {
    this.queue = new WorkQueue(opts.clock, (k) => this.sync(k), opts.backoff, opts.onError);
    for (const r of RESOURCES) {
      if (!r.stored) continue;
      for (const o of store.list(r).items) {
        if (o.metadata.ownerReferences?.length) this.queue.add(objKey("dep", r, o));
        if (o.metadata.deletionTimestamp) this.queue.add(objKey("owner", r, o));
      }
    }
  }

  onEvent(e: StoreEvent): void {
    const o = e.object;
    const refs = o.metadata.ownerReferences ?? [];
    if (e.type === "DELETED") {
      this.queue.add(`gone|${o.metadata.uid}`);
      // An owner in foreground deletion may have been waiting for this dependent.
      for (const ref of refs) this.queueOwner(ref, o.metadata.namespace);
      return;
    }
    if (
      refs.length > 0 &&
      (e.type === "ADDED" || !sameJson(refs, e.oldObject?.metadata.ownerReferences ?? []))
    ) {
      this.queue.add(objKey("dep", e.resource, o));
    }
    if (o.metadata.deletionTimestamp) {
      this.queue.add(objKey("owner", e.resource, o));
      for (const ref of refs) this.queueOwner(ref, o.metadata.namespace);
    }
  }

  stop(): Promise<void> {
    return this.queue.stop();
  }

  private queueOwner(ref: Ref, dependentNs: string | undefined): void {
    const r = resourceForKind(ref.apiVersion, ref.kind);
    if (r)
      this.queue.add(
        ["owner", r.group, r.plural, r.namespaced ? (dependentNs ?? "") : "", ref.name].join("|"),
      );
  }

  private sync(key: string): undefined {
    const [kind, a, plural, ns, name] = key.split("|");
    if (kind === "gone") {
      for (const d of this.store.dependentsOf(a!)) this.checkDependent(d.resource, d.object);
      return undefined;
    }
    const r = RESOURCES.find((x) => x.group === a && x.plural === plural)!;
    const obj = this.store.find(r, ns || undefined, name!);
    if (!obj) return undefined;
    if (kind === "dep") this.checkDependent(r, obj);
    else this.processOwner(r, obj);
    return undefined;
  }

  private owner(ref: Ref, dependentNs: string | undefined): KObject | undefined | "unknown" {
    const r = resourceForKind(ref.apiVersion, ref.kind);
    if (!r) return "unknown";
    const o = this.store.find(r, r.namespaced ? dependentNs : undefined, ref.name);
    return o && o.metadata.uid === ref.uid ? o : undefined;
  }

  /** attemptToDeleteItem: keep, drop dangling references, or delete the dependent. */
  private checkDependent(r: ResourceType, dep: KObject): void {
    if (dep.metadata.deletionTimestamp) return;
    const refs = dep.metadata.ownerReferences ?? [];
    const solid: Ref[] = [];
    const dangling: Ref[] = [];
    const waiting: Ref[] = [];
    for (const ref of refs) {
      const o = this.owner(ref, dep.metadata.namespace);
      // Owners of kinds this fake does not serve cannot be verified; treat them as present.
      if (o === "unknown") solid.push(ref);
      else if (!o) dangling.push(ref);
      else if (o.metadata.deletionTimestamp && o.metadata.finalizers?.includes(FOREGROUND)) waiting.push(ref);
      else solid.push(ref);
    }
    if (solid.length === refs.length) return;
    const ns = dep.metadata.namespace;
    try {
      if (solid.length > 0) {
        const drop = new Set([...dangling, ...waiting].map((x) => x.uid));
        this.store.mutate(r, ns, dep.metadata.name!, (live) => {
          live.metadata.ownerReferences = (live.metadata.ownerReferences ?? []).filter(
            (x) => !drop.has(x.uid),
          );
          return live;
        });
        return;
      }
      const fin = dep.metadata.finalizers ?? [];
      const hasDependents = this.store.dependentsOf(dep.metadata.uid!).length > 0;
      const policy =
        waiting.length > 0 && hasDependents
          ? "Foreground"
          : fin.includes(ORPHAN)
            ? "Orphan"
            : fin.includes(FOREGROUND)
              ? "Foreground"
              : "Background";
      this.store.delete(r, ns, dep.metadata.name!, {
        propagationPolicy: policy,
        preconditions: { uid: dep.metadata.uid! },
      });
    } catch (err) {
      if (!isStatusError(err, 404) && !isStatusError(err, 409)) throw err;
    }
  }

  /** An owner being deleted with the orphan or foregroundDeletion finalizer. */
  private processOwner(r: ResourceType, owner: KObject): void {
    const fin = owner.metadata.finalizers ?? [];
    if (!owner.metadata.deletionTimestamp) return;
    const uid = owner.metadata.uid!;
    const { namespace, name } = owner.metadata;
    try {
      if (fin.includes(ORPHAN)) {
        for (const d of this.store.dependentsOf(uid)) {
          this.store.mutate(d.resource, d.object.metadata.namespace, d.object.metadata.name!, (live) => {
            live.metadata.ownerReferences = (live.metadata.ownerReferences ?? []).filter(
              (x) => x.uid !== uid,
            );
            return live;
          });
        }
        this.removeFinalizer(r, namespace, name!, uid, ORPHAN);
      } else if (fin.includes(FOREGROUND)) {
        for (const d of this.store.dependentsOf(uid)) this.checkDependent(d.resource, d.object);
        const blocking = this.store
          .dependentsOf(uid)
          .filter((d) =>
            d.object.metadata.ownerReferences?.some((x) => x.uid === uid && x.blockOwnerDeletion),
          );
        if (blocking.length === 0) this.removeFinalizer(r, namespace, name!, uid, FOREGROUND);
      }
    } catch (err) {
      if (!isStatusError(err, 404) && !isStatusError(err, 409)) throw err;
    }
  }

  private removeFinalizer(
    r: ResourceType,
    ns: string | undefined,
    name: string,
    uid: string,
    finalizer: string,
  ): void {
    this.store.mutate(r, ns, name, (live) => {
      if (live.metadata.uid !== uid) throw Object.assign(new Error("replaced"), { code: 404 });
      live.metadata.finalizers = (live.metadata.finalizers ?? []).filter((f) => f !== finalizer);
      return live;
    });
  }
}
