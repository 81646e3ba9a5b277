import { AicrError } from "../core/errors.ts";
import type { Readings, Snapshot, Subtype } from "./schema.ts";

/**
 * Cloud node-pool dumps projected into K8s readings (pure). Each dump is what the cloud's own CLI
 * prints; only the fields named below are read, and a value the dump does not carry is never made up.
 *
 *   --oke-addons    `oci ce cluster list-addons --cluster-id … --all --output json`
 *                   → K8s.oke-addons: nvidia-gpu-plugin (lifecycle-state), nvidia-gpu-plugin-version
 *   --aks-gpu-pools `az aks nodepool list … -o json`
 *                   → K8s.aks-gpu-pools: gpu-driver, gpu-driver.<pool>, gpu-pool-count
 *   --gke-gpu-pools `gcloud container node-pools list --cluster … --format=json`
 *                   → K8s.gke-gpu-pools: gpu-driver-installation, gpu-driver-installation.<pool>, gpu-pool-count
 *
 * Several pools: the main key is the sorted set of distinct values joined by "," (one value when every
 * pool agrees), and each pool has its own `<key>.<pool>` reading.
 */
export type ProviderKind = "oke-addons" | "aks-gpu-pools" | "gke-gpu-pools";

export const PROVIDER_KINDS: readonly ProviderKind[] = ["oke-addons", "aks-gpu-pools", "gke-gpu-pools"];

/** The command that prints each dump, for messages and help. */
export const PROVIDER_SOURCES: Readonly<Record<ProviderKind, string>> = {
  "oke-addons": "oci ce cluster list-addons --cluster-id <ocid> --all --output json",
  "aks-gpu-pools": "az aks nodepool list --resource-group <rg> --cluster-name <name> -o json",
  "gke-gpu-pools": "gcloud container node-pools list --cluster <name> --format=json",
};

/** The OKE add-on that runs NVIDIA's device plugin. */
export const OKE_GPU_ADDON = "NvidiaGpuPlugin";
/** OKE has no such add-on installed (it is absent from the dump). */
export const NOT_INSTALLED = "not-installed";
/** AKS installs the driver when gpuProfile.driver is not given. */
export const AKS_DEFAULT_DRIVER = "Install";
/** GKE without gpuDriverInstallationConfig: the driver is installed by the operator or a DaemonSet. */
export const GKE_UNSET = "unset";

type Json = Record<string, unknown>;

const isObject = (x: unknown): x is Json => typeof x === "object" && x !== null && !Array.isArray(x);

function shapeError(kind: ProviderKind, source: string, detail: string): AicrError {
  return new AicrError(
    "INVALID_REQUEST",
    `invalid --${kind} ${JSON.stringify(source)}: ${detail}; expected the JSON that \`${PROVIDER_SOURCES[kind]}\` prints`,
    {
      remedy: `write the file with: ${PROVIDER_SOURCES[kind]} > ${source}`,
      context: { field: `--${kind}`, value: source },
    },
  );
}

function text(x: unknown): string | undefined {
  if (typeof x === "string" && x !== "") return x;
  if (typeof x === "number" && Number.isFinite(x)) return String(x);
  return undefined;
}

/** A sorted set of values joined by "," plus one reading per pool. */
function perPool(key: string, pools: [string, string][]): Readings {
  const data: Readings = { "gpu-pool-count": pools.length };
  if (pools.length === 0) return data;
  data[key] = [...new Set(pools.map(([, value]) => value))].sort().join(",");
  for (const [pool, value] of pools) data[`${key}.${pool}`] = value;
  return data;
}

function projectOke(json: unknown, source: string): Readings {
  const list = isObject(json) ? json.data : json;
  if (!Array.isArray(list)) throw shapeError("oke-addons", source, `no "data" list of add-ons`);
  const addons = list.filter(isObject);
  if (addons.length !== list.length) throw shapeError("oke-addons", source, "an add-on is not an object");
  const gpu = addons.find((a) => a["addon-name"] === OKE_GPU_ADDON || a.name === OKE_GPU_ADDON);
  if (!gpu) return { "nvidia-gpu-plugin": NOT_INSTALLED };
  const data: Readings = {
    "nvidia-gpu-plugin": text(gpu["lifecycle-state"]) ?? text(gpu.state) ?? "unknown",
  };
  const version = text(gpu["current-installed-version"]) ?? text(gpu.version);
  if (version) data["nvidia-gpu-plugin-version"] = version;
  return data;
}

