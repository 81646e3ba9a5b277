/**
 * secure-accelerator-access (CNCF secure_accelerator_access): GPU access goes only through DRA. A pod
 * holding a one-GPU ResourceClaim runs `aicr probe devices` with no device-plugin limit and no hostPath
 * to /dev/nvidia*, and a pod without a claim, bound to the same node, runs `aicr probe devices --expect
 * none` and must see no /dev/nvidia* at all. Never skipped: without DRA the claim test fails.
 */
import { stringify } from "yaml";
import { errorMessage } from "../../core/errors.ts";
import type { ObjectRef } from "../../kube/client.ts";
import type { ClusterPolicy } from "../../kube/types.ts";
import {
  allocatedDevices,
  claimLines,
  claimRef,
  DRA_V1,
  deleteInOrder,
  exitCodeOf,
  GPU_DRIVER,
  gpuClaim,
  lastLine,
  POD_WAIT_MS,
  type Pod,
  podLines,
  podLog,
  podRef,
  probePod,
  type ResourceClaim,
  type ResourceSlice,
  sliceLines,
  watchAllocation,
} from "./_dra.ts";
import { describePod, getOptional, type WorkloadStatus, waitPodEnd } from "./_support.ts";
import { type CheckContext, type CheckRun, failed, passed, type Verdict } from "./context.ts";

export const GPU_OPERATOR_NAMESPACE = "gpu-operator";
const CLAIM_CONTAINER = "gpu-test";
const ISOLATION_CONTAINER = "isolation-test";
const GPU_RESOURCE = "nvidia.com/gpu";

type PodOutcome =
  | { kind: "ended"; pod: Pod }
  | { kind: "stuck"; pod: Pod; reason: string }
  | { kind: "timeout"; last: Pod | undefined };

/** The pod's volumes that bring a host /dev/nvidia* in (pure). */
export const nvidiaHostPaths = (pod: Pod | undefined): string[] =>
  (pod?.spec?.volumes ?? [])
    .filter((v) => v.hostPath?.path?.includes("/dev/nvidia"))
    .map((v) => `${v.name} (hostPath ${v.hostPath?.path})`);

/** Containers (init included) that ask the device plugin for a GPU through resources.limits (pure). */
export const devicePluginContainers = (pod: Pod | undefined): string[] =>
  [...(pod?.spec?.initContainers ?? []), ...(pod?.spec?.containers ?? [])]
    .filter((c) => c.resources?.limits?.[GPU_RESOURCE] !== undefined)
    .map((c) => c.name);

/**
 * The claim pod's verdict (pure): undefined when it got its GPU through DRA alone, else the failure, in
 * the original's order — claim entries, device-plugin limits, hostPath, the claim, the phase.
 */
export function claimPodIssue(
  outcome: PodOutcome,
  o: { pod: string; claim: string; claimExists: boolean; log: string; waitMs: number },
): Verdict | undefined {
  if (outcome.kind === "stuck") return failed(`the GPU test pod ${o.pod} cannot run: ${outcome.reason}`);
  if (outcome.kind === "timeout")
    return failed(
      `the GPU test pod ${o.pod} did not finish within ${Math.round(o.waitMs / 1000)} s (${describePod(outcome.last)})`,
    );
  const pod = outcome.pod;
  if ((pod.spec?.resourceClaims ?? []).length === 0)
    return failed(`pod ${o.pod} has no spec.resourceClaims: its GPU access does not go through DRA`);
  const limited = devicePluginContainers(pod);
  if (limited.length > 0)
    return failed(
      `pod ${o.pod} asks for ${GPU_RESOURCE} in resources.limits (container ${limited.join(", ")}): GPU access through the device plugin, not DRA`,
    );
  const host = nvidiaHostPaths(pod);
  if (host.length > 0)
    return failed(`pod ${o.pod} mounts host device nodes: ${host.join(", ")}: GPU access bypasses DRA`);
  if (!o.claimExists) return failed(`ResourceClaim ${o.claim} not found after the test`);
  if (pod.status?.phase !== "Succeeded") {
    const code = exitCodeOf(pod, CLAIM_CONTAINER);
    return failed(
      `the GPU test pod ${o.pod} holding ResourceClaim ${o.claim} did not succeed (phase ${pod.status?.phase ?? "Unknown"}${code !== undefined ? `, exit code ${code}` : ""}): ${lastLine(o.log) || "no output"}`,
    );
  }
  return undefined;
}

/** What a probe log lists: its /dev/nvidia* lines. */
const seenDevices = (log: string): string[] =>
  log
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith("/dev/nvidia"))
    .map((l) => l.split(" ")[0] ?? l);

