/**
 * inference-gateway against the real control plane, run as its catalog identity: the kgateway stand-in
 * (test/cluster/standins/gateway.ts) — Gateway API and Inference Extension CRDs, GatewayClass kgateway,
 * Gateway kgateway-system/inference-gateway with its status, an HTTPRoute, the controller's and proxy's
 * Deployments and the proxy's EndpointSlice — healthy, then broken; skipped without the kgateway
 * component.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { run } from "../../../src/validate/checks/inference-gateway.ts";
import type { Recipe } from "../../../src/validate/recipe.ts";
import { standinClusterOptions } from "../../cluster/standins/_cluster.ts";
import { installKgatewayStandin, type KgatewayStandin } from "../../cluster/standins/gateway.ts";
import { CLUSTER_HOOK_MS } from "../../cluster/testbed.ts";
import { useCluster } from "../../support/cluster.ts";
import { expectReadOnly, runCheck } from "./_run-check.ts";

const LONG = 120_000;
const recipe = (componentRefs: unknown): Recipe =>
  ({ kind: "RecipeMetadata", spec: { constraints: [], componentRefs } }) as Recipe;
const WITH_KGATEWAY = recipe([
  { name: "gpu-operator", namespace: "gpu-operator" },
  { name: "kgateway-crds", namespace: "kgateway-system" },
  { name: "kgateway", namespace: "kgateway-system" },
]);
const LABELS = [
  "kgateway deployments",
  "kgateway pods",
  "GatewayClass",
  "Gateways",
  "Gateway details",
  "Required CRDs",
  "Gateway Data Plane",
];

describe("[real] inference-gateway", () => {
  const cluster = useCluster("real", standinClusterOptions());
  let gw: KgatewayStandin;
  beforeAll(async () => {
    gw = await installKgatewayStandin(cluster());
  }, CLUSTER_HOOK_MS);

  const check = () => runCheck(cluster(), "inference-gateway", run, { recipe: WITH_KGATEWAY });

  test(
    "passes: class Accepted, Gateway Programmed, CRDs installed, a ready proxy endpoint; evidence in the original's order",
    async () => {
      const r = await check();
      expect(r.verdict.status).toBe("passed");
      expect(r.verdict.message).toBe(
        "GatewayClass kgateway Accepted, Gateway kgateway-system/inference-gateway Programmed with 1 ready endpoint(s), the 3 CRDs installed",
      );
      expect(r.ctx.blocks.map((b) => b.label)).toEqual(LABELS);
      const data = Object.fromEntries(r.ctx.blocks.map((b) => [b.label, b.data]));
      expect(data["kgateway deployments"]).toBe(
        "inference-gateway: 1/1 ready, 1 available\nkgateway: 1/1 ready, 1 available",
      );
      expect(data["kgateway pods"]).toMatch(/^inference-gateway-[a-z0-9]+-[a-z0-9]+: Running on /);
      expect(data.GatewayClass).toBe(
        "Name: kgateway\nController: kgateway.dev/kgateway\nAccepted: True (Accepted: GatewayClass accepted by kgateway)",
      );
      expect(data.Gateways).toStartWith("kgateway-system/inference-gateway: class kgateway, Programmed True");
      expect(data["Gateway details"]).toContain("gatewayClassName: kgateway");
      expect(data["Gateway details"]).not.toContain("managedFields");
      expect(data["Required CRDs"]).toBe(
        "gateways.gateway.networking.k8s.io: present\nhttproutes.gateway.networking.k8s.io: present\ninferencepools.inference.networking.x-k8s.io: present",
      );
      expect(data["Gateway Data Plane"]).toBe(
        [
          "Listeners: 1",
          "Attached routes: 1",
          "HTTPRoutes referencing inference-gateway: 1 (kgateway-system/inference-route)",
          "EndpointSlices of inference-gateway: 1",
          "Ready endpoints: 1",
        ].join("\n"),
      );
      expectReadOnly(r);
    },
    LONG,
  );

  test(
    "fails: the Gateway is not Programmed",
    async () => {
      await gw.set({ gateway: "notProgrammed" });
      try {
        const r = await check();
        expect(r.verdict).toMatchObject({
          status: "failed",
          message:
            "Gateway kgateway-system/inference-gateway is not Programmed: False (AddressNotAssigned: no address assigned to the Gateway's proxy)",
        });
        expect(r.ctx.blocks.map((b) => b.label)).toEqual(LABELS);
        expect(r.left).toEqual([]);
      } finally {
        await gw.set({ gateway: "programmed" });
      }
    },
    LONG,
  );

  test(
    "fails: the proxy has no ready endpoint, then no EndpointSlice at all",
    async () => {
      await gw.set({ endpoint: "notReady" });
      try {
        const r = await check();
        expect(r.verdict.message).toBe(
          "the Gateway's proxy has no ready endpoint (1 EndpointSlice(s) of inference-gateway in kgateway-system)",
        );
        await gw.set({ endpoint: "absent" });
        const none = await check();
        expect(none.verdict.message).toBe(
          "no EndpointSlice of inference-gateway in kgateway-system: the Gateway's proxy has no endpoint",
        );
      } finally {
        await gw.set({ endpoint: "ready" });
      }
    },
    LONG,
  );

  test(
    "fails: the class not Accepted and the Gateway gone — both reported",
    async () => {
      await gw.set({ gatewayClass: "notAccepted", gateway: "absent" });
      try {
        const r = await check();
        expect(r.verdict.message).toBe(
          "GatewayClass kgateway is not Accepted: False (InvalidParameters: parametersRef not found); Gateway kgateway-system/inference-gateway not found",
        );
        expect(r.refused).toEqual([]);
        const data = Object.fromEntries(r.ctx.blocks.map((b) => [b.label, b.data]));
        expect(data["Gateway details"]).toBe("Gateway kgateway-system/inference-gateway: not found");
      } finally {
        await gw.set({ gatewayClass: "accepted", gateway: "programmed" });
      }
    },
    LONG,
  );

  test(
    "skips without the kgateway component, or without a recipe; reads nothing",
    async () => {
      const r = await runCheck(cluster(), "inference-gateway", run, {
        recipe: recipe([{ name: "kgateway-crds" }, { name: "gpu-operator" }]),
      });
      expect(r.verdict).toMatchObject({
        status: "skipped",
        message: "the recipe has no kgateway component: no inference gateway to check",
      });
      expect(r.ctx.blocks).toEqual([]);
      expect(r.requests).toEqual([]);
      const none = await runCheck(cluster(), "inference-gateway", run, {});
      expect(none.verdict.status).toBe("skipped");
      expect(none.verdict.message).toStartWith("no recipe:");
    },
    LONG,
  );
});
