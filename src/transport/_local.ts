import { existsSync } from "node:fs";
import { withTimeout } from "../core/async.ts";
import type { KubeClient } from "../kube/client.ts";
import type { Transport, TransportOptions } from "./types.ts";

const PROBE_TIMEOUT_MS = 3000;

/**
 * Any host: the node collectors need no cluster. A configured, answering cluster adds the K8s and
 * topology readings; none configured, or one that does not answer, is reported and is not an error.
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

async function probe(options: TransportOptions): Promise<KubeClient | undefined> {
  const { resolveKubeConfigPath } = await import("../kube/config.ts");
  const path = resolveKubeConfigPath({ ...options, allowInCluster: false });
  if (!options.kubeconfig && !options.env.KUBECONFIG && (!path || !existsSync(path))) {
    options.log.info("no cluster configured: collecting this host only (K8s and NodeTopology skipped)");
    return undefined;
  }
  const { KubeClient } = await import("../kube/client.ts");
  let client: KubeClient;
  try {
    client = KubeClient.connect({ ...options });
  } catch (err) {
    if (options.kubeconfig) throw err; // an explicit --kubeconfig that cannot be read is the operator's error
    options.log.warn("the configured kubeconfig cannot be used: collecting this host only", {
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
    return client;
  } catch (err) {
    options.log.warn("the configured cluster is not reachable: collecting this host only", {
      server: client.server,
      reason: String((err as Error).message),
    });
    return undefined;
  }
}
