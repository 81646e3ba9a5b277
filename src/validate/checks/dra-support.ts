/**
 * dra-support (CNCF dra_support): the DRA API is served, the NVIDIA DRA driver is healthy, ResourceSlices
 * exist, and a pod holding a one-GPU ResourceClaim really gets its GPU (`aicr probe devices` sees a
 * /dev/nvidia<N>). Skipped when the cluster serves no DRA API, or the driver is not installed.
 */
import { errorMessage } from "../../core/errors.ts";
import type { ObjectRef } from "../../kube/client.ts";
import {
  type ApiResource,
  allocatedDevices,
  claimLines,
  claimRef,
  cleanupEvidence,
  DRA_V1,
  DRA_V1BETA1,
  deleteInOrder,
  exitCodeOf,
  gpuClaim,
  lastLine,
  manifestLines,
  POD_WAIT_MS,
  type Pod,
  podLines,
  podLog,
  podRef,
  probePod,
  type ResourceClaim,
  type ResourceSlice,
  resourceLines,
  servedResources,
  sliceLines,
  watchAllocation,
} from "./_dra.ts";
import {
  daemonSetRef,
  deploymentAvailable,
  deploymentRef,
  describePod,
  getOptional,
  type WorkloadStatus,
  waitPodEnd,
} from "./_support.ts";
import { type CheckContext, type CheckRun, failed, passed, skipped, type Verdict } from "./context.ts";

export const DRA_DRIVER_NAMESPACE = "nvidia-dra-driver";
export const DRA_CONTROLLER = "nvidia-dra-driver-gpu-controller";
export const DRA_KUBELET_PLUGIN = "nvidia-dra-driver-gpu-kubelet-plugin";
const CONTAINER = "gpu-test";

/** What the check reads before it creates anything. */
export interface DraFacts {
  /** resource.k8s.io/v1's resources; undefined when not served. */
  v1: ApiResource[] | undefined;
  /** resource.k8s.io/v1beta1's; undefined when not served (asked only without v1). */
  v1beta1: ApiResource[] | undefined;
  /** The driver's pods, or the list's error. */
  pods: { name: string; phase: string }[] | { error: string };
  controller: WorkloadStatus | undefined;
  /** The controller's read failed with something other than NotFound. */
  controllerError?: string | undefined;
  plugin: WorkloadStatus | undefined;
  slices: ResourceSlice[] | undefined;
}

/** Where the checks before the claim test stand: each stage writes its evidence block, then decides. */
export type DraStage = "api" | "pods" | "controller" | "plugin" | "slices";

/**
 * The verdict before the claim test (pure): a skip or failure with the stage that decided it, or
 * undefined to go on. The skips first (no DRA API at all; no driver: no pods and no controller), then
 * the failures in the original's order.
 */
export function draPrerequisites(f: DraFacts): { verdict: Verdict; stage: DraStage } | undefined {
  const at = (stage: DraStage, verdict: Verdict) => ({ verdict, stage });
  if (!f.v1 && !f.v1beta1)
    return at(
      "api",
      skipped(
        `the cluster serves no DRA API (neither ${DRA_V1} nor ${DRA_V1BETA1}): dynamic resource allocation is not available`,
      ),
    );
  const noPods = "error" in f.pods || f.pods.length === 0;
  if (noPods && !f.controller)
    return at(
      "api",
      skipped(
        `the NVIDIA DRA driver is not installed: no pods in namespace ${DRA_DRIVER_NAMESPACE} and no Deployment ${DRA_DRIVER_NAMESPACE}/${DRA_CONTROLLER}${f.controllerError ? ` (${f.controllerError})` : ""}`,
      ),
    );
  if (!f.v1)
    return at(
      "api",
      failed(
        `${DRA_V1} is not served (only ${DRA_V1BETA1}): the DRA API must be served at v1 (Kubernetes 1.34 or later)`,
      ),
    );
  if ("error" in f.pods)
    return at(
      "pods",
      failed(`the pods in namespace ${DRA_DRIVER_NAMESPACE} cannot be listed: ${f.pods.error}`),
    );
  if (!f.controller)
    return at("controller", failed(`Deployment ${DRA_DRIVER_NAMESPACE}/${DRA_CONTROLLER} not found`));
  if (!deploymentAvailable(f.controller))
    return at(
      "controller",
      failed(
        `Deployment ${DRA_DRIVER_NAMESPACE}/${DRA_CONTROLLER} is not available: ${f.controller.status?.availableReplicas ?? 0} available replicas (expected at least 1)`,
      ),
    );
  if (!f.plugin)
    return at("plugin", failed(`DaemonSet ${DRA_DRIVER_NAMESPACE}/${DRA_KUBELET_PLUGIN} not found`));
  if ((f.plugin.status?.numberReady ?? 0) < 1)
    return at(
      "plugin",
      failed(
        `DaemonSet ${DRA_DRIVER_NAMESPACE}/${DRA_KUBELET_PLUGIN} has no ready pod: numberReady ${f.plugin.status?.numberReady ?? 0} of ${f.plugin.status?.desiredNumberScheduled ?? 0} desired (expected at least 1)`,
      ),
    );
  if (!f.slices || f.slices.length === 0)
    return at("slices", failed("no ResourceSlices are published: no DRA driver advertises any device"));
  return undefined;
}

