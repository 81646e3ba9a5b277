/**
 * inference-gateway (CNCF ai_inference): Gateway API and kgateway serve inference traffic — the
 * GatewayClass kgateway is Accepted, the Gateway kgateway-system/inference-gateway is Programmed, the
 * Gateway API and Inference Extension CRDs are installed, and the Gateway's proxy has a ready endpoint.
 * Skipped when the recipe has no kgateway component; creates nothing. Every failing part is reported.
 */
import { stringify } from "yaml";
import { errorText, type Outcome, readOutcome } from "./_read-outcome.ts";
import { crdExists, getOptional } from "./_support.ts";
import { type CheckContext, type CheckRun, failed, passed, skipped, type Verdict } from "./context.ts";

export const KGATEWAY_COMPONENT = "kgateway";
export const KGATEWAY_NS = "kgateway-system";
export const GATEWAY_CLASS = "kgateway";
export const GATEWAY = "inference-gateway";
const GATEWAY_API = "gateway.networking.k8s.io/v1";
export const REQUIRED_CRDS = [
  "gateways.gateway.networking.k8s.io",
  "httproutes.gateway.networking.k8s.io",
  "inferencepools.inference.networking.x-k8s.io",
] as const;

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}
export interface GatewayClass {
  metadata?: { name?: string };
  spec?: { controllerName?: string };
  status?: { conditions?: Condition[] };
}
export interface Gateway {
  metadata?: { name?: string; namespace?: string; managedFields?: unknown };
  spec?: { gatewayClassName?: string; listeners?: { name?: string; port?: number; protocol?: string }[] };
  status?: { conditions?: Condition[]; listeners?: { name?: string; attachedRoutes?: number }[] };
}
export interface HttpRoute {
  metadata?: { name?: string; namespace?: string };
  spec?: { parentRefs?: { name?: string; namespace?: string }[] };
}
export interface EndpointSlice {
  metadata?: { name?: string; labels?: Record<string, string> };
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean } }[];
}

/** Whether the recipe names a kgateway component (defensive: componentRefs is untyped). */
export function hasKgateway(componentRefs: unknown): boolean {
  return (
    Array.isArray(componentRefs) &&
    componentRefs.some((c) => (c as { name?: unknown } | null)?.name === KGATEWAY_COMPONENT)
  );
}

const condition = (conditions: Condition[] | undefined, type: string): Condition | undefined =>
  conditions?.find((c) => c.type === type);
const conditionText = (c: Condition | undefined): string =>
  c
    ? `${c.status ?? "Unknown"}${c.reason ? ` (${c.reason}${c.message ? `: ${c.message}` : ""})` : ""}`
    : "absent";

/** The proxy's slices: those whose service-name label contains the Gateway's name (as the original). */
export const gatewaySlices = (slices: EndpointSlice[]): EndpointSlice[] =>
  slices.filter((s) => (s.metadata?.labels?.["kubernetes.io/service-name"] ?? "").includes(GATEWAY));

/** Ready endpoints: `conditions.ready` unset means ready, as the EndpointSlice API defines it. */
export const readyEndpoints = (slices: EndpointSlice[]): number =>
  slices.reduce((n, s) => n + (s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).length, 0);

export const routesOfGateway = (routes: HttpRoute[]): HttpRoute[] =>
  routes.filter((r) => (r.spec?.parentRefs ?? []).some((p) => p.name === GATEWAY));

export interface GatewayReads {
  gatewayClass: Outcome<GatewayClass>;
  gateway: Outcome<Gateway>;
  crds: { name: string; read: Outcome<true> }[];
  routes: Outcome<HttpRoute[]>;
  slices: Outcome<EndpointSlice[]>;
}

