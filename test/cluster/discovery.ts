/** Discovery documents: /version, /api, /api/v1, /apis, /apis/<group>/<version>. */
import { apiVersionOf, RESOURCES, type ResourceType } from "./resources.ts";

// The release of the real control plane (test/control-plane), so kubectl of that release warns of no
// skew; the suffix tells the fake apart. The emulation/minCompatibility fields of 1.36 are left out.
export const VERSION_INFO = {
  major: "1",
  minor: "36",
  gitVersion: "v1.36.3-aicr-fake",
  gitCommit: "0000000000000000000000000000000000000000",
  gitTreeState: "clean",
  buildDate: "2026-01-01T00:00:00Z",
  goVersion: "go1.26.0",
  compiler: "gc",
  platform: "linux/amd64",
};

function groups(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of RESOURCES) {
    if (r.group === "") continue;
    const versions = out.get(r.group) ?? [];
    if (!versions.includes(r.version)) versions.push(r.version);
    out.set(r.group, versions);
  }
  return out;
}

export function apiVersions(host: string) {
  return {
    kind: "APIVersions",
    versions: ["v1"],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: host }],
  };
}

// Simplification: legacy discovery only; client-go falls back from aggregated discovery to these.
export function apiGroupList() {
  return {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: [...groups()].map(([name, versions]) => {
      const vs = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
      return { name, versions: vs, preferredVersion: vs[0] };
    }),
  };
}

export function apiGroup(group: string) {
  const versions = groups().get(group);
  if (!versions) return undefined;
  const vs = versions.map((version) => ({ groupVersion: `${group}/${version}`, version }));
  return { kind: "APIGroup", apiVersion: "v1", name: group, versions: vs, preferredVersion: vs[0] };
}

function entry(r: ResourceType) {
  const e: Record<string, unknown> = {
    name: r.plural,
    singularName: r.singular,
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: r.verbs,
  };
  if (r.shortNames.length > 0) e.shortNames = r.shortNames;
  if (r.categories) e.categories = r.categories;
  return e;
}

const SUBRESOURCE_VERBS: Record<string, string[]> = {
  status: ["get", "patch", "update"],
  log: ["get"],
  exec: ["create", "get"],
};

export function resourceList(group: string, version: string) {
  const rs = RESOURCES.filter((r) => r.group === group && r.version === version);
  if (rs.length === 0) return undefined;
  const resources = rs.flatMap((r) => [
    entry(r),
    ...r.subresources.map((s) => ({
      name: `${r.plural}/${s}`,
      singularName: "",
      namespaced: r.namespaced,
      kind: s === "log" ? "Pod" : s === "exec" ? "PodExecOptions" : r.kind,
      verbs: SUBRESOURCE_VERBS[s] ?? ["get"],
    })),
  ]);
  return { kind: "APIResourceList", apiVersion: "v1", groupVersion: apiVersionOf(rs[0]!), resources };
}