/** The claim test's verdict (pure): the pod's end, with what it printed. */
export function claimPodVerdict(
  outcome:
    | { kind: "ended"; pod: Pod }
    | { kind: "stuck"; pod: Pod; reason: string }
    | { kind: "timeout"; last: Pod | undefined },
  o: {
    pod: string;
    claim: string;
    /** The claim as allocated while the pod ran (undefined: never seen allocated). */
    allocated: ResourceClaim | undefined;
    log: string;
    waitMs: number;
  },
): Verdict {
  if (outcome.kind === "stuck") return failed(`the GPU test pod ${o.pod} cannot run: ${outcome.reason}`);
  if (outcome.kind === "timeout")
    return failed(
      `the GPU test pod ${o.pod} did not finish within ${Math.round(o.waitMs / 1000)} s (${describePod(outcome.last)})`,
    );
  const pod = outcome.pod;
  const devices = allocatedDevices(o.allocated);
  const details = [
    `ResourceClaim ${o.claim}: ${devices.length > 0 ? devices.join(", ") : "no device allocated"}`,
  ];
  if (pod.status?.phase === "Succeeded")
    return passed(
      `a pod holding ResourceClaim ${o.claim} ran on node ${pod.spec?.nodeName ?? "?"} and saw its GPU: ${lastLine(o.log)}`,
      details,
    );
  const code = exitCodeOf(pod, CONTAINER);
  return failed(
    `the GPU test pod ${o.pod} holding ResourceClaim ${o.claim} failed${code !== undefined ? ` (exit code ${code})` : ""}: ${lastLine(o.log) || "no output"}`,
    details,
  );
}

async function readFacts(ctx: CheckContext): Promise<DraFacts> {
  const { client } = ctx;
  const v1 = await servedResources(client, DRA_V1);
  const v1beta1 = v1 ? undefined : await servedResources(client, DRA_V1BETA1);
  const pods = await client
    .list<Pod>("v1", "Pod", { namespace: DRA_DRIVER_NAMESPACE })
    .then((l) => l.items.map((p) => ({ name: p.metadata?.name ?? "", phase: p.status?.phase ?? "Unknown" })))
    .catch((err: unknown) => ({ error: errorMessage(err) }));
  let controller: WorkloadStatus | undefined;
  let controllerError: string | undefined;
  try {
    controller = await getOptional<WorkloadStatus>(
      client,
      deploymentRef(DRA_DRIVER_NAMESPACE, DRA_CONTROLLER),
    );
  } catch (err) {
    controllerError = errorMessage(err);
  }
  const plugin = controller
    ? await getOptional<WorkloadStatus>(client, daemonSetRef(DRA_DRIVER_NAMESPACE, DRA_KUBELET_PLUGIN))
    : undefined;
  const slices = v1 ? (await client.list<ResourceSlice>(DRA_V1, "ResourceSlice")).items : undefined;
  return { v1, v1beta1, pods, controller, controllerError, plugin, slices };
}

function workloadLines(kind: string, w: WorkloadStatus | undefined, name: string): string {
  if (!w) return `${kind} ${DRA_DRIVER_NAMESPACE}/${name}: not found`;
  const s = w.status ?? {};
  return kind === "Deployment"
    ? `${kind} ${DRA_DRIVER_NAMESPACE}/${name}: replicas ${w.spec?.replicas ?? 1}, available ${s.availableReplicas ?? 0}, ready ${s.readyReplicas ?? 0}`
    : `${kind} ${DRA_DRIVER_NAMESPACE}/${name}: desired ${s.desiredNumberScheduled ?? 0}, ready ${s.numberReady ?? 0}`;
}

