import { describe, expect, test } from "bun:test";
import { absent, found, readError } from "../../../../src/validate/checks/_read-outcome.ts";
import {
  dataPlaneLines,
  type GatewayReads,
  gatewaySlices,
  gatewayVerdict,
  hasKgateway,
  REQUIRED_CRDS,
  readyEndpoints,
  routesOfGateway,
} from "../../../../src/validate/checks/inference-gateway.ts";

const cond = (type: string, status: string, reason?: string) => ({
  type,
  status,
  ...(reason ? { reason } : {}),
});
const slice = (service: string, ready: (boolean | undefined)[]) => ({
  metadata: { name: `${service}-abc`, labels: { "kubernetes.io/service-name": service } },
  endpoints: ready.map((r, i) => ({
    addresses: [`10.0.0.${i + 1}`],
    conditions: r === undefined ? {} : { ready: r },
  })),
});
const healthy: GatewayReads = {
  gatewayClass: found({ metadata: { name: "kgateway" }, status: { conditions: [cond("Accepted", "True")] } }),
  gateway: found({
    metadata: { name: "inference-gateway", namespace: "kgateway-system" },
    status: { conditions: [cond("Programmed", "True")], listeners: [{ name: "http", attachedRoutes: 2 }] },
  }),
  crds: REQUIRED_CRDS.map((name) => ({ name, read: found(true as const) })),
  routes: found([
    { metadata: { name: "r1", namespace: "a" }, spec: { parentRefs: [{ name: "inference-gateway" }] } },
    { metadata: { name: "r2", namespace: "b" }, spec: { parentRefs: [{ name: "other" }] } },
  ]),
  slices: found([slice("inference-gateway", [true]), slice("other", [true, true])]),
};

describe("inference-gateway", () => {
  test("hasKgateway reads componentRefs defensively", () => {
    expect(hasKgateway([{ name: "cert-manager" }, { name: "kgateway" }])).toBe(true);
    expect(hasKgateway([{ name: "kgateway-crds" }])).toBe(false);
    for (const x of [undefined, null, "kgateway", { kgateway: {} }, [null, 3]])
      expect(hasKgateway(x)).toBe(false);
  });

  test("passed: Accepted class, Programmed Gateway, the CRDs, a ready endpoint", () => {
    const v = gatewayVerdict(healthy);
    expect(v.status).toBe("passed");
    expect(v.message).toBe(
      "GatewayClass kgateway Accepted, Gateway kgateway-system/inference-gateway Programmed with 1 ready endpoint(s), the 3 CRDs installed",
    );
    expect(dataPlaneLines(healthy)).toEqual([
      "Listeners: 1",
      "Attached routes: 2",
      "HTTPRoutes referencing inference-gateway: 1 (a/r1)",
      "EndpointSlices of inference-gateway: 1",
      "Ready endpoints: 1",
    ]);
  });

  test("failed: the class not Accepted (absent condition or status False)", () => {
    expect(gatewayVerdict({ ...healthy, gatewayClass: found({ status: {} }) }).message).toBe(
      "GatewayClass kgateway is not Accepted: absent",
    );
    expect(
      gatewayVerdict({
        ...healthy,
        gatewayClass: found({ status: { conditions: [cond("Accepted", "False", "InvalidParameters")] } }),
      }).message,
    ).toBe("GatewayClass kgateway is not Accepted: False (InvalidParameters)");
    expect(gatewayVerdict({ ...healthy, gatewayClass: absent }).message).toBe(
      "GatewayClass kgateway not found",
    );
  });

  test("failed: the Gateway not Programmed, a CRD missing, no ready endpoint — all reported", () => {
    const v = gatewayVerdict({
      ...healthy,
      gateway: found({ status: { conditions: [cond("Programmed", "False", "AddressNotAssigned")] } }),
      crds: [
        { name: REQUIRED_CRDS[0], read: found(true as const) },
        { name: REQUIRED_CRDS[1], read: found(true as const) },
        { name: REQUIRED_CRDS[2], read: absent },
      ],
      slices: found([slice("inference-gateway", [false, false])]),
    });
    expect(v.message.split("; ")).toEqual([
      "Gateway kgateway-system/inference-gateway is not Programmed: False (AddressNotAssigned)",
      "CRD inferencepools.inference.networking.x-k8s.io is not installed",
      "the Gateway's proxy has no ready endpoint (1 EndpointSlice(s) of inference-gateway in kgateway-system)",
    ]);
    expect(gatewayVerdict({ ...healthy, slices: found([]) }).message).toBe(
      "no EndpointSlice of inference-gateway in kgateway-system: the Gateway's proxy has no endpoint",
    );
    expect(
      gatewayVerdict({ ...healthy, slices: readError("listing EndpointSlice: forbidden") }).message,
    ).toBe("listing EndpointSlice: forbidden");
  });

  test("HTTPRoutes are informational only", () => {
    expect(gatewayVerdict({ ...healthy, routes: readError("listing HTTPRoute: not served") }).status).toBe(
      "passed",
    );
  });

  test("slices by a service-name label containing the Gateway's name; ready unset counts as ready", () => {
    const slices = [slice("inference-gateway-proxy", [undefined, false]), slice("x", [true])];
    expect(gatewaySlices(slices).map((s) => s.metadata?.name)).toEqual(["inference-gateway-proxy-abc"]);
    expect(readyEndpoints(gatewaySlices(slices))).toBe(1);
    expect(
      routesOfGateway([{ spec: {} }, { spec: { parentRefs: [{ name: "inference-gateway" }] } }]),
    ).toHaveLength(1);
  });
});
