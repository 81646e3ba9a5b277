/** Object validation on create and update: names, labels, and the few spec rules clients trip on. */
import { badRequest, invalid, type StatusCause } from "./errors.ts";
import type { KObject } from "./objects.ts";
import type { ResourceType } from "./resources.ts";
import {
  validateDns1123Label,
  validateDns1123Subdomain,
  validateLabelKey,
  validateLabelValue,
} from "./semantics/names.ts";

function invalidValue(field: string, value: string, detail: string): StatusCause {
  return { reason: "FieldValueInvalid", message: `Invalid value: "${value}": ${detail}`, field };
}

function required(field: string, detail = ""): StatusCause {
  return {
    reason: "FieldValueRequired",
    message: detail ? `Required value: ${detail}` : "Required value",
    field,
  };
}

/** RBAC objects only need to be valid path segments (ValidateRBACName). */
function pathSegmentErrors(name: string): string[] {
  if (name === "." || name === "..") return [`may not be '${name}'`];
  for (const bad of ["/", "%"]) if (name.includes(bad)) return [`may not contain '${bad}'`];
  return [];
}

function nameErrors(r: ResourceType, name: string): string[] {
  if (r.plural === "namespaces") return validateDns1123Label(name);
  if (r.group === "rbac.authorization.k8s.io") return pathSegmentErrors(name);
  return validateDns1123Subdomain(name);
}

export function validateObject(r: ResourceType, obj: KObject): void {
  const m = obj.metadata;
  const name = m.name ?? "";
  const causes: StatusCause[] = [];
  if (!name) causes.push(required("metadata.name", "name or generateName is required"));
  else for (const e of nameErrors(r, name)) causes.push(invalidValue("metadata.name", name, e));
  if (r.namespaced && !m.namespace)
    throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
  for (const [k, v] of Object.entries(m.labels ?? {})) {
    for (const e of validateLabelKey(k)) causes.push(invalidValue("metadata.labels", k, e));
    for (const e of validateLabelValue(String(v))) causes.push(invalidValue("metadata.labels", String(v), e));
  }
  if (r.plural === "pods") causes.push(...podSpecCauses("spec", obj.spec));
  if (r.group === "batch" && r.plural === "jobs") causes.push(...jobCauses(obj));
  if (causes.length > 0) throw invalid(r, name, causes);
}

/** Go's %v-by-JSON of an internal struct: its fields in declaration order, absent ones null. */
function goStruct(
  v: any,
  fields: [string, string, ((x: any) => unknown)?][],
): Record<string, unknown> | null {
  if (v == null) return null;
  return Object.fromEntries(
    fields.map(([go, json, conv]) => [go, v[json] == null ? null : conv ? conv(v[json]) : v[json]]),
  );
}

/** The internal core.SecurityContext as the apiserver prints it in an Invalid value. */
function internalSecurityContext(sc: any): Record<string, unknown> | null {
  const profile = (p: any) =>
    goStruct(p, [
      ["Type", "type"],
      ["LocalhostProfile", "localhostProfile"],
    ]);
  return goStruct(sc, [
    [
      "Capabilities",
      "capabilities",
      (c) =>
        goStruct(c, [
          ["Add", "add"],
          ["Drop", "drop"],
        ]),
    ],
    ["Privileged", "privileged"],
    [
      "SELinuxOptions",
      "seLinuxOptions",
      (o) =>
        goStruct(o, [
          ["User", "user"],
          ["Role", "role"],
          ["Type", "type"],
          ["Level", "level"],
        ]),
    ],
    [
      "WindowsOptions",
      "windowsOptions",
      (o) =>
        goStruct(o, [
          ["GMSACredentialSpecName", "gmsaCredentialSpecName"],
          ["GMSACredentialSpec", "gmsaCredentialSpec"],
          ["RunAsUserName", "runAsUserName"],
          ["HostProcess", "hostProcess"],
        ]),
    ],
    ["RunAsUser", "runAsUser"],
    ["RunAsGroup", "runAsGroup"],
    ["RunAsNonRoot", "runAsNonRoot"],
    ["ReadOnlyRootFilesystem", "readOnlyRootFilesystem"],
    ["AllowPrivilegeEscalation", "allowPrivilegeEscalation"],
    ["ProcMount", "procMount"],
    ["SeccompProfile", "seccompProfile", profile],
    ["AppArmorProfile", "appArmorProfile", profile],
  ]);
}

function podSpecCauses(path: string, spec: any): StatusCause[] {
  const out: StatusCause[] = [];
  const containers = spec?.containers;
  if (!Array.isArray(containers) || containers.length === 0) return [required(`${path}.containers`)];
  const check = (kind: string) => (c: any, i: number) => {
    if (!c?.name) out.push(required(`${path}.${kind}[${i}].name`));
    if (!c?.image) out.push(required(`${path}.${kind}[${i}].image`));
    const sc = c?.securityContext;
    if (sc?.privileged === true && sc.allowPrivilegeEscalation === false) {
      const value = JSON.stringify(internalSecurityContext(sc));
      out.push({
        reason: "FieldValueInvalid",
        message: `Invalid value: ${value}: cannot set \`allowPrivilegeEscalation\` to false and \`privileged\` to true`,
        field: `${path}.${kind}[${i}].securityContext`,
      });
    }
  };
  // ValidatePodSpec: containers, then initContainers.
  containers.forEach(check("containers"));
  (spec.initContainers ?? []).forEach(check("initContainers"));
  return out;
}

function jobCauses(obj: KObject): StatusCause[] {
  const tspec = obj.spec?.template?.spec;
  const out = podSpecCauses("spec.template.spec", tspec);
  const policy = tspec?.restartPolicy;
  // The template's restartPolicy is defaulted to Always, so both read as "not given".
  if (policy === "Always" || !policy) {
    out.push(required("spec.template.spec.restartPolicy", 'valid values: "OnFailure", "Never"'));
  } else if (policy !== "OnFailure" && policy !== "Never") {
    out.push({
      reason: "FieldValueNotSupported",
      message: `Unsupported value: "${policy}": supported values: "OnFailure", "Never"`,
      field: "spec.template.spec.restartPolicy",
    });
  }
  return out;
}