function poolName(kind: ProviderKind, source: string, pool: Json, i: number): string {
  const name = text(pool.name);
  if (!name) throw shapeError(kind, source, `pool [${i}] has no "name"`);
  return name;
}

function poolList(kind: ProviderKind, json: unknown, source: string): Json[] {
  if (!Array.isArray(json)) throw shapeError(kind, source, "not a JSON list of node pools");
  const pools = json.filter(isObject);
  if (pools.length !== json.length) throw shapeError(kind, source, "a node pool is not an object");
  return pools;
}

/** N-series VM sizes carry NVIDIA GPUs (Standard_NC…, Standard_ND…, Standard_NV…). */
const AKS_GPU_VM = /^standard_n[cdv]/i;

function projectAks(json: unknown, source: string): Readings {
  const pools: [string, string][] = [];
  poolList("aks-gpu-pools", json, source).forEach((pool, i) => {
    const name = poolName("aks-gpu-pools", source, pool, i);
    const profile = isObject(pool.gpuProfile) ? pool.gpuProfile : undefined;
    const vmSize = text(pool.vmSize) ?? "";
    if (!profile && !AKS_GPU_VM.test(vmSize)) return; // not a GPU pool
    pools.push([name, text(profile?.driver) ?? AKS_DEFAULT_DRIVER]);
  });
  return perPool(
    "gpu-driver",
    pools.sort(([a], [b]) => a.localeCompare(b)),
  );
}

function projectGke(json: unknown, source: string): Readings {
  const pools: [string, string][] = [];
  poolList("gke-gpu-pools", json, source).forEach((pool, i) => {
    const name = poolName("gke-gpu-pools", source, pool, i);
    const config = isObject(pool.config) ? pool.config : {};
    const accelerators = Array.isArray(config.accelerators) ? config.accelerators.filter(isObject) : [];
    if (accelerators.length === 0) return; // not a GPU pool
    const versions = accelerators.map((a) => {
      const install = isObject(a.gpuDriverInstallationConfig) ? a.gpuDriverInstallationConfig : {};
      return text(install.gpuDriverVersion) ?? GKE_UNSET;
    });
    pools.push([name, [...new Set(versions)].sort().join(",")]);
  });
  return perPool(
    "gpu-driver-installation",
    pools.sort(([a], [b]) => a.localeCompare(b)),
  );
}

const PROJECTIONS: Readonly<Record<ProviderKind, (json: unknown, source: string) => Readings>> = {
  "oke-addons": projectOke,
  "aks-gpu-pools": projectAks,
  "gke-gpu-pools": projectGke,
};

/** The dump's text → the K8s subtype named after the flag; bad JSON or shape is INVALID_REQUEST. */
export function projectProvider(kind: ProviderKind, content: string, source: string): Subtype {
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch {
    // no detail: the parser's message quotes the text it stopped at
    throw shapeError(kind, source, "not valid JSON");
  }
  const data = PROJECTIONS[kind](json, source);
  const sorted: Readings = {};
  for (const key of Object.keys(data).sort()) sorted[key] = data[key] as Readings[string];
  return { subtype: kind, data: sorted };
}

/**
 * The document with `subtypes` in its K8s measurement (created first in the list when absent); a
 * subtype of the same name is replaced. Pure: the input document is not changed.
 */
export function mergeK8sSubtypes(doc: Snapshot, subtypes: readonly Subtype[]): Snapshot {
  if (subtypes.length === 0) return doc;
  const names = new Set(subtypes.map((s) => s.subtype));
  const k8s = doc.measurements.find((m) => m.type === "K8s");
  const merged = {
    type: "K8s" as const,
    subtypes: [...(k8s?.subtypes ?? []).filter((s) => !names.has(s.subtype)), ...subtypes],
  };
  return {
    ...doc,
    measurements: k8s ? doc.measurements.map((m) => (m === k8s ? merged : m)) : [merged, ...doc.measurements],
  };
}
