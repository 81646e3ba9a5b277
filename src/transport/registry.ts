import type { Transport, TransportName } from "./types.ts";

/** The plugin seam: each transport is a plain factory in this record. */
const TRANSPORTS: Record<TransportName, () => Transport> = {
  offline: () => ({ name: "offline", contactsCluster: false }),
};

export function createTransport(name: TransportName): Transport {
  return TRANSPORTS[name]();
}
