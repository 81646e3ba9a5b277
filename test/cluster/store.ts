/**
 * In-memory object store of the fake apiserver — the etcd + registry layer. Stable public API
 * (controllers and the HTTP layer both write through it, so every write is watched):
 *
 *   const store = new Store({ now?: () => Date, historyLimit?: number });
 *   store.create(r, obj, { dryRun? })            → stored copy; uid, resourceVersion, creationTimestamp,
 *                                                   generation (kinds with a spec), generateName;
 *                                                   defaulting, validation and admission run here
 *   store.get(r, namespace, name)                 → copy; throws ApiStatusError 404
 *   store.find(r, namespace, name)                → copy | undefined
 *   store.list(r, { namespace?, labelSelector?, fieldSelector?, limit?, continue? })
 *                                                 → { items, resourceVersion, continue?, remainingItemCount? }
 *   store.update(r, obj, { subresource?: "status", dryRun? })
 *                                                 → 409 Conflict if obj.metadata.resourceVersion is stale;
 *                                                   an unchanged object is not written (no event)
 *   store.patch(r, namespace, name, "merge" | "strategic" | "json", patch, { subresource?, dryRun? })
 *                                                 → 409 only if the patch carries a stale resourceVersion
 *   store.mutate(r, namespace, name, fn, { subresource? })
 *                                                 → read-modify-write without conflicts (what patch uses)
 *   store.delete(r, namespace, name, DeleteOptions) → preconditions, propagationPolicy (the apiserver half:
 *                                                   finalizers + deletionTimestamp; dependents are the
 *                                                   garbage collector's job, see dependentsOf)
 *   store.watch(r, { namespace?, labelSelector?, fieldSelector?, resourceVersion?, allowBookmarks? }, send)
 *                                                 → stop(); throws 410 Expired for a compacted resourceVersion
 *   store.subscribe(listener)                     → unsubscribe(); every committed change, all resources,
 *                                                   delivered in commit order on a microtask
 *   store.bookmark()                              → sends a BOOKMARK to every watcher that allowed them
 *   store.compact()                               → forgets all watch history (next resume gets 410)
 *   store.dependentsOf(ownerUid)                  → [{ resource, object }] across all resources
 *   store.resourceVersion                         → current value of the one global counter
 *   store.watchCount                              → number of open watches
 *   store.admission.push(plugin)                  → extra admission (r, obj, store) => void | throw
 *
 * `r` is a ResourceType from resources.ts (`resource("pods")`). Errors are ApiStatusError (errors.ts).
 * The store does no authorization: callers that reach it directly act as system:masters.
 */
import { BUILTIN_ADMISSION, IMMORTAL_NAMESPACES } from "./admission.ts";
import { applyDefaults } from "./defaults.ts";
import {
  ApiStatusError,
  alreadyExists,
  badRequest,
  conflict,
  forbidden,
  notFound,
  STALE_OBJECT,
} from "./errors.ts";
import { supportedFields, unsupportedFieldMessage } from "./fields.ts";
import { clone, type DeleteOptions, deepFreeze, type KObject, keyOf, type WatchEvent } from "./objects.ts";
import { apiVersionOf, RESOURCES, type ResourceType, resource } from "./resources.ts";
import { parseFieldSelector, parseLabelSelector } from "./semantics/selectors.ts";
import { deletePlan, finishDeletionIfDone, preconditionFailure } from "./store-delete.ts";
import { paginate } from "./store-list.ts";
import { applyPatchType, type PatchType } from "./store-patch.ts";
import type {
  AdmissionPlugin,
  ListOptions,
  ListResult,
  StoreEvent,
  StoreOptions,
  WatchOptions,
} from "./store-types.ts";
import { isNoop, mergeForUpdate, validateFinalizers } from "./store-update.ts";
import { validateObject } from "./validation.ts";
import { eventFor, History, type HistoryEntry, type Watcher, type WatchFilter } from "./watch.ts";

export { ApiStatusError } from "./errors.ts";
export type { DeleteOptions, KObject } from "./objects.ts";
export { RESOURCES, type ResourceType, resource } from "./resources.ts";
export type { PatchType } from "./store-patch.ts";
export type {
  AdmissionPlugin,
  ListOptions,
  ListResult,
  StoreEvent,
  StoreOptions,
  WatchOptions,
} from "./store-types.ts";

export class Store {
  readonly now: () => Date;
  readonly admission: AdmissionPlugin[] = [];
  private rv = 0;
  private readonly data = new Map<ResourceType, Map<string, KObject>>();
  private readonly history: History;
  private readonly watchers = new Set<Watcher>();
  /** The same watchers by resource: a change is checked only against the watches of its resource. */
  private readonly watchersOf = new Map<ResourceType, Set<Watcher>>();
  private readonly listeners = new Set<(e: StoreEvent) => void>();
  private readonly tableVersions = new Map<ResourceType, number>();
  /** ownerReference uid → the stored objects naming it (resource and key): the GC asks on every sync. */
  private readonly byOwner = new Map<string, Map<string, { resource: ResourceType; key: string }>>();

