/**
 * Watch machinery of the store: an event history with compaction, and watchers that filter by
 * namespace and selectors. A watch from a compacted resourceVersion fails with 410 Expired.
 */
import { expired } from "./errors.ts";
import type { KObject, WatchEvent } from "./objects.ts";
import type { ResourceType } from "./resources.ts";
import {
  type FieldSelector,
  type LabelSelector,
  matchesFields,
  matchesLabels,
} from "./semantics/selectors.ts";

export interface HistoryEntry {
  rv: number;
  resource: ResourceType;
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: KObject;
  oldObject?: KObject;
}

export interface WatchFilter {
  namespace?: string;
  labels?: LabelSelector;
  fields?: FieldSelector;
}

export interface Watcher {
  resource: ResourceType;
  filter: WatchFilter;
  bookmarks: boolean;
  send(ev: WatchEvent): void;
}

export function matchesFilter(f: WatchFilter, obj: KObject): boolean {
  if (f.namespace !== undefined && obj.metadata.namespace !== f.namespace) return false;
  if (f.labels && !matchesLabels(f.labels, obj.metadata.labels)) return false;
  if (f.fields && !matchesFields(f.fields, obj)) return false;
  return true;
}

/**
 * Translates a stored change into what a filtered watcher sees: an object leaving the selection
 * arrives as DELETED, one entering it as ADDED (as the apiserver's watch cache does). The DELETED of an
 * object leaving carries its previous content, the one the watcher saw match, at the event's
 * resourceVersion (cacheWatcher.convertToWatchEvent).
 */
export function eventFor(w: Watcher, e: HistoryEntry): WatchEvent | undefined {
  if (e.resource !== w.resource) return undefined;
  const now = matchesFilter(w.filter, e.object);
  if (e.type !== "MODIFIED" || !e.oldObject) return now ? { type: e.type, object: e.object } : undefined;
  const before = matchesFilter(w.filter, e.oldObject);
  if (now && before) return { type: "MODIFIED", object: e.object };
  if (now) return { type: "ADDED", object: e.object };
  if (before) {
    const metadata = { ...e.oldObject.metadata, resourceVersion: e.object.metadata.resourceVersion };
    return { type: "DELETED", object: { ...e.oldObject, metadata } };
  }
  return undefined;
}

export class History {
  private entries: HistoryEntry[] = [];
  /** Every resourceVersion at or below this one has been compacted away. */
  private compactedThrough = 0;

  constructor(private readonly limit: number) {}

  append(e: HistoryEntry): void {
    this.entries.push(e);
    if (this.entries.length > this.limit) {
      const dropped = this.entries.splice(0, this.entries.length - this.limit);
      this.compactedThrough = dropped[dropped.length - 1]!.rv;
    }
  }

  /** Drops all history up to `rv`, as etcd compaction does. */
  compact(rv: number): void {
    this.entries = this.entries.filter((e) => e.rv > rv);
    this.compactedThrough = Math.max(this.compactedThrough, rv);
  }

  /** Events after `rv`; throws 410 Expired if some of them were compacted away. */
  since(rv: number, current: number): HistoryEntry[] {
    if (rv < this.compactedThrough) {
      throw expired(`too old resource version: ${rv} (${this.compactedThrough + 1})`);
    }
    // Simplification: a future resourceVersion starts the watch at once instead of waiting for it.
    if (rv > current) return [];
    return this.entries.filter((e) => e.rv > rv);
  }

  get oldestAvailable(): number {
    return this.compactedThrough;
  }
}
