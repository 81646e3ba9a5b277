/** What `aicr runs list` shows and `aicr runs delete` acts on: one run, as its objects in the cluster. */

/** Where to look: one namespace, or every namespace (`-A`); cluster-scoped objects are always read. */
export type RunsScope = { allNamespaces: true } | { allNamespaces: false; namespace: string };

/** A run's Jobs taken together (runs/_summary.ts combinedJobState); "none" when it has no Job. */
export type RunJobState = "active" | "complete" | "failed" | "none";

export interface RunObject {
  apiVersion: string;
  kind: string;
  namespace?: string | undefined;
  name: string;
  uid: string;
  /** The UIDs of its owners (ownerReferences). */
  owners: string[];
  created?: string | undefined;
}

export interface RunView {
  runId: string;
  /** From the run ID's timestamp, else the oldest object's. */
  created?: string | undefined;
  /** snapshot or validate (from the component label); "unknown" when no object says. */
  command: "snapshot" | "validate" | "unknown";
  /** The namespace its namespaced objects (or its ClusterRoleBinding's subjects) are in. */
  namespace?: string | undefined;
  job: RunJobState;
  /** A pod of the run is pending or running. */
  podLive: boolean;
  /** The anchor ClusterRole(s): aicr-node-reader-<runId>, aicr-validator-<runId>. */
  anchors: string[];
  objects: RunObject[];
}
