/**
 * Pod Security Standards checks (k8s.io/pod-security-admission, latest), with the real reason/detail strings.
 * Order is the real registry's: baseline check IDs sorted, then restricted check IDs sorted.
 */

type Json = any;
type Check = (spec: Json) => string | undefined;

const quoteJoin = (items: readonly string[]): string => items.map((i) => `"${i}"`).join(", ");
const plural = (one: string, many: string, n: number): string => (n === 1 ? one : many);
const containers = (spec: Json): Json[] => [
  ...(spec.initContainers ?? []),
  ...(spec.containers ?? []),
  ...(spec.ephemeralContainers ?? []),
];
const sc = (c: Json): Json => c?.securityContext ?? {};
const named = (n: number, names: string[]): string =>
  `${plural("container", "containers", n)} ${quoteJoin(names)}`;
const uniqSorted = (xs: string[]): string[] => [...new Set(xs)].sort();
const result = (reason: string, detail: string): string => (detail ? `${reason} (${detail})` : reason);
function setters(pod: boolean, names: string[], tail: string): string {
  const who: string[] = pod ? ["pod"] : [];
  if (names.length > 0) who.push(named(names.length, names));
  return `${who.join(" and ")}${tail}`;
}

const BASELINE_CAPS = new Set(
  "AUDIT_WRITE CHOWN DAC_OVERRIDE FOWNER FSETID KILL MKNOD NET_BIND_SERVICE SETFCAP SETGID SETPCAP SETUID SYS_CHROOT".split(
    " ",
  ),
);
const ALLOWED_VOLUMES =
  "configMap csi downwardAPI emptyDir ephemeral image persistentVolumeClaim projected secret".split(" ");
const RESTRICTED_VOLUMES =
  "hostPath gcePersistentDisk awsElasticBlockStore gitRepo nfs iscsi glusterfs rbd flexVolume cinder cephfs flocker fc azureFile vsphereVolume quobyte azureDisk photonPersistentDisk portworxVolume scaleIO storageos".split(
    " ",
  );

const hostNamespaces: Check = (s) => {
  const f = (["hostNetwork", "hostPID", "hostIPC"] as const)
    .filter((k) => s[k] === true)
    .map((k) => `${k}=true`);
  return f.length ? result("host namespaces", f.join(", ")) : undefined;
};

const hostPathVolumes: Check = (s) => {
  const v = (s.volumes ?? []).filter((x: Json) => x?.hostPath != null).map((x: Json) => String(x.name));
  return v.length
    ? result("hostPath volumes", `${plural("volume", "volumes", v.length)} ${quoteJoin(v)}`)
    : undefined;
};

const hostPorts: Check = (s) => {
  const bad: string[] = [];
  const ports: string[] = [];
  for (const c of containers(s)) {
    const used = (c.ports ?? []).map((p: Json) => Number(p.hostPort ?? 0)).filter((p: number) => p !== 0);
    if (used.length === 0) continue;
    bad.push(c.name);
    ports.push(...used.map(String));
  }
  if (bad.length === 0) return undefined;
  const u = uniqSorted(ports);
  return result(
    "hostPort",
    `${named(bad.length, bad)} ${plural("uses", "use", bad.length)} ${plural("hostPort", "hostPorts", u.length)} ${u.join(", ")}`,
  );
};

const privileged: Check = (s) => {
  const bad = containers(s)
    .filter((c) => sc(c).privileged === true)
    .map((c) => c.name);
  return bad.length
    ? result("privileged", `${named(bad.length, bad)} must not set securityContext.privileged=true`)
    : undefined;
};

const capabilitiesBaseline: Check = (s) => {
  const bad: string[] = [];
  const caps: string[] = [];
  for (const c of containers(s)) {
    const extra = (sc(c).capabilities?.add ?? []).filter((x: string) => !BASELINE_CAPS.has(x));
    if (extra.length === 0) continue;
    bad.push(c.name);
    caps.push(...extra);
  }
  if (bad.length === 0) return undefined;
  const detail = `${named(bad.length, bad)} must not include ${quoteJoin(uniqSorted(caps))} in securityContext.capabilities.add`;
  return result("non-default capabilities", detail);
};

const allowPrivilegeEscalation: Check = (s) => {
  const bad = containers(s)
    .filter((c) => sc(c).allowPrivilegeEscalation !== false)
    .map((c) => c.name);
  if (bad.length === 0) return undefined;
  return result(
    "allowPrivilegeEscalation != false",
    `${named(bad.length, bad)} must set securityContext.allowPrivilegeEscalation=false`,
  );
};

const capabilitiesRestricted: Check = (s) => {
  const noDrop: string[] = [];
  const adding: string[] = [];
  const caps: string[] = [];
  for (const c of containers(s)) {
    const cap = sc(c).capabilities;
    if (!(cap?.drop ?? []).includes("ALL")) noDrop.push(c.name);
    const extra = (cap?.add ?? []).filter((x: string) => x !== "NET_BIND_SERVICE");
    if (extra.length > 0) {
      adding.push(c.name);
      caps.push(...extra);
    }
  }
  const d: string[] = [];
  if (noDrop.length)
    d.push(`${named(noDrop.length, noDrop)} must set securityContext.capabilities.drop=["ALL"]`);
  if (adding.length) {
    d.push(
      `${named(adding.length, adding)} must not include ${quoteJoin(uniqSorted(caps))} in securityContext.capabilities.add`,
    );
  }
  return d.length ? result("unrestricted capabilities", d.join("; ")) : undefined;
};

