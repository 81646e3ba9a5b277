/**
 * platform-health against the real control plane, run as its catalog identity: a recipe whose
 * components name namespaces and expected resources — Deployments, a DaemonSet, a StatefulSet (pods the
 * process kubelet runs, so their status is the controllers'), Services, a ConfigMap and a Secret created
 * here — healthy, then with one missing, some never ready, a namespace absent and an unsupported kind.
 * platform-health never skips; with no recipe it fails.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { run } from "../../../src/validate/checks/platform-health.ts";
import type { Recipe } from "../../../src/validate/recipe.ts";
import { standinClusterOptions } from "../../cluster/standins/_cluster.ts";
import {
  apiPath,
  daemonSetObject,
  deploymentObject,
  standinApi,
  UNPULLABLE_IMAGE,
  untilWorkload,
} from "../../cluster/standins/_standin-api.ts";
import { CLUSTER_HOOK_MS } from "../../cluster/testbed.ts";
import { useCluster } from "../../support/cluster.ts";
import { until } from "../../support/until.ts";
import { expectReadOnly, runCheck } from "./_run-check.ts";

const LONG = 120_000;
const recipe = (componentRefs: unknown): Recipe =>
  ({ kind: "RecipeMetadata", spec: { constraints: [], componentRefs } }) as Recipe;

const HEALTHY = [
  {
    name: "cert-manager",
    namespace: "cert-manager",
    expectedResources: [
      { kind: "Deployment", name: "cert-manager", namespace: "cert-manager" },
      { kind: "Service", name: "cert-manager-webhook", namespace: "cert-manager" },
      { kind: "Secret", name: "cert-manager-webhook-ca" },
    ],
  },
  {
    name: "network-operator",
    namespace: "nvidia-network-operator",
    // Disabled components are checked all the same.
    overrides: { enabled: false },
    expectedResources: [
      { kind: "DaemonSet", name: "mofed-agent", namespace: "nvidia-network-operator" },
      { kind: "StatefulSet", name: "nic-state", namespace: "nvidia-network-operator" },
      { kind: "ConfigMap", name: "network-operator-config", namespace: "nvidia-network-operator" },
    ],
  },
];

describe("[real] platform-health", () => {
  const cluster = useCluster("real", standinClusterOptions());
  beforeAll(async () => {
    const api = standinApi(cluster());
    const app = (name: string) => ({ "app.kubernetes.io/name": name });
    await api.ensureNamespace("cert-manager");
    await api.ensureNamespace("nvidia-network-operator");
    const workloads: [string, ReturnType<typeof deploymentObject>, "ready" | "unready"][] = [
      [
        apiPath("apps/v1", "deployments", "cert-manager"),
        deploymentObject({
          namespace: "cert-manager",
          name: "cert-manager",
          labels: app("cert-manager"),
          image: "quay.io/jetstack/cert-manager-controller:v1.17.2",
        }),
        "ready",
      ],
      [
        apiPath("apps/v1", "deployments", "cert-manager"),
        deploymentObject({
          namespace: "cert-manager",
          name: "cainjector",
          labels: app("cainjector"),
          image: UNPULLABLE_IMAGE,
        }),
        "unready",
      ],
      [
        apiPath("apps/v1", "daemonsets", "nvidia-network-operator"),
        daemonSetObject({
          namespace: "nvidia-network-operator",
          name: "mofed-agent",
          labels: app("mofed-agent"),
          image: "nvcr.io/nvidia/mellanox/doca-driver:25.04",
        }),
        "ready",
      ],
      [
        apiPath("apps/v1", "daemonsets", "nvidia-network-operator"),
        daemonSetObject({
          namespace: "nvidia-network-operator",
          name: "rdma-plugin",
          labels: app("rdma-plugin"),
          image: UNPULLABLE_IMAGE,
        }),
        "unready",
      ],
    ];
    await Promise.all(
      workloads.map(async ([collection, obj, want]) => {
        await api.put(collection, obj);
        await untilWorkload(api, `${collection}/${obj.metadata.name}`, want);
      }),
    );
    await api.put(apiPath("apps/v1", "statefulsets", "nvidia-network-operator"), {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "nic-state", namespace: "nvidia-network-operator" },
      spec: {
        serviceName: "nic-state",
        replicas: 1,
        selector: { matchLabels: app("nic-state") },
        template: {
          metadata: { labels: app("nic-state") },
          spec: {
            terminationGracePeriodSeconds: 0,
            containers: [{ name: "main", image: "nvcr.io/nvidia/nic-state:v1" }],
          },
        },
      },
    });
    await api.put(apiPath("v1", "services", "cert-manager"), {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "cert-manager-webhook", namespace: "cert-manager" },
      spec: { selector: app("cert-manager"), ports: [{ name: "https", port: 443, targetPort: 10250 }] },
    });
    await api.put(apiPath("v1", "secrets", "cert-manager"), {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "cert-manager-webhook-ca", namespace: "cert-manager" },
      data: { "ca.crt": Buffer.from("stand-in").toString("base64") },
    });
    await api.put(apiPath("v1", "configmaps", "nvidia-network-operator"), {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "network-operator-config", namespace: "nvidia-network-operator" },
      data: { mode: "stand-in" },
    });
    const sts = apiPath("apps/v1", "statefulsets", "nvidia-network-operator", "nic-state");
    await until(async () => (await api.get(sts))?.status?.readyReplicas === 1, `${sts} ready`, 60_000);
  }, CLUSTER_HOOK_MS);

  test(
    "passes: every component namespace Active, every expected resource healthy; reads only, within its rules",
    async () => {
      const r = await runCheck(cluster(), "platform-health", run, { recipe: recipe(HEALTHY) });
      expect(r.verdict.status).toBe("passed");
      expect(r.verdict.message).toBe("2 component namespace(s) Active, 6 expected resource(s) healthy");
      expect(r.verdict.details).toEqual([
        "namespace cert-manager: Active",
        "namespace nvidia-network-operator: Active",
        "Deployment cert-manager/cert-manager (cert-manager): 1 of 1 replica(s) available",
        "Service cert-manager/cert-manager-webhook (cert-manager): exists",
        "Secret cert-manager/cert-manager-webhook-ca (cert-manager): exists",
        "DaemonSet nvidia-network-operator/mofed-agent (network-operator): 2 of 2 pod(s) ready",
        "StatefulSet nvidia-network-operator/nic-state (network-operator): 1 of 1 replica(s) ready",
        "ConfigMap nvidia-network-operator/network-operator-config (network-operator): exists",
      ]);
      expect(r.ctx.blocks).toEqual([]);
      expectReadOnly(r);
    },
    LONG,
  );

  test(
    "fails: a resource missing, two never ready, a namespace absent, an unsupported kind — every issue listed",
    async () => {
      const broken = [
        ...HEALTHY,
        {
          name: "more",
          namespace: "cert-manager",
          expectedResources: [
            { kind: "ConfigMap", name: "never-created", namespace: "cert-manager" },
            { kind: "Deployment", name: "cainjector", namespace: "cert-manager" },
            { kind: "DaemonSet", name: "rdma-plugin", namespace: "nvidia-network-operator" },
            { kind: "Job", name: "migrate", namespace: "cert-manager" },
          ],
        },
        { name: "gone", namespace: "absent-namespace" },
      ];
      const r = await runCheck(cluster(), "platform-health", run, { recipe: recipe(broken) });
      expect(r.verdict.status).toBe("failed");
      expect(r.verdict.message).toBe(
        "5 platform issue(s): namespace absent-namespace: not found; " +
          "ConfigMap cert-manager/never-created (more): not found; " +
          "Deployment cert-manager/cainjector (more): 0 of 1 replica(s) available; " +
          "DaemonSet nvidia-network-operator/rdma-plugin (more): 0 of 2 pod(s) ready; " +
          "Job cert-manager/migrate (more): unsupported kind",
      );
      expectReadOnly(r);
    },
    LONG,
  );

  test(
    "a read with no answer within its bound (10 s, scaled) is an issue; the others are still checked",
    async () => {
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const fault = cluster().faults.add({
        method: "GET",
        path: "/apis/apps/v1/namespaces/nvidia-network-operator/statefulsets/nic-state",
        holdUntil: held,
      });
      try {
        const r = await runCheck(cluster(), "platform-health", run, {
          recipe: recipe(HEALTHY),
          waitScale: 0.02,
        });
        expect(r.verdict.message).toBe(
          "1 platform issue(s): StatefulSet nvidia-network-operator/nic-state (network-operator): reading StatefulSet nvidia-network-operator/nic-state: no answer within 0.2 s",
        );
        expect(r.verdict.details).toHaveLength(8);
      } finally {
        release();
        fault.remove();
      }
    },
    LONG,
  );

  test(
    "no componentRefs: nothing to check passes; no recipe fails (the original's null-recipe rule)",
    async () => {
      const empty = await runCheck(cluster(), "platform-health", run, { recipe: recipe(undefined) });
      expect(empty.verdict).toMatchObject({
        status: "passed",
        message: "the recipe's components name no namespace and no expected resource: nothing to check",
      });
      const none = await runCheck(cluster(), "platform-health", run, {});
      expect(none.verdict).toMatchObject({
        status: "failed",
        message: "no recipe: platform-health checks the namespaces and resources a recipe's components name",
      });
    },
    LONG,
  );
});
