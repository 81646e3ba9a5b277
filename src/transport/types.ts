import type { Logger } from "../core/log.ts";
import type { KubeClient } from "../kube/client.ts";

/**
 * How this process reaches a cluster: the plugin seam of the run context.
 *  - offline:    never opens a connection (render-rbac);
 *  - local:      collect this host; use a cluster only if one is asked for (or in a pod) and answers;
 *  - in-cluster: the agent inside the Job's pod (KUBECONFIG when set, else the pod's ServiceAccount);
 *  - remote: the operator's jump host (kubeconfig as kubectl resolves it); a cluster is required.
 */
export type TransportName = "offline" | "local" | "in-cluster" | "remote";

export interface Transport {
  readonly name: TransportName;
  /** False guarantees no kubeconfig is ever loaded. */
  readonly contactsCluster: boolean;
  /** The cluster client, or undefined where the transport may run without one (local, none configured). */
  connect(): Promise<KubeClient | undefined>;
}

export interface TransportOptions {
  kubeconfig?: string | undefined;
  context?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  log: Logger;
}