export const run: CheckRun = async (ctx) => {
  let f: DraFacts;
  try {
    f = await readFacts(ctx);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return failed(`the DRA driver's state cannot be read: ${errorMessage(err)}`);
  }
  const early = draPrerequisites(f);
  const blocks: [DraStage, () => void][] = [
    [
      "api",
      () => {
        const api = f.v1 ?? f.v1beta1;
        if (api)
          ctx.evidence(
            "DRA API resources",
            `${f.v1 ? DRA_V1 : DRA_V1BETA1}\n${resourceLines(api)}`,
            "kubectl api-resources --api-group=resource.k8s.io",
          );
      },
    ],
    [
      "pods",
      () =>
        ctx.evidence(
          "DRA driver pods",
          "error" in f.pods
            ? `error: ${f.pods.error}`
            : f.pods.map((p) => `${p.name}\t${p.phase}`).join("\n") || "(none)",
          `kubectl get pods -n ${DRA_DRIVER_NAMESPACE}`,
        ),
    ],
    [
      "controller",
      () =>
        ctx.evidence(
          "DRA Controller Deployment",
          workloadLines("Deployment", f.controller, DRA_CONTROLLER),
          `kubectl get deployment ${DRA_CONTROLLER} -n ${DRA_DRIVER_NAMESPACE}`,
        ),
    ],
    [
      "plugin",
      () =>
        ctx.evidence(
          "DRA Kubelet Plugin DaemonSet",
          workloadLines("DaemonSet", f.plugin, DRA_KUBELET_PLUGIN),
          `kubectl get daemonset ${DRA_KUBELET_PLUGIN} -n ${DRA_DRIVER_NAMESPACE}`,
        ),
    ],
    [
      "slices",
      () => ctx.evidence("ResourceSlices", sliceLines(f.slices ?? []), "kubectl get resourceslices"),
    ],
  ];
  for (const [stage, write] of blocks) {
    write();
    if (early?.stage === stage) return early.verdict;
  }
  return claimTest(ctx);
};

/** The claim test: a one-GPU claim, a pod holding it that runs `aicr probe devices`, its end. */
async function claimTest(ctx: CheckContext): Promise<Verdict> {
  const ns = ctx.testNamespace;
  const claimName = ctx.name("gpu-claim");
  const podName = ctx.name("dra-gpu-test");
  const created: { ref: ObjectRef; uid?: string | undefined }[] = [];
  let watching: ReturnType<typeof watchAllocation> | undefined;
  try {
    const claim = await ctx.client.create(gpuClaim(ctx, claimName));
    created.unshift({ ref: claimRef(ns, claimName), uid: claim.metadata?.uid });
    watching = watchAllocation(ctx, ns, claimName, claim.metadata?.resourceVersion);
    const podObject = probePod(ctx, {
      name: podName,
      container: CONTAINER,
      args: ["probe", "devices"],
      claimName,
    });
    const pod = await ctx.client.create(podObject);
    // The pod goes before its claim.
    created.unshift({ ref: podRef(ns, podName), uid: pod.metadata?.uid });
    ctx.evidence("Apply test manifest", manifestLines([claim, pod]), "kubectl apply -f dra-gpu-test.yaml");
    const waitMs = ctx.waitMs(POD_WAIT_MS);
    const outcome = await waitPodEnd(ctx, ns, podName, { maxMs: waitMs });
    const allocated = await watching.stop();
    let claimNow: ResourceClaim | undefined;
    try {
      claimNow = await getOptional<ResourceClaim>(ctx.client, claimRef(ns, claimName));
    } catch (err) {
      return failed(`ResourceClaim ${claimName} cannot be read after the test: ${errorMessage(err)}`);
    }
    ctx.evidence(
      "ResourceClaim status",
      claimLines(claimName, allocated, claimNow),
      `kubectl get resourceclaim ${claimName} -n ${ns} -o yaml`,
    );
    if (!claimNow) return failed(`ResourceClaim ${claimName} not found after the test`);
    const last = outcome.kind === "timeout" ? outcome.last : outcome.pod;
    ctx.evidence("Pod status", podLines(last, podName), `kubectl get pod ${podName} -n ${ns} -o wide`);
    const log = outcome.kind === "ended" ? await podLog(ctx, ns, podName, CONTAINER) : "";
    if (outcome.kind === "ended") ctx.evidence("Pod logs", log, `kubectl logs ${podName} -n ${ns}`);
    return claimPodVerdict(outcome, { pod: podName, claim: claimName, allocated, log, waitMs });
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return failed(`the DRA claim test could not run: ${errorMessage(err)}`);
  } finally {
    await watching?.stop();
    const lines = await deleteInOrder(ctx, created);
    ctx.evidence("Delete test namespace", cleanupEvidence(ns, lines));
  }
}