  constructor(options: StoreOptions = {}) {
    this.now = options.now ?? (() => new Date());
    this.history = new History(options.historyLimit ?? 5000);
    for (const r of RESOURCES) if (r.stored) this.data.set(r, new Map());
    this.admission.push(...BUILTIN_ADMISSION);
  }

  /** Open watches (tests use it to see a client's watch end). */
  get watchCount(): number {
    return this.watchers.size;
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  private table(r: ResourceType): Map<string, KObject> {
    const t = this.data.get(r);
    if (!t) throw badRequest(`the server does not store ${r.plural}`);
    return t;
  }

  private timestamp(): string {
    return `${this.now().toISOString().slice(0, 19)}Z`;
  }

  find(r: ResourceType, namespace: string | undefined, name: string): KObject | undefined {
    const o = this.table(r).get(keyOf(r.namespaced ? namespace : undefined, name));
    return o && clone(o);
  }

  get(r: ResourceType, namespace: string | undefined, name: string): KObject {
    const o = this.find(r, namespace, name);
    if (!o) throw notFound(r, name);
    return o;
  }

  create(r: ResourceType, input: KObject, opts: { dryRun?: boolean } = {}): KObject {
    const obj = clone(input);
    obj.metadata ??= {};
    const m = obj.metadata;
    // The apiserver keeps at most 58 characters of generateName before the 5 random ones.
    if (!m.name && m.generateName) m.name = m.generateName.slice(0, 58) + randomSuffix();
    if (!r.namespaced) delete m.namespace;
    obj.apiVersion = apiVersionOf(r);
    obj.kind = r.kind;
    m.uid = crypto.randomUUID();
    m.creationTimestamp = this.timestamp();
    if (r.generation) m.generation = 1;
    else delete m.generation;
    delete m.resourceVersion;
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    applyDefaults(r, obj);
    validateObject(r, obj);
    for (const plugin of this.admission) plugin(r, obj, this);
    if (this.table(r).has(keyOf(m.namespace, m.name!))) throw alreadyExists(r, m.name!);
    if (opts.dryRun) return obj;
    const created = this.commit(r, "ADDED", obj);
    // Simplification: the serviceaccount controller's "default" ServiceAccount appears synchronously.
    if (r.plural === "namespaces")
      this.create(resource("serviceaccounts"), { metadata: { name: "default", namespace: m.name! } });
    return created;
  }

  /**
   * The stored objects themselves, not copies, in key order: for derived views that only read (the
   * RBAC snapshot the authorizer consults on every request). Never mutate what this returns.
   */
  storedObjects(r: ResourceType): readonly KObject[] {
    return [...this.table(r).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, o]) => o);
  }

  list(r: ResourceType, opts: ListOptions = {}): ListResult {
    const w: Watcher = { resource: r, filter: this.filter(r, opts), bookmarks: false, send() {} };
    const matching = [...this.table(r).values()].filter((o) => eventFor(w, fakeEntry(r, o)));
    return paginate(matching, opts, this.rv, this.history.oldestAvailable);
  }

  update(r: ResourceType, input: KObject, opts: { subresource?: string; dryRun?: boolean } = {}): KObject {
    const m = input.metadata ?? {};
    const old = this.table(r).get(keyOf(r.namespaced ? m.namespace : undefined, m.name ?? ""));
    if (!old) throw notFound(r, m.name ?? "");
    if (m.resourceVersion && m.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(r, m.name!, STALE_OBJECT);
    }
    if (m.uid && m.uid !== old.metadata.uid) {
      throw conflict(
        r,
        m.name!,
        `Precondition failed: UID in precondition: ${m.uid}, UID in object meta: ${old.metadata.uid}`,
      );
    }
    const next = mergeForUpdate(r, old, clone(input), opts.subresource);
    validateObject(r, next);
    validateFinalizers(r, old, next);
    // As etcd's guaranteed update: identical content is not written, so no resourceVersion or event.
    if (isNoop(old, next)) return clone(old);
    if (opts.dryRun) return next;
    if (r.plural !== "namespaces" && finishDeletionIfDone(next)) return this.remove(r, next);
    return this.commit(r, "MODIFIED", next, old);
  }

  /** Applies `fn` to the live object and stores the result (a patch never conflicts unless it carries a resourceVersion). */
  mutate(
    r: ResourceType,
    namespace: string | undefined,
    name: string,
    fn: (live: KObject) => KObject,
    opts: { subresource?: string; dryRun?: boolean } = {},
  ): KObject {
    const live = this.get(r, namespace, name);
    const rv = live.metadata.resourceVersion;
    const next = fn(clone(live));
    next.metadata ??= {};
    next.metadata.resourceVersion ??= rv;
    next.metadata.name = name;
    if (r.namespaced) next.metadata.namespace = namespace;
    return this.update(r, next, opts);
  }

  /** PATCH semantics: "merge" (RFC 7386), "strategic" (strategic merge patch) or "json" (RFC 6902). */
  patch(
    r: ResourceType,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    opts: { subresource?: string; dryRun?: boolean } = {},
  ): KObject {
    return this.mutate(r, namespace, name, (live) => applyPatchType(type, live, patch), opts);
  }

  delete(r: ResourceType, namespace: string | undefined, name: string, opts: DeleteOptions = {}): KObject {
    const live = this.table(r).get(keyOf(r.namespaced ? namespace : undefined, name));
    if (!live) throw notFound(r, name);
    if (r.plural === "namespaces" && IMMORTAL_NAMESPACES.includes(name)) {
      throw forbidden(r, name, `namespaces "${name}" is forbidden: this namespace may not be deleted`);
    }
    const failure = preconditionFailure(live, opts);
    if (failure) {
      // The storage's precondition check names the Kind (with its group), not the resource.
      const kind = r.group ? `${r.kind}.${r.group}` : r.kind;
      throw new ApiStatusError(
        409,
        "Conflict",
        `Operation cannot be fulfilled on ${kind} "${name}": ${failure}`,
        {
          name,
          ...(r.group ? { group: r.group } : {}),
          kind: r.kind,
        },
      );
    }
    const plan = deletePlan(r, live, opts, this.timestamp());
    if (opts.dryRun) return plan.object;
    if (plan.remove) {
      const gone = this.remove(r, plan.object);
      if (r.plural === "namespaces") this.emptyNamespace(name);
      return gone;
    }
    if (!plan.changed) return clone(live);
    const marked = this.commit(r, "MODIFIED", plan.object, live);
    if (r.plural === "namespaces") this.emptyNamespace(name);
    return marked;
  }

  watch(r: ResourceType, opts: WatchOptions, send: (ev: WatchEvent) => void): () => void {
    const w: Watcher = { resource: r, filter: this.filter(r, opts), bookmarks: !!opts.allowBookmarks, send };
    const from =
      opts.resourceVersion && opts.resourceVersion !== "0" ? Number(opts.resourceVersion) : undefined;
    if (from !== undefined && !Number.isFinite(from))
      throw badRequest(`invalid resource version: ${opts.resourceVersion}`);
    const replay: WatchEvent[] = [];
    if (from === undefined || opts.sendInitialEvents) {
      for (const o of this.list(r, opts).items) replay.push({ type: "ADDED", object: o });
      if (opts.sendInitialEvents && w.bookmarks) {
        const end = bookmarkObject(r, this.rv);
        (end.metadata as Record<string, unknown>).annotations = { "k8s.io/initial-events-end": "true" };
        replay.push({ type: "BOOKMARK", object: end });
      }
    } else {
      for (const e of this.history.since(from, this.rv)) {
        const ev = eventFor(w, e);
        if (ev) replay.push({ type: ev.type, object: clone(ev.object) });
      }
    }
    for (const ev of replay) send(ev);
    this.watchers.add(w);
    let same = this.watchersOf.get(r);
    if (!same) {
      same = new Set();
      this.watchersOf.set(r, same);
    }
    same.add(w);
    return () => {
      this.watchers.delete(w);
      this.watchersOf.get(r)?.delete(w);
    };
  }

  subscribe(listener: (e: StoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  bookmark(): void {
    for (const w of this.watchers) {
      if (!w.bookmarks) continue;
      w.send({ type: "BOOKMARK", object: bookmarkObject(w.resource, this.rv) });
    }
  }

  compact(): void {
    this.history.compact(this.rv);
  }

  dependentsOf(ownerUid: string): { resource: ResourceType; object: KObject }[] {
    const out: { resource: ResourceType; object: KObject }[] = [];
    for (const { resource: r, key } of this.byOwner.get(ownerUid)?.values() ?? []) {
      const o = this.table(r).get(key);
      if (o) out.push({ resource: r, object: clone(o) });
    }
    return out;
  }

  private filter(
    r: ResourceType,
    opts: { namespace?: string; labelSelector?: string; fieldSelector?: string },
  ): WatchFilter {
    const f: WatchFilter = {};
    if (r.namespaced && opts.namespace) f.namespace = opts.namespace;
    try {
      if (opts.labelSelector) f.labels = parseLabelSelector(opts.labelSelector);
      if (opts.fieldSelector)
        f.fields = parseFieldSelector(opts.fieldSelector, supportedFields(r), unsupportedFieldMessage(r));
    } catch (e) {
      throw badRequest((e as Error).message);
    }
    return f;
  }

  /** How many times a resource's table changed: lets derived views (the RBAC snapshot) be cached. */
  tableVersion(r: ResourceType): number {
    return this.tableVersions.get(r) ?? 0;
  }

  private bump(r: ResourceType): void {
    this.tableVersions.set(r, this.tableVersion(r) + 1);
  }

  private indexOwners(r: ResourceType, key: string, obj: KObject | undefined, add: boolean): void {
    for (const ref of obj?.metadata.ownerReferences ?? []) {
      const id = `${r.group}/${r.plural}/${key}`;
      let deps = this.byOwner.get(ref.uid);
      if (add) {
        if (!deps) {
          deps = new Map();
          this.byOwner.set(ref.uid, deps);
        }
        deps.set(id, { resource: r, key });
      } else if (deps) {
        deps.delete(id);
        if (deps.size === 0) this.byOwner.delete(ref.uid);
      }
    }
  }

  private commit(r: ResourceType, type: "ADDED" | "MODIFIED", obj: KObject, old?: KObject): KObject {
    this.bump(r);
    obj.metadata.resourceVersion = String(++this.rv);
    const stored = deepFreeze(clone(obj));
    const key = keyOf(obj.metadata.namespace, obj.metadata.name!);
    this.indexOwners(r, key, this.table(r).get(key), false);
    this.table(r).set(key, stored);
    this.indexOwners(r, key, stored, true);
    this.publish({ rv: this.rv, resource: r, type, object: stored, ...(old ? { oldObject: old } : {}) });
    return clone(stored);
  }

  private remove(r: ResourceType, obj: KObject): KObject {
    const key = keyOf(obj.metadata.namespace, obj.metadata.name!);
    const old = this.table(r).get(key);
    this.indexOwners(r, key, old, false);
    this.table(r).delete(key);
    this.bump(r);
    obj.metadata.resourceVersion = String(++this.rv);
    const stored = deepFreeze(clone(obj));
    this.publish({
      rv: this.rv,
      resource: r,
      type: "DELETED",
      object: stored,
      ...(old ? { oldObject: old } : {}),
    });
    if (r.namespaced && obj.metadata.namespace) this.maybeFinishNamespace(obj.metadata.namespace);
    return clone(stored);
  }

  private publish(e: HistoryEntry): void {
    this.history.append(e);
    // Stored objects are frozen: watchers and controllers share them instead of each getting a copy.
    for (const w of this.watchersOf.get(e.resource) ?? []) {
      const ev = eventFor(w, { ...e, type: e.type === "DELETED" ? "DELETED" : e.type });
      if (ev) w.send(ev);
    }
    const change: StoreEvent = { type: e.type, resource: e.resource, object: e.object };
    if (e.oldObject) change.oldObject = e.oldObject;
    for (const l of this.listeners) queueMicrotask(() => l(change));
  }

  // Simplification: the namespace controller's work (deleting every object in a terminating
  // namespace, then the namespace) happens synchronously here.
  private emptyNamespace(ns: string): void {
    for (const [r, t] of this.data) {
      if (!r.namespaced) continue;
      for (const o of [...t.values()]) {
        if (o.metadata.namespace !== ns || o.metadata.deletionTimestamp) continue;
        this.delete(r, ns, o.metadata.name!, { propagationPolicy: "Background" });
      }
    }
    this.maybeFinishNamespace(ns);
  }

  private maybeFinishNamespace(ns: string): void {
    const nsr = RESOURCES.find((x) => x.plural === "namespaces")!;
    const live = this.table(nsr).get(keyOf(undefined, ns));
    if (!live?.metadata.deletionTimestamp) return;
    for (const [r, t] of this.data) {
      if (r.namespaced && [...t.values()].some((o) => o.metadata.namespace === ns)) return;
    }
    if ((live.metadata.finalizers ?? []).length > 0) return;
    this.remove(nsr, clone(live));
  }
}

function fakeEntry(r: ResourceType, o: KObject): HistoryEntry {
  return { rv: 0, resource: r, type: "ADDED", object: o };
}

function bookmarkObject(r: ResourceType, rv: number): Record<string, unknown> {
  return { kind: r.kind, apiVersion: apiVersionOf(r), metadata: { resourceVersion: String(rv) } };
}

const ALNUM = "bcdfghjklmnpqrstvwxz2456789";
export function randomSuffix(n = 5): string {
  let s = "";
  for (let i = 0; i < n; i++) s += ALNUM[Math.floor(Math.random() * ALNUM.length)];
  return s;
}

export function isApiStatusError(e: unknown): e is ApiStatusError {
  return e instanceof ApiStatusError;
}
