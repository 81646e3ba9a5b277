import type { Transport, TransportOptions } from "./types.ts";

/** The agent in the Job's pod: credentials as kubectl resolves them, else the pod's ServiceAccount. */
export function inClusterTransport(options: TransportOptions): Transport {
  let client: Promise<import("../kube/client.ts").KubeClient> | undefined;
  return {
    name: "in-cluster",
    contactsCluster: true,
    connect() {
      client ??= import("../kube/client.ts").then(({ KubeClient }) =>
        KubeClient.connect({ ...options, kubeconfig: options.kubeconfig, allowInCluster: true }),
      );
      return client;
    },
  };
}
