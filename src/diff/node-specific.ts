import type { Reading } from "../snapshot/schema.ts";
import { ignoreMatcher } from "./glob.ts";

/**
 * Node-specific readings: what `aicr diff --fleet` never reports as drift (pure). A fleet's nodes
 * are expected to differ in who they are, not in how they are set up. Two rules, both small:
 *
 * 1. By path — NODE_SPECIFIC_PATHS, written in --ignore's glob syntax (`*` within a segment, `**`
 *    across): identity readings (hostnames, the node's name and provider ID, serial numbers, UUIDs,
 *    GUIDs, MAC and PCI addresses, the node's own hostname label), the kernel's per-boot random
 *    values and live counters, and NodeTopology (cluster-wide node lists each agent reads at its own
 *    moment, not a property of its node). `--ignore` globs add to this list.
 * 2. By value — a reading whose value differs on every node that carries it, when each value looks
 *    like identity (see looksLikeIdentity): the node's own name (or its first DNS label), a UUID or
 *    GUID, a MAC address, a PCI address, or a comma-separated list of those. A different kernel on each
 *    of two nodes is still drift: a version does not look like identity.
 */
export const NODE_SPECIFIC_PATHS: readonly string[] = [
  // The node itself (metadata is never compared: it is not a reading).
  "K8s.node.source-node",
  "K8s.node.provider-id",
  "K8s.node.node-name",
  "K8s.node.hostname",
  "K8s.node.machine-id",
  "K8s.node.system-uuid",
  "K8s.node.boot-id",
  '**["context.node"]',
  "**kubernetes.io/hostname",
  // Per-boot random values and live counters of the kernel.
  "OS.sysctl./proc/sys/kernel/hostname",
  "OS.sysctl./proc/sys/kernel/random/uuid",
  "OS.sysctl./proc/sys/kernel/random/boot_id",
  "OS.sysctl./proc/sys/kernel/random/entropy_avail",
  "OS.sysctl./proc/sys/kernel/ns_last_pid",
  "OS.sysctl./proc/sys/fs/dentry-state",
  "OS.sysctl./proc/sys/fs/file-nr",
  "OS.sysctl./proc/sys/fs/inode-nr",
  "OS.sysctl./proc/sys/fs/inode-state",
  // Hardware identity, wherever a collector puts it (a reading or an item's context).
  "**.pci-address",
  "**.bus-id",
  "**.serial",
  "**.serial-number",
  "**.uuid",
  "**.node-guid",
  "**.port-guid",
  "**.sys-image-guid",
  "**.mac-address",
  // Cluster-wide node lists (taints, labels, counts), read by every agent at its own moment.
  "NodeTopology.**",
];

/** True for a path rule 1 leaves out. */
export const isNodeSpecificPath: (path: string) => boolean = ignoreMatcher(NODE_SPECIFIC_PATHS);

const UUID = /^(?:[A-Za-z]+-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const GUID = /^(?:0x[0-9a-f]{16}|[0-9a-f]{4}(?::[0-9a-f]{4}){3})$/i;
const MAC = /^[0-9a-f]{2}(?:[:-][0-9a-f]{2}){5}$|^[0-9a-f]{2}(?::[0-9a-f]{2}){19}$/i;
const PCI = /^(?:[0-9a-f]{4,8}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/i;

const firstLabel = (name: string): string => name.split(".")[0] ?? name;

/**
 * The value looks like an identity of `node`: its own name (the first DNS labels equal, so
 * `gpu-1.ec2.internal` is node `gpu-1`), a UUID (also `GPU-<uuid>`), an InfiniBand GUID, a MAC
 * address (6 or 20 bytes), a PCI address, or a comma-separated list of those.
 */
export function looksLikeIdentity(value: Reading, node: string): boolean {
  if (typeof value !== "string") return false;
  const text = value.trim();
  if (text === "") return false;
  if (text === node || firstLabel(text) === firstLabel(node)) return true;
  return text.split(",").every((part) => {
    const p = part.trim();
    return UUID.test(p) || GUID.test(p) || MAC.test(p) || PCI.test(p);
  });
}

/**
 * Rule 2: the values (one per node that carries the reading, under a key `same` uses to decide
 * equality) are all different and each looks like its node's identity.
 */
export function isNodeSpecificByValue(
  values: readonly { node: string; value: Reading }[],
  key: (value: Reading) => string,
): boolean {
  if (values.length === 0) return false;
  const seen = new Set<string>();
  for (const { node, value } of values) {
    const k = key(value);
    if (seen.has(k) || !looksLikeIdentity(value, node)) return false;
    seen.add(k);
  }
  return true;
}