const restrictedVolumes: Check = (s) => {
  const bad: string[] = [];
  const types: string[] = [];
  for (const v of s.volumes ?? []) {
    if (ALLOWED_VOLUMES.some((k) => v?.[k] != null)) continue;
    bad.push(String(v?.name));
    types.push(RESTRICTED_VOLUMES.find((k) => v?.[k] != null) ?? "unknown");
  }
  if (bad.length === 0) return undefined;
  const u = uniqSorted(types);
  const detail = `${plural("volume", "volumes", bad.length)} ${quoteJoin(bad)} ${plural("uses", "use", bad.length)} ${plural("restricted volume type", "restricted volume types", u.length)} ${quoteJoin(u)}`;
  return result("restricted volume types", detail);
};

const runAsNonRoot: Check = (s) => {
  const podValue = s.securityContext?.runAsNonRoot;
  const podBad = podValue === false;
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers(s)) {
    const own = sc(c).runAsNonRoot;
    if (own != null) {
      if (own === false) explicit.push(c.name);
    } else if (podValue !== true) implicit.push(c.name);
  }
  if (podBad || explicit.length) {
    return result(
      "runAsNonRoot != true",
      setters(podBad, explicit, " must not set securityContext.runAsNonRoot=false"),
    );
  }
  if (implicit.length === 0) return undefined;
  return result(
    "runAsNonRoot != true",
    `pod or ${named(implicit.length, implicit)} must set securityContext.runAsNonRoot=true`,
  );
};

const runAsUser: Check = (s) => {
  const podBad = s.securityContext?.runAsUser === 0;
  const bad = containers(s)
    .filter((c) => sc(c).runAsUser === 0)
    .map((c) => c.name);
  return podBad || bad.length
    ? result("runAsUser=0", setters(podBad, bad, " must not set runAsUser=0"))
    : undefined;
};

const seccompRestricted: Check = (s) => {
  const valid = (t: unknown) => t === "RuntimeDefault" || t === "Localhost";
  const pod = s.securityContext?.seccompProfile;
  const podBad = pod != null && !valid(pod.type);
  const podSet = pod != null && valid(pod.type);
  const explicit: string[] = [];
  const implicit: string[] = [];
  const values: string[] = podBad ? [String(pod.type ?? "")] : [];
  for (const c of containers(s)) {
    const p = sc(c).seccompProfile;
    if (p != null) {
      if (!valid(p.type)) {
        explicit.push(c.name);
        values.push(String(p.type ?? ""));
      }
    } else if (!podSet) implicit.push(c.name);
  }
  if (podBad || explicit.length) {
    const tail = ` must not set securityContext.seccompProfile.type to ${quoteJoin(uniqSorted(values))}`;
    return result("seccompProfile", setters(podBad, explicit, tail));
  }
  if (implicit.length === 0) return undefined;
  const detail = `pod or ${named(implicit.length, implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`;
  return result("seccompProfile", detail);
};

// Simplification: appArmor, procMount, seLinuxOptions, sysctls, hostProcess and probe-host checks are not implemented.
const BASELINE: Check[] = [capabilitiesBaseline, hostNamespaces, hostPathVolumes, hostPorts, privileged];
// Restricted overrides capabilities_baseline and hostPathVolumes with its own stricter checks.
const RESTRICTED: Check[] = [
  hostNamespaces,
  hostPorts,
  privileged,
  allowPrivilegeEscalation,
  capabilitiesRestricted,
  restrictedVolumes,
  runAsNonRoot,
  runAsUser,
  seccompRestricted,
];

// Simplification: only the "latest" policy version; no exemptions, and no warn/audit modes.
export type PodSecurityLevel = "privileged" | "baseline" | "restricted";

export function podSecurityViolations(podSpec: Json, level: PodSecurityLevel): string[] {
  if (level === "privileged") return [];
  const checks = level === "baseline" ? BASELINE : RESTRICTED;
  return checks.map((c) => c(podSpec ?? {})).filter((v): v is string => v !== undefined);
}

export function podSecurityRestrictedViolations(podSpec: Json): string[] {
  return podSecurityViolations(podSpec, "restricted");
}

export function podSecurityBaselineViolations(podSpec: Json): string[] {
  return podSecurityViolations(podSpec, "baseline");
}

/** The namespace label `pod-security.kubernetes.io/enforce`, or undefined when absent/invalid. */
export function enforcedLevel(
  namespaceLabels: Record<string, string> | undefined,
): PodSecurityLevel | undefined {
  const v = namespaceLabels?.["pod-security.kubernetes.io/enforce"];
  return v === "privileged" || v === "baseline" || v === "restricted" ? v : undefined;
}

export function podSecurityForbiddenMessage(
  podName: string,
  violations: readonly string[],
  level: PodSecurityLevel = "restricted",
  version = "latest",
): string {
  return `pods "${podName}" is forbidden: violates PodSecurity "${level}:${version}": ${violations.join(", ")}`;
}