/** The isolation probe's verdict (pure): the no-claim pod on the claim pod's node must see no GPU. */
export function isolationVerdict(
  outcome: PodOutcome,
  o: {
    pod: string;
    node: string;
    claimPod: string;
    claim: string;
    claimDevices: string[];
    log: string;
    waitMs: number;
  },
): Verdict {
  if (outcome.kind === "stuck")
    return failed(`isolation cannot be verified: the no-claim pod ${o.pod} cannot run: ${outcome.reason}`);
  if (outcome.kind === "timeout")
    return failed(
      `isolation cannot be verified: the no-claim pod ${o.pod} did not finish within ${Math.round(o.waitMs / 1000)} s (${describePod(outcome.last)})`,
    );
  const pod = outcome.pod;
  const host = nvidiaHostPaths(pod);
  if (host.length > 0)
    return failed(`the no-claim pod ${o.pod} mounts host device nodes: ${host.join(", ")}`);
  const details = [
    `claim pod ${o.claimPod}: ResourceClaim ${o.claim} → ${o.claimDevices.length > 0 ? o.claimDevices.join(", ") : "no device"}`,
    `no-claim pod ${o.pod} on node ${o.node}: ${pod.status?.phase ?? "Unknown"}`,
  ];
  if (pod.status?.phase === "Succeeded")
    return passed(
      `GPU access goes only through DRA: pod ${o.claimPod} got its GPU through ResourceClaim ${o.claim}, and pod ${o.pod} without a claim on node ${o.node} sees no /dev/nvidia*`,
      details,
    );
  const code = exitCodeOf(pod, ISOLATION_CONTAINER);
  if (code === 1) {
    const seen = seenDevices(o.log);
    return failed(
      `a pod without a ResourceClaim sees GPU devices on node ${o.node}: ${seen.length > 0 ? seen.join(", ") : lastLine(o.log)} (expected none)`,
      details,
    );
  }
  return failed(
    `isolation cannot be verified: the no-claim pod ${o.pod} failed${code !== undefined ? ` with exit code ${code}` : ""}: ${lastLine(o.log) || "no output"}`,
    details,
  );
}

/** A read for the baseline evidence: its text, or the error it met (recorded, never fatal). */
async function recorded<T>(read: () => Promise<T>, show: (value: T) => string): Promise<string> {
  try {
    return show(await read());
  } catch (err) {
    return `error: ${errorMessage(err)}`;
  }
}

async function baseline(ctx: CheckContext): Promise<void> {
  const { client } = ctx;
  ctx.evidence(
    "ClusterPolicy status",
    await recorded(
      () =>
        client.get<ClusterPolicy>({
          apiVersion: "nvidia.com/v1",
          kind: "ClusterPolicy",
          name: "cluster-policy",
        }),
      (cp) => `cluster-policy state: ${(cp as { status?: { state?: string } }).status?.state ?? "(none)"}`,
    ),
    "kubectl get clusterpolicy cluster-policy -o jsonpath='{.status.state}'",
  );
  ctx.evidence(
    "GPU operator pods",
    await recorded(
      () => client.list<Pod>("v1", "Pod", { namespace: GPU_OPERATOR_NAMESPACE }),
      (l) =>
        l.items
          .map((p) => `${p.metadata?.name}\t${p.status?.phase ?? "Unknown"}\t${p.spec?.nodeName ?? ""}`)
          .join("\n") || "(none)",
    ),
    `kubectl get pods -n ${GPU_OPERATOR_NAMESPACE} -o wide`,
  );
  ctx.evidence(
    "GPU operator DaemonSets",
    await recorded(
      () => client.list<WorkloadStatus>("apps/v1", "DaemonSet", { namespace: GPU_OPERATOR_NAMESPACE }),
      (l) =>
        l.items
          .map(
            (d) =>
              `${d.metadata?.name}\tdesired ${d.status?.desiredNumberScheduled ?? 0}\tready ${d.status?.numberReady ?? 0}`,
          )
          .join("\n") || "(none)",
    ),
    `kubectl get daemonsets -n ${GPU_OPERATOR_NAMESPACE}`,
  );
  let slices: ResourceSlice[] | undefined;
  ctx.evidence(
    "ResourceSlices",
    await recorded(
      () => client.list<ResourceSlice>(DRA_V1, "ResourceSlice"),
      (l) => {
        slices = l.items;
        return sliceLines(l.items);
      },
    ),
    "kubectl get resourceslices",
  );
  const gpuSlices = (slices ?? []).filter((s) => s.spec?.driver === GPU_DRIVER);
  ctx.evidence(
    "GPU devices in ResourceSlice",
    slices === undefined
      ? "(ResourceSlices not readable)"
      : gpuSlices.length === 0
        ? `(no ResourceSlice of driver ${GPU_DRIVER})`
        : stringify(gpuSlices.map((s) => ({ name: s.metadata?.name, spec: s.spec }))),
    "kubectl get resourceslices -o yaml",
  );
}