/** The issues (pure): each failing part once, in the order the original checks them. */
export function gatewayIssues(r: GatewayReads): string[] {
  const issues: string[] = [];
  const cls = `GatewayClass ${GATEWAY_CLASS}`;
  if (r.gatewayClass.state === "error") issues.push(r.gatewayClass.message);
  else if (r.gatewayClass.state === "absent") issues.push(`${cls} not found`);
  else {
    const accepted = condition(r.gatewayClass.value.status?.conditions, "Accepted");
    if (accepted?.status !== "True") issues.push(`${cls} is not Accepted: ${conditionText(accepted)}`);
  }
  const gw = `Gateway ${KGATEWAY_NS}/${GATEWAY}`;
  if (r.gateway.state === "error") issues.push(r.gateway.message);
  else if (r.gateway.state === "absent") issues.push(`${gw} not found`);
  else {
    const programmed = condition(r.gateway.value.status?.conditions, "Programmed");
    if (programmed?.status !== "True") issues.push(`${gw} is not Programmed: ${conditionText(programmed)}`);
  }
  for (const { name, read } of r.crds) {
    if (read.state === "error") issues.push(read.message);
    else if (read.state === "absent") issues.push(`CRD ${name} is not installed`);
  }
  if (r.slices.state === "error") issues.push(r.slices.message);
  else {
    const slices = r.slices.state === "found" ? gatewaySlices(r.slices.value) : [];
    if (readyEndpoints(slices) === 0)
      issues.push(
        slices.length === 0
          ? `no EndpointSlice of ${GATEWAY} in ${KGATEWAY_NS}: the Gateway's proxy has no endpoint`
          : `the Gateway's proxy has no ready endpoint (${slices.length} EndpointSlice(s) of ${GATEWAY} in ${KGATEWAY_NS})`,
      );
  }
  return issues;
}

export function gatewayVerdict(r: GatewayReads): Verdict {
  const issues = gatewayIssues(r);
  const details = dataPlaneLines(r);
  if (issues.length > 0) return failed(issues.join("; "), details);
  return passed(
    `GatewayClass ${GATEWAY_CLASS} Accepted, Gateway ${KGATEWAY_NS}/${GATEWAY} Programmed with ${readyEndpoints(
      r.slices.state === "found" ? gatewaySlices(r.slices.value) : [],
    )} ready endpoint(s), the ${REQUIRED_CRDS.length} CRDs installed`,
    details,
  );
}

/** The data plane as the evidence block and the verdict's details show it (pure). */
export function dataPlaneLines(r: GatewayReads): string[] {
  const lines: string[] = [];
  if (r.gateway.state === "found") {
    const listeners = r.gateway.value.status?.listeners ?? [];
    const attached = listeners.reduce((n, l) => n + (l.attachedRoutes ?? 0), 0);
    lines.push(`Listeners: ${listeners.length}`, `Attached routes: ${attached}`);
  }
  if (r.routes.state === "found") {
    const mine = routesOfGateway(r.routes.value);
    lines.push(
      `HTTPRoutes referencing ${GATEWAY}: ${mine.length}${mine.length > 0 ? ` (${mine.map((x) => `${x.metadata?.namespace}/${x.metadata?.name}`).join(", ")})` : ""}`,
    );
  } else if (r.routes.state === "error") lines.push(`HTTPRoutes: ${r.routes.message}`);
  if (r.slices.state === "found") {
    const slices = gatewaySlices(r.slices.value);
    lines.push(
      `EndpointSlices of ${GATEWAY}: ${slices.length}`,
      `Ready endpoints: ${readyEndpoints(slices)}`,
    );
  } else if (r.slices.state === "error") lines.push(`EndpointSlices: ${r.slices.message}`);
  return lines;
}

interface Workload {
  metadata?: { name?: string };
  spec?: { replicas?: number; nodeName?: string };
  status?: { readyReplicas?: number; availableReplicas?: number; phase?: string };
}

/** A list for an evidence block: one line per item, or what went wrong (errors are only recorded). */
async function listEvidence(read: () => Promise<Workload[]>, line: (w: Workload) => string): Promise<string> {
  try {
    const items = await read();
    return items.length === 0 ? `none in ${KGATEWAY_NS}` : items.map(line).join("\n");
  } catch (err) {
    return `error: ${errorText(err)}`;
  }
}

