import type { Json, V1Node } from "../kube/types.ts";
import { findOnPath, runCommand } from "./_exec.ts";
import type { ClusterReader } from "./_k8s-source.ts";
import { type CollectorOptions, errorText, type Measurement, type Readings } from "./_types.ts";

export const SYSTEMD_UNITS = ["containerd.service", "docker.service", "kubelet.service"] as const;
const SHOW_TIMEOUT_MS = 10_000;
// Noise or sensitive: CPU/NUMA pinning masks, condition bookkeeping, attached BPF programs, bus names.
const DROPPED = new Set(["AllowedCPUs", "AllowedMemoryNodes", "Asserts", "BPFProgram", "BusName", "Id"]);

/**
 * `systemctl show` output → readings, values kept as the strings systemctl prints. Properties named
 * above and any containing "Credential" are dropped. Undefined when the unit is not loaded
 * (LoadState=not-found), so absent services are left out rather than reported empty.
 */
export function parseSystemctlShow(output: string): Readings | undefined {
  const out: Readings = {};
  for (const line of output.split("\n")) {
    const eq = line.indexOf("=");
    if (eq <= 0) continue;
    const key = line.slice(0, eq);
    if (DROPPED.has(key) || key.includes("Credential")) continue;
    out[key] = line.slice(eq + 1);
  }
  if (Object.keys(out).length === 0 || out.LoadState === "not-found") return undefined;
  return out;
}

async function showUnit(
  options: CollectorOptions,
  systemctl: string,
  unit: string,
): Promise<Readings | undefined> {
  const result = await runCommand(systemctl, ["show", "--no-pager", unit], {
    env: options.env,
    signal: options.signal,
    timeoutMs: SHOW_TIMEOUT_MS,
  });
  if (result.exitCode !== 0) {
    // "System has not been booted with systemd" and a missing /run/systemd both land here.
    options.log.debug("systemctl show failed", {
      unit,
      exitCode: result.exitCode,
      stderr: result.stderr.trim(),
    });
    return undefined;
  }
  return parseSystemctlShow(result.stdout);
}

export interface SystemdOptions extends CollectorOptions {
  /** The Kubernetes API, for nodes without systemd (AICR_OS=talos). */
  cluster?: ClusterReader | undefined;
  /** This agent's node. */
  nodeName?: string | undefined;
}

/** Where the reading came from: on Talos the node's units are seen only through its Node object. */
export const NODE_API_SOURCE = "kubernetes-api";

/** `containerd://1.7.20` → ["containerd", "1.7.20"]; the runtime's unit is named after the scheme. */
function runtimeOf(id: string | undefined): [string, string] | undefined {
  const sep = id?.indexOf("://") ?? -1;
  if (!id || sep <= 0) return undefined;
  return [id.slice(0, sep), id.slice(sep + 3)];
}

const RUNTIME_UNITS: Readonly<Record<string, string>> = {
  containerd: "containerd.service",
  docker: "docker.service",
  "cri-o": "crio.service",
};

/**
 * The SystemD measurement of a node without systemd access (Talos), from its Node object only (pure).
 * `kubelet.service`: kubelet-version (status.nodeInfo), ready / ready-reason / ready-since (the Ready
 * condition as the kubelet last posted it), condition.<Type> for every other condition. The container
 * runtime's unit (`containerd.service` for containerd://…): runtime and runtime-version (nodeInfo).
 * Every subtype says source=kubernetes-api: these are what the kubelet reports, not unit states.
 */
export function systemdFromNode(node: Json<V1Node>): Measurement {
  const info = node.status?.nodeInfo;
  const kubelet: Readings = { source: NODE_API_SOURCE };
  if (info?.kubeletVersion) kubelet["kubelet-version"] = info.kubeletVersion;
  for (const c of node.status?.conditions ?? []) {
    if (c.type === "Ready") {
      kubelet.ready = c.status;
      if (c.reason) kubelet["ready-reason"] = c.reason;
      if (c.lastTransitionTime) kubelet["ready-since"] = String(c.lastTransitionTime);
    } else kubelet[`condition.${c.type}`] = c.status;
  }
  const subtypes: Measurement["subtypes"] = [];
  const runtime = runtimeOf(info?.containerRuntimeVersion);
  if (runtime) {
    const unit = RUNTIME_UNITS[runtime[0]] ?? `${runtime[0]}.service`;
    subtypes.push({
      subtype: unit,
      data: { runtime: runtime[0], "runtime-version": runtime[1], source: NODE_API_SOURCE },
    });
  }
  subtypes.push({ subtype: "kubelet.service", data: kubelet });
  subtypes.sort((a, b) => a.subtype.localeCompare(b.subtype));
  return { type: "SystemD", subtypes };
}

/**
 * SystemD: with AICR_OS=talos, from the agent's Node object (see systemdFromNode; no cluster: empty).
 * Otherwise one subtype per loaded unit; no systemctl or no reachable systemd gives an empty measurement.
 */
export async function collectSystemd(options: SystemdOptions): Promise<Measurement> {
  if (options.env.AICR_OS === "talos") {
    if (!options.cluster || !options.nodeName) {
      options.log.warn(
        "talos: SystemD is read from the Node object, but no cluster was read; SystemD is empty",
      );
      return { type: "SystemD", subtypes: [] };
    }
    const node = await options.cluster.getNode(options.nodeName, { signal: options.signal });
    return systemdFromNode(node);
  }
  const systemctl = await findOnPath("systemctl", options.env);
  if (!systemctl) {
    options.log.debug("systemctl not found on PATH; SystemD measurement is empty");
    return { type: "SystemD", subtypes: [] };
  }
  const results = await Promise.all(
    SYSTEMD_UNITS.map(async (unit) => {
      try {
        const data = await showUnit(options, systemctl, unit);
        return data && { subtype: unit, data };
      } catch (err) {
        if (options.signal.aborted) throw err;
        options.log.warn("systemctl show could not run; unit left out", { unit, cause: errorText(err) });
        return undefined;
      }
    }),
  );
  return { type: "SystemD", subtypes: results.filter((s) => s !== undefined) };
}
