/**
 * How this process reaches a cluster. A command names the transport it needs; the run context
 * builds it. `offline` is for commands that must never open a connection (render-rbac).
 */
export type TransportName = "offline";

export interface Transport {
  readonly name: TransportName;
  /** True when the command may contact an apiserver; false guarantees it never loads a kubeconfig. */
  readonly contactsCluster: boolean;
}
