/** Types of the store's public API (see store.ts). */
import type { KObject } from "./objects.ts";
import type { ResourceType } from "./resources.ts";
import type { Store } from "./store.ts";

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

export interface ListResult {
  items: KObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Unset or "0": start with ADDED for every current object. Otherwise replay history after it. */
  resourceVersion?: string;
  allowBookmarks?: boolean;
  /**
   * A watch-list (sendInitialEvents=true): ADDED for every current object whatever the resourceVersion,
   * then, with bookmarks allowed, a BOOKMARK annotated k8s.io/initial-events-end before the changes.
   */
  sendInitialEvents?: boolean;
}

export interface StoreEvent {
  type: "ADDED" | "MODIFIED" | "DELETED";
  resource: ResourceType;
  object: KObject;
  oldObject?: KObject;
}

export type AdmissionPlugin = (r: ResourceType, obj: KObject, store: Store) => void;

export interface StoreOptions {
  now?: () => Date;
  /** Events kept for watch resumption before older ones are compacted. */
  historyLimit?: number;
}
