/**
 * Seeds legacy aicr objects and decoys straight into a cluster's store (acting as system:masters), on
 * either backend of testbed.ts. Every seed is awaited: on the real backend a write resolves once the
 * store's mirror holds it.
 */

import { createLogger, type Logger } from "../../src/core/log.ts";
import { type AccessCheck, KubeClient } from "../../src/kube/client.ts";
import type { CleanupOptions } from "../../src/legacy/cleanup.ts";
import type { Receipt, ReceiptEntry } from "../../src/legacy/types.ts";
import {
  CLUSTER_BASELINE_RULES,
  NAMESPACED_RULES,
  type PolicyRule,
  toPolicyRule,
} from "../../src/rbac/rules.ts";
import { type KObject, resource } from "../cluster/store.ts";
import type { TestCluster as Cluster } from "../cluster/testbed.ts";
import { until, untilStore } from "../support/until.ts";

export const RUN_ID = "20261129-101500-0123456789abcdef";
/** A bound that only stops a stuck test. */
export const TEST_MS = 60_000;
const RBAC = "rbac.authorization.k8s.io";

export const sa = (namespace: string, name = "aicr") => ({ kind: "ServiceAccount", name, namespace });

export function put(cluster: Cluster, plural: string, object: KObject): Promise<KObject> {
  return Promise.resolve(cluster.store.create(resource(plural), object));
}

export async function namespace(cluster: Cluster, name: string): Promise<void> {
  if (!cluster.store.find(resource("namespaces"), undefined, name))
    await put(cluster, "namespaces", { metadata: { name } });
}

/**
 * A legacy Job's status, as the Job controller leaves it: running (one active pod) or complete (the
 * apiserver refuses Complete without SuccessCriteriaMet, startTime and completionTime).
 */
export function jobStatus(active: boolean): KObject["status"] {
  return active
    ? { active: 1, startTime: "2026-11-29T10:00:00Z" }
    : {
        succeeded: 1,
        startTime: "2026-11-29T10:00:00Z",
        completionTime: "2026-11-29T10:01:00Z",
        conditions: [
          { type: "SuccessCriteriaMet", status: "True" },
          { type: "Complete", status: "True" },
        ],
      };
}

/**
 * A Job as a legacy aicr left it. spec.managedBy hands it to a controller that does not exist, so the
 * Job controller of the real backend neither runs it (there is no kubelet in these suites) nor rewrites
 * the status the seed gives it; nothing aicr reads depends on that field.
 */
export function jobObject(ns: string, name: string, state: { serviceAccountName?: string } = {}): KObject {
  return {
    metadata: { name, namespace: ns },
    spec: {
      managedBy: "aicr.test/legacy-seed",
      template: {
        spec: {
          serviceAccountName: state.serviceAccountName ?? "aicr",
          restartPolicy: "Never",
          containers: [{ name: "aicr", image: "ghcr.io/nvidia/aicr:v0.11.1" }],
        },
      },
    },
  };
}

/** Creates the Job, then writes its status through the status subresource, as its controller would. */
export async function putJob(
  cluster: Cluster,
  ns: string,
  name: string,
  state: { active?: boolean; serviceAccountName?: string } = {},
): Promise<KObject> {
  await put(cluster, "jobs", jobObject(ns, name, state));
  return cluster.store.mutate(
    resource("jobs"),
    ns,
    name,
    (o) => ({ ...o, status: { ...o.status, ...jobStatus(state.active ?? false) } }),
    { subresource: "status" },
  );
}

export const clusterRoleObject = (
  name: string,
  rules: PolicyRule[] = CLUSTER_BASELINE_RULES.map(toPolicyRule),
  labels?: Record<string, string>,
): KObject => ({
  metadata: { name, ...(labels ? { labels } : {}) },
  rules,
});

export const bindingObject = (
  name: string,
  roleRef: { kind: "Role" | "ClusterRole"; name: string },
  subjects: { kind: string; name: string; namespace?: string }[],
  extra: { namespace?: string; labels?: Record<string, string> } = {},
): KObject => ({
  metadata: {
    name,
    ...(extra.namespace ? { namespace: extra.namespace } : {}),
    ...(extra.labels ? { labels: extra.labels } : {}),
  },
  roleRef: { apiGroup: RBAC, ...roleRef },
  subjects: subjects.map((s) => (s.kind === "ServiceAccount" ? s : { apiGroup: RBAC, ...s })),
});

/** The namespaced legacy set of one namespace: snapshot and validate Jobs, accounts, Role, RoleBinding, ConfigMap. */
export async function seedNamespace(
  cluster: Cluster,
  ns: string,
  options: { activeJob?: boolean } = {},
): Promise<void> {
  await namespace(cluster, ns);
  await put(cluster, "serviceaccounts", { metadata: { name: "aicr", namespace: ns } });
  await put(cluster, "serviceaccounts", { metadata: { name: "aicr-validator", namespace: ns } });
  await put(cluster, "roles", {
    metadata: { name: "aicr", namespace: ns },
    rules: NAMESPACED_RULES.map(toPolicyRule),
  });
  await put(
    cluster,
    "rolebindings",
    bindingObject("aicr", { kind: "Role", name: "aicr" }, [sa(ns)], { namespace: ns }),
  );
  await putJob(cluster, ns, "aicr", { active: options.activeJob ?? false });
  await putJob(cluster, ns, "aicr-validate");
  await put(cluster, "configmaps", {
    metadata: { name: "aicr-snapshot", namespace: ns },
    data: { "snapshot.yaml": "kind: Snapshot\n" },
  });
}

