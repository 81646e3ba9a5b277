/**
 * Built-in admission run by the store on create: NamespaceLifecycle, ServiceAccount, Priority,
 * DefaultTolerationSeconds and PodSecurity (enforce). Controllers' writes go through it too, so the Job controller sees the
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

const SA_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount";
/** utilrand.String's alphabet: no vowels, no confusable digits. */
const RAND_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

function randomSuffix(n: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  return [...bytes].map((b) => RAND_ALPHABET[b % RAND_ALPHABET.length]).join("");
}

/**
 * The ServiceAccount plugin: the pod's ServiceAccount must exist, and unless the pod or the
 * ServiceAccount opts out (automountServiceAccountToken: false) the pod gets the projected
 * kube-api-access-<random> volume (token, kube-root-ca.crt, namespace), mounted read-only in every
 * container that has nothing mounted at the in-cluster path yet.
 */
const serviceAccount: AdmissionPlugin = (r, obj, store) => {
  if (!isPod(r)) return;
  const ns = obj.metadata.namespace!;
  const sa = obj.spec?.serviceAccountName ?? "default";
  const account = store.find(resource("serviceaccounts"), ns, sa);
  if (!account)
    throw forbidden(
      r,
      obj.metadata.name!,
      `pods "${obj.metadata.name}" is forbidden: error looking up service account ${ns}/${sa}: serviceaccount "${sa}" not found`,
    );
  const spec = obj.spec;
  const automount = spec.automountServiceAccountToken ?? account.automountServiceAccountToken ?? true;
  if (!automount) return;
  const containers = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
  const unmounted = containers.filter(
    (c: { volumeMounts?: { mountPath: string }[] }) =>
      !(c.volumeMounts ?? []).some((m) => m.mountPath === SA_MOUNT),
  );
  if (unmounted.length === 0) return;
  const name = `kube-api-access-${randomSuffix(5)}`;
  spec.volumes = [
    ...(spec.volumes ?? []),
    {
      name,
      projected: {
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
          { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
          {
            downwardAPI: {
              items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
            },
          },
        ],
        defaultMode: 420,
      },
    },
  ];
  for (const c of unmounted)
    c.volumeMounts = [...(c.volumeMounts ?? []), { name, readOnly: true, mountPath: SA_MOUNT }];
};

/** DefaultTolerationSeconds: tolerate not-ready and unreachable nodes for 300 s unless the pod says otherwise. */
const defaultTolerationSeconds: AdmissionPlugin = (r, obj) => {
  if (!isPod(r)) return;
  const tolerations: { key?: string; effect?: string }[] = obj.spec.tolerations ?? [];
  const add = ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"].filter(
    (key) => !tolerations.some((t) => (!t.key || t.key === key) && (!t.effect || t.effect === "NoExecute")),
  );
  if (add.length === 0) return;
  obj.spec.tolerations = [
    ...tolerations,
    ...add.map((key) => ({ key, operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 })),
  ];
};

/** Priority: no PriorityClass here, so every pod gets the default priority 0. */
const priority: AdmissionPlugin = (r, obj) => {
  if (!isPod(r)) return;
  obj.spec.priority ??= 0;
  obj.spec.preemptionPolicy ??= "PreemptLowerPriority";
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

/** Mutating plugins first, then validating ones, in the apiserver's order. */
export const BUILTIN_ADMISSION: readonly AdmissionPlugin[] = [
  namespaceLifecycle,
  serviceAccount,
  priority,
  defaultTolerationSeconds,
  podSecurity,
];
