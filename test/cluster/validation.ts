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

function podSpecCauses(path: string, spec: any): StatusCause[] {
  const out: StatusCause[] = [];
  const containers = spec?.containers;
  if (!Array.isArray(containers) || containers.length === 0) return [required(`${path}.containers`)];
  containers.forEach((c, i) => {
    if (!c?.name) out.push(required(`${path}.containers[${i}].name`));
    if (!c?.image) out.push(required(`${path}.containers[${i}].image`));
  });
  return out;
}

function jobCauses(obj: KObject): StatusCause[] {
  const tspec = obj.spec?.template?.spec;
  const out = podSpecCauses("spec.template.spec", tspec);
  const policy = tspec?.restartPolicy;
  if (policy !== "OnFailure" && policy !== "Never") {
    out.push({
      reason: "FieldValueNotSupported",
      message: `Unsupported value: "${policy}": supported values: "OnFailure", "Never"`,
      field: "spec.template.spec.restartPolicy",
    });
  }
  return out;
}