export async function readGateway(ctx: Pick<CheckContext, "client">): Promise<GatewayReads> {
  const { client } = ctx;
  const [gatewayClass, gateway, crds, routes, slices] = await Promise.all([
    readOutcome(() =>
      getOptional<GatewayClass>(client, {
        apiVersion: GATEWAY_API,
        kind: "GatewayClass",
        name: GATEWAY_CLASS,
      }),
    ),
    readOutcome(() =>
      getOptional<Gateway>(client, {
        apiVersion: GATEWAY_API,
        kind: "Gateway",
        namespace: KGATEWAY_NS,
        name: GATEWAY,
      }),
    ),
    Promise.all(
      REQUIRED_CRDS.map(async (name) => ({
        name,
        read: await readOutcome(async () => ((await crdExists(client, name)) ? (true as const) : undefined)),
      })),
    ),
    readOutcome(() => client.list<HttpRoute>(GATEWAY_API, "HTTPRoute").then((l) => l.items)),
    readOutcome(() =>
      client
        .list<EndpointSlice>("discovery.k8s.io/v1", "EndpointSlice", { namespace: KGATEWAY_NS })
        .then((l) => l.items),
    ),
  ]);
  return { gatewayClass, gateway, crds, routes, slices };
}

const outcomeText = <T>(o: Outcome<T>, show: (v: T) => string, absentText: string): string =>
  o.state === "found" ? show(o.value) : o.state === "absent" ? absentText : `error: ${o.message}`;

export const run: CheckRun = async (ctx) => {
  if (!ctx.recipe)
    return skipped("no recipe: inference-gateway runs only for a recipe with the kgateway component");
  if (!hasKgateway(ctx.recipe.spec.componentRefs))
    return skipped("the recipe has no kgateway component: no inference gateway to check");
  const { client } = ctx;
  ctx.evidence(
    "kgateway deployments",
    await listEvidence(
      () => client.list<Workload>("apps/v1", "Deployment", { namespace: KGATEWAY_NS }).then((l) => l.items),
      (d) =>
        `${d.metadata?.name}: ${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 1} ready, ${d.status?.availableReplicas ?? 0} available`,
    ),
    `kubectl get deployments -n ${KGATEWAY_NS}`,
  );
  ctx.evidence(
    "kgateway pods",
    await listEvidence(
      () => client.list<Workload>("v1", "Pod", { namespace: KGATEWAY_NS }).then((l) => l.items),
      (p) => `${p.metadata?.name}: ${p.status?.phase ?? "Unknown"} on ${p.spec?.nodeName ?? "(unscheduled)"}`,
    ),
    `kubectl get pods -n ${KGATEWAY_NS} -o wide`,
  );
  const r = await readGateway(ctx);
  ctx.evidence(
    "GatewayClass",
    outcomeText(
      r.gatewayClass,
      (c) =>
        `Name: ${c.metadata?.name}\nController: ${c.spec?.controllerName ?? "(none)"}\nAccepted: ${conditionText(condition(c.status?.conditions, "Accepted"))}`,
      `GatewayClass ${GATEWAY_CLASS}: not found`,
    ),
    `kubectl get gatewayclass ${GATEWAY_CLASS}`,
  );
  ctx.evidence(
    "Gateways",
    outcomeText(
      r.gateway,
      (g) =>
        `${KGATEWAY_NS}/${g.metadata?.name}: class ${g.spec?.gatewayClassName ?? "(none)"}, Programmed ${conditionText(condition(g.status?.conditions, "Programmed"))}`,
      `Gateway ${KGATEWAY_NS}/${GATEWAY}: not found`,
    ),
    `kubectl get gateways -n ${KGATEWAY_NS}`,
  );
  ctx.evidence(
    "Gateway details",
    outcomeText(
      r.gateway,
      (g) => stringify({ ...g, metadata: { ...g.metadata, managedFields: undefined } }).trimEnd(),
      `Gateway ${KGATEWAY_NS}/${GATEWAY}: not found`,
    ),
    `kubectl get gateway ${GATEWAY} -n ${KGATEWAY_NS} -o yaml`,
  );
  ctx.evidence(
    "Required CRDs",
    r.crds.map(({ name, read }) => `${name}: ${outcomeText(read, () => "present", "MISSING")}`).join("\n"),
    `kubectl get crd ${REQUIRED_CRDS.join(" ")}`,
  );
  ctx.evidence(
    "Gateway Data Plane",
    dataPlaneLines(r).join("\n") || "no data plane read",
    `kubectl get endpointslices -n ${KGATEWAY_NS} -l kubernetes.io/service-name=${GATEWAY}`,
  );
  return gatewayVerdict(r);
};
