/** Seeds legacy aicr objects and decoys straight into a fake cluster's store (acting as system:masters). */

import { createLogger, type Logger } from "../../src/core/log.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { CleanupOptions } from "../../src/legacy/cleanup.ts";
import type { Receipt, ReceiptEntry } from "../../src/legacy/types.ts";
import {
  CLUSTER_BASELINE_RULES,
  NAMESPACED_RULES,
  type PolicyRule,
  toPolicyRule,
} from "../../src/rbac/rules.ts";
import type { Cluster } from "../cluster/server.ts";
import { type KObject, resource } from "../cluster/store.ts";

export const RUN_ID = "20261129-101500-0123456789abcdef";
const RBAC = "rbac.authorization.k8s.io";

export const sa = (namespace: string, name = "aicr") => ({ kind: "ServiceAccount", name, namespace });

export function put(cluster: Cluster, plural: string, object: KObject): KObject {
  return cluster.store.create(resource(plural), object);
}

export function namespace(cluster: Cluster, name: string): void {
  if (!cluster.store.find(resource("namespaces"), undefined, name))
    put(cluster, "namespaces", { metadata: { name } });
}

export function jobObject(
  ns: string,
  name: string,
  state: { active?: boolean; serviceAccountName?: string } = {},
): KObject {
  return {
    metadata: { name, namespace: ns },
    spec: {
      template: {
        spec: {
          serviceAccountName: state.serviceAccountName ?? "aicr",
          restartPolicy: "Never",
          containers: [{ name: "aicr", image: "ghcr.io/nvidia/aicr:v0.11.1" }],
        },
      },
    },
    status: state.active
      ? { active: 1, startTime: "2026-11-29T10:00:00Z" }
      : { succeeded: 1, conditions: [{ type: "Complete", status: "True" }] },
  };
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
export function seedNamespace(cluster: Cluster, ns: string, options: { activeJob?: boolean } = {}): void {
  namespace(cluster, ns);
  put(cluster, "serviceaccounts", { metadata: { name: "aicr", namespace: ns } });
  put(cluster, "serviceaccounts", { metadata: { name: "aicr-validator", namespace: ns } });
  put(cluster, "roles", {
    metadata: { name: "aicr", namespace: ns },
    rules: NAMESPACED_RULES.map(toPolicyRule),
  });
  put(
    cluster,
    "rolebindings",
    bindingObject("aicr", { kind: "Role", name: "aicr" }, [sa(ns)], { namespace: ns }),
  );
  put(cluster, "jobs", jobObject(ns, "aicr", { active: options.activeJob ?? false }));
  put(cluster, "jobs", jobObject(ns, "aicr-validate"));
  put(cluster, "configmaps", {
    metadata: { name: "aicr-snapshot", namespace: ns },
    data: { "snapshot.yaml": "kind: Snapshot\n" },
  });
}

/** The cluster-scoped legacy pair bound to `ns`/aicr, and the validator's binding to `ns`/aicr-validator. */
export function seedClusterScoped(cluster: Cluster, ns: string): void {
  put(cluster, "clusterroles", clusterRoleObject("aicr-node-reader"));
  put(
    cluster,
    "clusterrolebindings",
    bindingObject("aicr-node-reader", { kind: "ClusterRole", name: "aicr-node-reader" }, [sa(ns)]),
  );
  put(
    cluster,
    "clusterrolebindings",
    bindingObject("aicr-validator", { kind: "ClusterRole", name: "cluster-admin" }, [
      sa(ns, "aicr-validator"),
    ]),
  );
}

/** A run-isolated deployment's objects: same prefixes, run-id labels; never cleanup-legacy's business. */
export function seedRunScoped(cluster: Cluster, ns: string): void {
  const labels = {
    "app.kubernetes.io/name": "aicr",
    "app.kubernetes.io/managed-by": "aicr",
    "aicr.run/run-id": RUN_ID,
  };
  const name = `aicr-node-reader-${RUN_ID}`;
  put(cluster, "clusterroles", clusterRoleObject(name, undefined, labels));
  put(
    cluster,
    "clusterrolebindings",
    bindingObject(name, { kind: "ClusterRole", name }, [sa(ns, `aicr-${RUN_ID}`)], { labels }),
  );
  put(cluster, "serviceaccounts", { metadata: { name: `aicr-${RUN_ID}`, namespace: ns, labels } });
}

export function exists(cluster: Cluster, plural: string, ns: string | undefined, name: string): boolean {
  return cluster.store.find(resource(plural), ns, name) !== undefined;
}

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