/** The cluster-scoped legacy pair bound to `ns`/aicr, and the validator's binding to `ns`/aicr-validator. */
export async function seedClusterScoped(cluster: Cluster, ns: string): Promise<void> {
  await put(cluster, "clusterroles", clusterRoleObject("aicr-node-reader"));
  await put(
    cluster,
    "clusterrolebindings",
    bindingObject("aicr-node-reader", { kind: "ClusterRole", name: "aicr-node-reader" }, [sa(ns)]),
  );
  await put(
    cluster,
    "clusterrolebindings",
    bindingObject("aicr-validator", { kind: "ClusterRole", name: "cluster-admin" }, [
      sa(ns, "aicr-validator"),
    ]),
  );
}

/** A run-isolated deployment's objects: same prefixes, run-id labels; never cleanup-legacy's business. */
export async function seedRunScoped(cluster: Cluster, ns: string): Promise<void> {
  const labels = {
    "app.kubernetes.io/name": "aicr",
    "app.kubernetes.io/managed-by": "aicr",
    "aicr.run/run-id": RUN_ID,
  };
  const name = `aicr-node-reader-${RUN_ID}`;
  await put(cluster, "clusterroles", clusterRoleObject(name, undefined, labels));
  await put(
    cluster,
    "clusterrolebindings",
    bindingObject(name, { kind: "ClusterRole", name }, [sa(ns, `aicr-${RUN_ID}`)], { labels }),
  );
  await put(cluster, "serviceaccounts", { metadata: { name: `aicr-${RUN_ID}`, namespace: ns, labels } });
}

export function exists(cluster: Cluster, plural: string, ns: string | undefined, name: string): boolean {
  return cluster.store.find(resource(plural), ns, name) !== undefined;
}

/**
 * The object is gone, once the store has caught up: aicr's delete was answered before it returned,
 * and the real backend's mirror learns of it from its watch a moment later (the fake's store at once).
 */
export const untilGone = (cluster: Cluster, plural: string, ns: string | undefined, name: string) =>
  untilStore(
    cluster,
    () => !exists(cluster, plural, ns, name),
    `${plural} ${ns ? `${ns}/` : ""}${name} gone`,
  );

export function adminClient(cluster: Cluster): KubeClient {
  return KubeClient.connect({ kubeconfig: cluster.kubeconfigFor("admin"), env: {} });
}

export function clientFor(cluster: Cluster, user: string): KubeClient {
  return KubeClient.connect({ kubeconfig: cluster.kubeconfigFor(user), env: {} });
}

export function captureLog(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: createLogger({ write: (line) => void lines.push(line), color: false }), lines };
}

/** Mutating requests other than access reviews (which persist nothing). */
export function writesTo(cluster: Cluster): string[] {
  return cluster.log
    .mutatingRequests()
    .filter((e) => !e.path.startsWith("/apis/authorization.k8s.io/"))
    .map((e) => `${e.method} ${e.path} ${e.status}`);
}

export const never = new AbortController().signal;

/** The identity that asks whether fresh RBAC is in force: its own, so its reviews stand apart in the log. */
const SETUP_USER = "aicr-test-setup";

/**
 * Resolves once every check is allowed for `subject`. RBAC a test just wrote is in force at once on
 * the fake; the real apiserver's authorizer reads bindings from an informer cache, a moment after the
 * write. Asked with SubjectAccessReviews (they persist nothing) until allowed; the bound only stops a
 * test whose grant never takes effect.
 */
export async function untilGranted(
  cluster: Cluster,
  subject: { user: string; groups: string[] },
  checks: AccessCheck[],
): Promise<void> {
  cluster.addUser(SETUP_USER, ["system:masters"]);
  const client = KubeClient.connect({ kubeconfig: cluster.kubeconfigFor(SETUP_USER), env: {} });
  try {
    for (const check of checks)
      await until(
        async () => (await client.review(check, subject)).allowed,
        `${subject.user} to be allowed ${JSON.stringify(check)}`,
      );
  } finally {
    client.close();
  }
}

/** One check per rule (its first group, resource and verb): enough to know the binding is seen. */
export function checksFor(
  rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[],
  namespace?: string,
): AccessCheck[] {
  return rules.map((r) => {
    const [res, sub] = (r.resources[0] ?? "*").split("/");
    return {
      verb: r.verbs[0] ?? "*",
      group: r.apiGroups[0] ?? "",
      resource: res ?? "*",
      ...(sub ? { subresource: sub } : {}),
      ...(namespace ? { namespace } : {}),
    };
  });
}

/** Options of a scripted run (--yes) in gpu-operator; the prompt must not be reached unless overridden. */
export function options(overrides: Partial<CleanupOptions> = {}): CleanupOptions {
  return {
    scope: { allNamespaces: false, namespaces: ["gpu-operator"] },
    force: false,
    includeConfigMaps: false,
    dryRun: false,
    yes: true,
    signal: never,
    log: captureLog().log,
    confirm: async () => {
      throw new Error("confirm must not be asked with --yes");
    },
    ...overrides,
  };
}

export const outcomes = (receipt: Receipt): string[] =>
  receipt.entries.map((e) => `${e.outcome} ${e.kind} ${e.namespace ? `${e.namespace}/` : ""}${e.name}`);

export function entry(receipt: Receipt, kind: string, name: string, ns?: string): ReceiptEntry {
  const e = receipt.entries.find((x) => x.kind === kind && x.name === name && x.namespace === ns);
  if (!e) throw new Error(`${kind} ${name} not in receipt: ${outcomes(receipt).join("; ")}`);
  return e;
}
