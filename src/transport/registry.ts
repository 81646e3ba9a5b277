import { AicrError } from "../core/errors.ts";
import { inClusterTransport } from "./_in-cluster.ts";
import { localTransport } from "./_local.ts";
import { remoteTransport } from "./_remote.ts";
import type { Transport, TransportName, TransportOptions } from "./types.ts";

/** The plugin seam: each transport is a plain factory in this record. */
const TRANSPORTS: Record<TransportName, (options: TransportOptions) => Transport> = {
  offline: () => ({
    name: "offline",
    contactsCluster: false,
    connect: () => Promise.reject(new AicrError("INTERNAL", "this command never contacts a cluster")),
  }),
  local: localTransport,
  "in-cluster": inClusterTransport,
  remote: remoteTransport,
};

export function createTransport(name: TransportName, options: TransportOptions): Transport {
  return TRANSPORTS[name](options);
}
