/**
 * Built-in admission run by the store on create: NamespaceLifecycle, ServiceAccount and
 * PodSecurity (enforce). Controllers' writes go through it too, so the Job controller sees the
 * same rejections a real one would.
 */
import { ApiStatusError, forbidden, notFound } from "./errors.ts";
import { type ResourceType, resource } from "./resources.ts";
import { enforcedLevel, podSecurityForbiddenMessage, podSecurityViolations } from "./semantics/admission.ts";
import type { AdmissionPlugin } from "./store.ts";

const namespaceLifecycle: AdmissionPlugin = (r, obj, store) => {
  if (!r.namespaced) return;
  const ns = obj.metadata.namespace!;
  const live = store.find(resource("namespaces"), undefined, ns);
  if (!live) throw notFound(resource("namespaces"), ns);
  if (live.metadata.deletionTimestamp) {
    const e = new ApiStatusError(
      403,
      "Forbidden",
      `${r.plural} "${obj.metadata.name}" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
      { name: obj.metadata.name, kind: r.plural },
    );
    e.status.details!.causes = [
      {
        reason: "NamespaceTerminating",
        message: `namespace ${ns} is being terminated`,
        field: "metadata.namespace",
      },
    ];
    throw e;
  }
};

const serviceAccount: AdmissionPlugin = (r, obj, store) => {
  if (!isPod(r)) return;
  const ns = obj.metadata.namespace!;
  const sa = obj.spec?.serviceAccountName ?? "default";
  if (store.find(resource("serviceaccounts"), ns, sa)) return;
  throw forbidden(
    r,
    obj.metadata.name!,
    `pods "${obj.metadata.name}" is forbidden: error looking up service account ${ns}/${sa}: serviceaccount "${sa}" not found`,
  );
};

const podSecurity: AdmissionPlugin = (r, obj, store) => {
  if (!isPod(r)) return;
  const live = store.find(resource("namespaces"), undefined, obj.metadata.namespace!);
  const level = enforcedLevel(live?.metadata.labels);
  if (!level) return;
  const violations = podSecurityViolations(obj.spec, level);
  if (violations.length === 0) return;
  throw forbidden(r, obj.metadata.name!, podSecurityForbiddenMessage(obj.metadata.name!, violations, level));
};

function isPod(r: ResourceType): boolean {
  return r.group === "" && r.plural === "pods";
}

/** NamespaceLifecycle refuses to delete these. */
export const IMMORTAL_NAMESPACES = ["default", "kube-system", "kube-public"];

export const BUILTIN_ADMISSION: readonly AdmissionPlugin[] = [
  namespaceLifecycle,
  serviceAccount,
  podSecurity,
];
