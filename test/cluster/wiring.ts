/** Starts the controllers (test/cluster/controllers/, owned separately) against a cluster's store. */
import type { Authenticator } from "./auth.ts";
import {
  type Controllers,
  type ControllerOptions as Options,
  startControllers as start,
} from "./controllers/index.ts";
import { kubeconfigText } from "./kubeconfig.ts";
import type { Store } from "./store.ts";

/** What a container runtime needs to know about the apiserver its processes talk to. */
export interface ApiserverAccess {
  url: string;
  caCert: string | undefined;
  tokenForServiceAccount(namespace: string, name: string): string;
  /** Kubeconfig file content that authenticates as the ServiceAccount (for processRuntime). */
  kubeconfigForServiceAccount(namespace: string, name: string): Promise<string>;
}

export interface ControllerOptions extends Options {
  /** Builds the runtime once the apiserver's address is known (for runtimes that spawn clients). */
  runtimeFactory?: (apiserver: ApiserverAccess) => NonNullable<Options["runtime"]>;
}

export function startControllers(
  store: Store,
  auth: Authenticator,
  url: string,
  caCert: string | undefined,
  options: ControllerOptions,
): Controllers {
  const apiserver: ApiserverAccess = {
    url,
    caCert,
    tokenForServiceAccount: (ns, n) => auth.tokenForServiceAccount(ns, n),
    kubeconfigForServiceAccount: async (ns, n) =>
      kubeconfigText(
        url,
        caCert,
        `system:serviceaccount:${ns}:${n}`,
        { token: auth.tokenForServiceAccount(ns, n) },
        ns,
      ),
  };
  const { runtimeFactory, ...rest } = options;
  const runtime = runtimeFactory ? runtimeFactory(apiserver) : options.runtime;
  return start(store, { ...rest, ...(runtime ? { runtime } : {}) });
}
