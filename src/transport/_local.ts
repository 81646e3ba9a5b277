import { existsSync } from "node:fs";
import { withTimeout } from "../core/async.ts";
import type { KubeClient } from "../kube/client.ts";
import type { Transport, TransportOptions } from "./types.ts";

const PROBE_TIMEOUT_MS = 3000;
const SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/**
 * Any host: the node collectors need no cluster. A cluster adds the K8s and topology readings only
 * when one is asked for (--kubeconfig or --context) or this process runs in a pod with a
 * ServiceAccount token; a kubeconfig merely present (KUBECONFIG, ~/.kube/config) is not read. Which
 * cluster was read, or that none was, is said; one that does not answer within 3 s is reported, not
 * an error.
 */
export function localTransport(options: TransportOptions): Transport {
  let client: Promise<KubeClient | undefined> | undefined;
  return {
    name: "local",
    contactsCluster: true,
    connect() {
      client ??= probe(options);
      return client;
    },
  };
}

const HOST_ONLY = "collecting this host only (K8s and NodeTopology skipped)";

async function probe(options: TransportOptions): Promise<KubeClient | undefined> {
  const explicit = Boolean(options.kubeconfig || options.context);
  const inCluster = Boolean(options.env.KUBERNETES_SERVICE_HOST) && existsSync(SERVICE_ACCOUNT_TOKEN);
  if (!explicit && !inCluster) {
    options.log.info(
      `no cluster read: ${HOST_ONLY}; pass --kubeconfig <path> or --context <name> to add a cluster's readings`,
    );
    return undefined;
  }
  const { KubeClient } = await import("../kube/client.ts");
  let client: KubeClient;
  try {
    client = KubeClient.connect({ ...options, allowInCluster: !explicit });
  } catch (err) {
    if (explicit) throw err; // a cluster asked for by flag that cannot be loaded is the operator's error
    options.log.warn(`the pod's cluster credentials cannot be used: no cluster read, ${HOST_ONLY}`, {
      reason: (err as Error).message,
    });
    return undefined;
  }
  try {
    await withTimeout(
      client.serverVersion(),
      PROBE_TIMEOUT_MS,
      () => new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`),
    );
  } catch (err) {
    options.log.warn(`cluster ${client.server} is not reachable: no cluster read, ${HOST_ONLY}`, {
      server: client.server,
      reason: String((err as Error).message),
    });
    return undefined;
  }
  options.log.info(
    `reading cluster ${client.server} (${client.origin}) for the K8s and NodeTopology readings`,
  );
  return client;
}
