/** core/v1 Events as controllers and the kubelet record them (EventRecorder, without aggregation). */
import { type KObject, resource, type Store } from "../store.ts";
import type { Clock } from "./clock.ts";
import { rfc3339 } from "./clock.ts";

export interface EventSource {
  component: string;
  host?: string;
}

export type EventRecorder = (
  involved: KObject,
  type: "Normal" | "Warning",
  reason: string,
  message: string,
  fieldPath?: string,
) => void;

const hex = (n: number): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(n / 2)), (b) => b.toString(16).padStart(2, "0")).join("");

// Simplification: every event is a new object (count 1); the real recorder aggregates repeats by key.
export function eventRecorder(store: Store, clock: Clock, source: EventSource): EventRecorder {
  return (involved, type, reason, message, fieldPath) => {
    const m = involved.metadata;
    const ns = m.namespace ?? "default";
    const now = rfc3339(clock.now());
    const event: KObject = {
      metadata: { name: `${m.name}.${hex(16)}`, namespace: ns },
      involvedObject: {
        kind: involved.kind,
        namespace: m.namespace,
        name: m.name,
        uid: m.uid,
        apiVersion: involved.apiVersion,
        resourceVersion: m.resourceVersion,
        ...(fieldPath ? { fieldPath } : {}),
      },
      reason,
      message,
      source,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      type,
      eventTime: null,
      reportingComponent: source.component,
      reportingInstance: source.host ?? "",
    };
    try {
      store.create(resource("events"), event);
    } catch {
      // Events are best effort, as in the real recorder (e.g. the namespace is terminating).
    }
  };
}
