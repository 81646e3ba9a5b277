/**
 * MirrorStore: the real backend's `cluster.store`. Reads (find/get/list) are synchronous, from a cache
 * kept by list+watch of every mirrored resource, as an informer keeps one; `subscribe` fires after each
 * applied event, so the suites' `untilStore(cluster, …)` waits (test/support/until.ts) work unchanged.
 * Writes go to the real apiserver as admin (not through the fault proxy, like the fake's direct store
 * writes: they are not in the request log) and resolve once the cache holds their result
 * (read-your-writes).
 */
import { untilStore } from "../../support/until.ts";
import { ApiStatusError, notFound } from "../errors.ts";
import { supportedFields } from "../fields.ts";
import type { DeleteOptions, KObject } from "../objects.ts";
import type { ResourceType } from "../resources.ts";
import {
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
} from "../semantics/selectors.ts";
import type { ListOptions } from "../store-types.ts";
import { type AdminHttp, pathOf, withKind } from "./admin-http.ts";

export interface StoreEventLike {
  type: "ADDED" | "MODIFIED" | "DELETED";
  resource: ResourceType;
  object: KObject;
}

/** What the suites use of a cluster's store, on either backend. Writes may be asynchronous. */
export interface StoreView {
  find(r: ResourceType, namespace: string | undefined, name: string): KObject | undefined;
  get(r: ResourceType, namespace: string | undefined, name: string): KObject;
  list(r: ResourceType, opts?: ListOptions): { items: KObject[] };
  subscribe(listener: (e: StoreEventLike) => void): () => void;
  create(r: ResourceType, obj: KObject): KObject | Promise<KObject>;
  delete(r: ResourceType, namespace: string | undefined, name: string, opts?: DeleteOptions): unknown;
  mutate(
    r: ResourceType,
    namespace: string | undefined,
    name: string,
    fn: (o: KObject) => KObject,
    opts?: { subresource?: string },
  ): KObject | Promise<KObject>;
}

const key = (ns: string | undefined, name: string) => `${ns ?? ""}/${name}`;

export class MirrorStore implements StoreView {
  private readonly cache = new Map<ResourceType, Map<string, KObject>>();
  /** The newest resourceVersion each resource's cache has caught up with (events, bookmarks, lists). */
  private readonly caughtUp = new Map<ResourceType, bigint>();
  private readonly listeners = new Set<(e: StoreEventLike) => void>();
  private readonly abort = new AbortController();
  private readonly loops: Promise<void>[] = [];

  constructor(
    private readonly http: AdminHttp,
    resources: ResourceType[],
  ) {
    for (const r of resources) this.cache.set(r, new Map());
  }

  /** Lists every resource, then keeps watching; resolves once every first list is in. */
  async start(): Promise<void> {
    await Promise.all([...this.cache.keys()].map((r) => this.mirror(r)));
  }

  /** Adds a resource (e.g. a custom resource once its CRD is established). */
  async add(r: ResourceType): Promise<void> {
    if (this.cache.has(r)) return;
    this.cache.set(r, new Map());
    await this.mirror(r);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled(this.loops);
  }

  private async mirror(r: ResourceType): Promise<void> {
    const rv = await this.relist(r);
    this.loops.push(this.watchLoop(r, rv));
  }

  private async relist(r: ResourceType): Promise<string> {
    const list = (await this.http.request("GET", pathOf(r))) as {
      items: KObject[];
      metadata: { resourceVersion: string };
    };
    const map = this.cache.get(r)!;
    const seen = new Set<string>();
    for (const item of list.items) {
      const o = withKind(r, item);
      const k = key(o.metadata.namespace, o.metadata.name!);
      seen.add(k);
      const old = map.get(k);
      if (old?.metadata.resourceVersion === o.metadata.resourceVersion) continue;
      map.set(k, o);
      this.emit({ type: old ? "MODIFIED" : "ADDED", resource: r, object: o });
    }
    for (const [k, o] of map) {
      if (seen.has(k)) continue;
      map.delete(k);
      this.emit({ type: "DELETED", resource: r, object: o });
    }
    this.advance(r, list.metadata.resourceVersion);
    return list.metadata.resourceVersion;
  }

  private advance(r: ResourceType, rv: string | undefined): void {
    if (!rv) return;
    const v = BigInt(rv);
    if (v > (this.caughtUp.get(r) ?? 0n)) this.caughtUp.set(r, v);
  }