export const run: CheckRun = async (ctx) => {
  await baseline(ctx);
  const ns = ctx.testNamespace;
  const claimName = ctx.name("gpu-claim");
  const podName = ctx.name("dra-gpu-test");
  const noClaimName = ctx.name("dra-no-claim");
  const created: { ref: ObjectRef; uid?: string | undefined }[] = [];
  let watching: ReturnType<typeof watchAllocation> | undefined;
  try {
    let claim: ResourceClaim;
    try {
      claim = await ctx.client.create(gpuClaim(ctx, claimName));
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      return failed(`ResourceClaim ${claimName} cannot be created (is DRA available?): ${errorMessage(err)}`);
    }
    created.unshift({ ref: claimRef(ns, claimName), uid: claim.metadata?.uid });
    watching = watchAllocation(ctx, ns, claimName, claim.metadata?.resourceVersion);
    const pod = await ctx.client.create(
      probePod(ctx, { name: podName, container: CLAIM_CONTAINER, args: ["probe", "devices"], claimName }),
    );
    created.unshift({ ref: podRef(ns, podName), uid: pod.metadata?.uid });
    const waitMs = ctx.waitMs(POD_WAIT_MS);
    const outcome = await waitPodEnd(ctx, ns, podName, { maxMs: waitMs });
    const last = outcome.kind === "timeout" ? outcome.last : outcome.pod;
    const allocated = await watching.stop();
    let claimNow: ResourceClaim | undefined | "unread";
    try {
      claimNow = await getOptional<ResourceClaim>(ctx.client, claimRef(ns, claimName));
    } catch {
      claimNow = "unread";
    }
    const log = outcome.kind === "ended" ? await podLog(ctx, ns, podName, CLAIM_CONTAINER) : "";
    ctx.evidence("Pod status", podLines(last, podName), `kubectl get pod ${podName} -n ${ns} -o wide`);
    ctx.evidence(
      "Pod resourceClaims",
      stringify(last?.spec?.resourceClaims ?? []).trimEnd() || "[]",
      `kubectl get pod ${podName} -n ${ns} -o jsonpath='{.spec.resourceClaims}'`,
    );
    const host = nvidiaHostPaths(last);
    ctx.evidence(
      "Pod volumes (no hostPath)",
      [
        ...(last?.spec?.volumes ?? []).map(
          (v) => `${v.name}${v.hostPath ? ` hostPath ${v.hostPath.path}` : ""}`,
        ),
        host.length > 0 ? `hostPath to /dev/nvidia*: ${host.join(", ")}` : "no hostPath to /dev/nvidia*",
      ].join("\n"),
      `kubectl get pod ${podName} -n ${ns} -o jsonpath='{.spec.volumes}'`,
    );
    const devices = allocatedDevices(allocated);
    ctx.evidence(
      "ResourceClaim allocation",
      `${claimLines(claimName, allocated, claimNow)}\nallocated devices: ${devices.length}`,
      `kubectl get resourceclaim ${claimName} -n ${ns} -o jsonpath='{.status.allocation}'`,
    );
    if (outcome.kind === "ended")
      ctx.evidence("Isolation test logs", log, `kubectl logs ${podName} -n ${ns}`);
    const issue = claimPodIssue(outcome, {
      pod: podName,
      claim: claimName,
      claimExists: claimNow !== undefined,
      log,
      waitMs,
    });
    if (issue) return issue;

    // The isolation probe: no claim, the claim pod's node, past the scheduler.
    const node = last?.spec?.nodeName ?? "";
    const noClaim = await ctx.client.create(
      probePod(ctx, {
        name: noClaimName,
        container: ISOLATION_CONTAINER,
        args: ["probe", "devices", "--expect", "none"],
        nodeName: node,
      }),
    );
    created.unshift({ ref: podRef(ns, noClaimName), uid: noClaim.metadata?.uid });
    const isolation = await waitPodEnd(ctx, ns, noClaimName, { maxMs: waitMs });
    const isoLast = isolation.kind === "timeout" ? isolation.last : isolation.pod;
    const isoLog = isolation.kind === "ended" ? await podLog(ctx, ns, noClaimName, ISOLATION_CONTAINER) : "";
    ctx.evidence(
      "DRA Isolation Test",
      `${podLines(isoLast, noClaimName)}\n  hostPath to /dev/nvidia*: ${nvidiaHostPaths(isoLast).join(", ") || "none"}`,
      `kubectl get pod ${noClaimName} -n ${ns} -o wide`,
    );
    if (isolation.kind === "ended")
      ctx.evidence("No-claim pod logs", isoLog, `kubectl logs ${noClaimName} -n ${ns}`);
    return isolationVerdict(isolation, {
      pod: noClaimName,
      node,
      claimPod: podName,
      claim: claimName,
      claimDevices: devices,
      log: isoLog,
      waitMs,
    });
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return failed(`the secure accelerator access test could not run: ${errorMessage(err)}`);
  } finally {
    await watching?.stop();
    // The no-claim pod first, then the claim pod, then its claim.
    await deleteInOrder(ctx, created);
  }
};
