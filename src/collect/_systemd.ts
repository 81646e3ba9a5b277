import type { Json, V1Node } from "../kube/types.ts";
import type { ClusterReader } from "./_k8s-source.ts";
import { openSystemd, readUnit } from "./_systemd-dbus.ts";
import { type CollectorOptions, errorText, type Measurement, type Readings } from "./_types.ts";

export const SYSTEMD_UNITS = ["containerd.service", "docker.service", "kubelet.service"] as const;

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
 * Otherwise one subtype per unit systemd knows (over D-Bus, see openSystemd and _systemd-readings.ts);
 * no reachable systemd gives an empty measurement and one warning.
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
  const conn = await openSystemd(options);
  if (!conn) return { type: "SystemD", subtypes: [] };
  try {
    const results = await Promise.all(
      SYSTEMD_UNITS.map(async (unit) => {
        try {
          const data = await readUnit(conn, unit, options.signal);
          return data && { subtype: unit, data };
        } catch (err) {
          if (options.signal.aborted) throw err;
          options.log.warn("systemd unit could not be read; left out", { unit, cause: errorText(err) });
          return undefined;
        }
      }),
    );
    return { type: "SystemD", subtypes: results.filter((s) => s !== undefined) };
  } finally {
    conn.close();
  }
}