  private async watchLoop(r: ResourceType, from: string): Promise<void> {
    let rv = from;
    const signal = this.abort.signal;
    while (!signal.aborted) {
      try {
        const res = await this.http.stream(
          `${pathOf(r)}?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`,
          signal,
        );
        const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
        let buf = "";
        let gone = false;
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let nl = buf.indexOf("\n");
          while (nl >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            nl = buf.indexOf("\n");
            if (!line.trim()) continue;
            const ev = JSON.parse(line) as { type: string; object: KObject };
            if (ev.type === "ERROR") {
              gone = true;
              continue;
            }
            rv = ev.object.metadata.resourceVersion ?? rv;
            if (ev.type === "BOOKMARK") {
              this.advance(r, rv);
              continue;
            }
            this.apply(r, ev.type as StoreEventLike["type"], withKind(r, ev.object));
          }
        }
        if (gone) rv = await this.relist(r);
      } catch (e) {
        if (signal.aborted) return;
        await Bun.sleep(100);
        rv = await this.relist(r).catch(() => rv);
        void e;
      }
    }
  }

  private apply(r: ResourceType, type: StoreEventLike["type"], o: KObject): void {
    const map = this.cache.get(r)!;
    const k = key(o.metadata.namespace, o.metadata.name!);
    if (type === "DELETED") map.delete(k);
    else map.set(k, o);
    this.advance(r, o.metadata.resourceVersion);
    this.emit({ type, resource: r, object: o });
  }

  private emit(e: StoreEventLike): void {
    for (const l of [...this.listeners]) l(e);
  }

  subscribe(listener: (e: StoreEventLike) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private mapOf(r: ResourceType): Map<string, KObject> {
    const map = this.cache.get(r);
    if (!map) throw new Error(`${r.plural} is not mirrored from the real apiserver`);
    return map;
  }

  find(r: ResourceType, namespace: string | undefined, name: string): KObject | undefined {
    return this.mapOf(r).get(key(r.namespaced ? namespace : undefined, name));
  }

  get(r: ResourceType, namespace: string | undefined, name: string): KObject {
    const o = this.find(r, namespace, name);
    if (!o) throw notFound(r, name);
    return o;
  }

  list(r: ResourceType, opts: ListOptions = {}): { items: KObject[] } {
    const labels = opts.labelSelector ? parseLabelSelector(opts.labelSelector) : undefined;
    const fields = opts.fieldSelector
      ? parseFieldSelector(opts.fieldSelector, supportedFields(r))
      : undefined;
    const items = [...this.mapOf(r).values()]
      .filter((o) => !opts.namespace || o.metadata.namespace === opts.namespace)
      .filter((o) => !labels || matchesLabels(labels, o.metadata.labels))
      .filter((o) => !fields || matchesFields(fields, o))
      .sort((a, b) =>
        key(a.metadata.namespace, a.metadata.name!).localeCompare(
          key(b.metadata.namespace, b.metadata.name!),
        ),
      );
    return { items };
  }

  /** Resolves when `cond` holds on the cache (checked now and after every applied event). */
  async until(
    cond: () => boolean,
    what: string | (() => string) = "the mirror to catch up",
    ms = 60_000,
  ): Promise<void> {
    await untilStore({ store: this }, cond, what, ms);
  }

  /**
   * Resolves once the cache of `r` has caught up with the write that returned `o` — the object as of
   * then, or gone (an update that removed the last finalizer of a deleted object deletes it).
   */
  private async seen(r: ResourceType, o: KObject): Promise<KObject> {
    if (!this.cache.has(r)) return o;
    const want = BigInt(o.metadata.resourceVersion ?? "0");
    await this.until(() => (this.caughtUp.get(r) ?? 0n) >= want);
    return this.find(r, o.metadata.namespace, o.metadata.name!) ?? o;
  }

  async create(r: ResourceType, obj: KObject): Promise<KObject> {
    const created = (await this.http.request(
      "POST",
      pathOf(r, obj.metadata.namespace),
      withKind(r, obj),
    )) as KObject;
    return this.seen(r, withKind(r, created));
  }

  async mutate(
    r: ResourceType,
    namespace: string | undefined,
    name: string,
    fn: (o: KObject) => KObject,
    opts: { subresource?: string } = {},
  ): Promise<KObject> {
    for (;;) {
      const current = withKind(r, (await this.http.request("GET", pathOf(r, namespace, name))) as KObject);
      const next = fn(structuredClone(current));
      try {
        const updated = (await this.http.request(
          "PUT",
          pathOf(r, namespace, name, opts.subresource),
          next,
        )) as KObject;
        return this.seen(r, withKind(r, updated));
      } catch (e) {
        if (e instanceof ApiStatusError && e.code === 409) continue;
        throw e;
      }
    }
  }

  async delete(
    r: ResourceType,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions = {},
  ): Promise<KObject> {
    const body = { apiVersion: "v1", kind: "DeleteOptions", ...opts };
    const out = (await this.http.request("DELETE", pathOf(r, namespace, name), body)) as KObject;
    if (this.cache.has(r))
      await this.until(() => {
        const o = this.find(r, namespace, name);
        return !o || o.metadata.deletionTimestamp !== undefined;
      });
    return out;
  }
}
