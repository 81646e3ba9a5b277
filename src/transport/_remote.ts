import type { KubeClient } from "../kube/client.ts";
import type { Transport, TransportOptions } from "./types.ts";

/** The jump host: --kubeconfig, else KUBECONFIG, else ~/.kube/config, with --context. A cluster is required. */
export function remoteTransport(options: TransportOptions): Transport {
  let client: Promise<KubeClient> | undefined;
  return {
    name: "remote",
    contactsCluster: true,
    connect() {
      client ??= import("../kube/client.ts").then(({ KubeClient }) =>
        KubeClient.connect({ ...options, allowInCluster: false }),
      );
      return client;
    },
  };
}
