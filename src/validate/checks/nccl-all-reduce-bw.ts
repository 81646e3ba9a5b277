/**
 * nccl-all-reduce-bw (performance): the east-west GPU fabric's NCCL all-reduce bus bandwidth, measured
 * by nccl-tests under Kubeflow Trainer (a TrainJob of OpenMPI over SSH across every GPU node), against
 * the recipe's nccl-all-reduce-bw constraint with a 10% tolerance. Trainer and the test image are the
 * operator's: without them the check skips and says what to provide.
 */
import { Writable } from "node:stream";
import type { KubeClient } from "../../kube/client.ts";
import { isNotFound } from "../../kube/errors.ts";
import type { Json, V1Node, V1Pod } from "../../kube/types.ts";
import {
  bandwidthVerdict,
  eksShape,
  evidenceLines,
  type Gate,
  gkeNetworks,
  logTail,
  nodeGate,
  parseBusBandwidth,
  prerequisiteGate,
  recipeGate,
  TRAINER_CRDS,
  TRAINER_VERSION,
  WAIT,
} from "./_nccl.ts";
import {
  launcherSelector,
  type NcclRun,
  type PlatformShape,
  runtimeName,
  trainingRuntime,
  trainJob,
  trainJobName,
} from "./_nccl-templates.ts";
import { crdExists, deleteQuietly, describePod, getOptional, pollFor, waitPodEnd } from "./_support.ts";
import { type CheckContext, type CheckRun, failed, passed, skipped, type Verdict } from "./context.ts";

type Pod = Json<V1Pod>;
type Node = Json<V1Node>;

/** The launcher's log kept for parsing: its last 1 MiB (the data rows end it). */
const LOG_KEEP_BYTES = 1024 * 1024;

const stop = <T>(gate: Gate<T>): Verdict | undefined =>
  gate.kind === "skip"
    ? skipped(gate.message, gate.details)
    : gate.kind === "fail"
      ? failed(gate.message, gate.details)
      : undefined;

async function listNodes(client: KubeClient): Promise<Node[]> {
  const nodes: Node[] = [];
  let continueToken: string | undefined;
  do {
    const page = await client.list<Node>("v1", "Node", { limit: 500, continueToken });
    nodes.push(...page.items);
    continueToken = page.continueToken;
  } while (continueToken);
  return nodes;
}

/** The networking.gke.io/v1 Network names; none when the API is not served. */
async function gkeNetworkNames(client: KubeClient): Promise<string[]> {
  try {
    const list = await client.list<{ metadata?: { name?: string } }>("networking.gke.io/v1", "Network");
    return list.items.map((n) => n.metadata?.name ?? "").filter(Boolean);
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
}

/** A container's log through the API (pods/log), its last LOG_KEEP_BYTES. */
async function readLog(ctx: CheckContext, pod: string, container: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk);
      size += chunk.length;
      if (size > 2 * LOG_KEEP_BYTES) {
        const tail = Buffer.concat(chunks).subarray(-LOG_KEEP_BYTES);
        chunks.length = 0;
        chunks.push(tail);
        size = tail.length;
      }
      done();
    },
  });
  await ctx.client.followLog(
    { namespace: ctx.testNamespace, pod, container },
    { out, signal: ctx.signal, follow: false },
  );
  return Buffer.concat(chunks).subarray(-LOG_KEEP_BYTES).toString("utf8");
}

/** Why a TrainJob will never start, from its own conditions (Trainer's Failed), or undefined. */
function trainJobFailure(
  tj:
    | { status?: { conditions?: { type?: string; status?: string; reason?: string; message?: string }[] } }
    | undefined,
): string | undefined {
  const c = tj?.status?.conditions?.find((x) => x.type === "Failed" && x.status === "True");
  return c ? `${c.reason ?? "Failed"}${c.message ? `: ${c.message}` : ""}` : undefined;
}

function terminated(pod: Pod): string {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  const bad = statuses.find((s) => (s.state?.terminated?.exitCode ?? 0) !== 0);
  const t = bad?.state?.terminated;
  if (!bad || !t) return `phase ${pod.status?.phase ?? "Unknown"}`;
  return `container ${bad.name} exited ${t.exitCode}${t.reason ? ` (${t.reason})` : ""}${t.message ? `: ${t.message.trim()}` : ""}`;
}

export const run: CheckRun = async (ctx) => {
  const recipe = recipeGate(ctx.recipe);
  if (recipe.kind !== "go") return stop(recipe)!;
  const gpu = nodeGate(await listNodes(ctx.client));
  if (gpu.kind !== "go") return stop(gpu)!;

  const missingCrds: string[] = [];
  for (const crd of TRAINER_CRDS) if (!(await crdExists(ctx.client, crd))) missingCrds.push(crd);
  const prereq = prerequisiteGate({ platform: recipe.platform, ncclImage: ctx.ncclImage, missingCrds });
  if (prereq.kind !== "go") return stop(prereq)!;

  let shape: PlatformShape;
  if (recipe.platform === "eks") {
    const eks = eksShape(gpu.nodes);
    if (eks.kind !== "go") return stop(eks)!;
    if (eks.otherTypes.length > 0)
      ctx.log.warn(
        `GPU nodes of several instance types: the workers run on ${eks.instanceType} only (also found: ${eks.otherTypes.join(", ")})`,
      );
    shape = { platform: "eks", instanceType: eks.instanceType, efa: eks.efa };
  } else {
    const gke = gkeNetworks(await gkeNetworkNames(ctx.client));
    if (gke.kind !== "go") return stop(gke)!;
    shape = { platform: "gke", networks: gke.networks };
  }

  const spec: NcclRun = {
    namespace: ctx.testNamespace,
    runtimeName: runtimeName(ctx.name),
    trainJobName: trainJobName(ctx.name),
    labels: ctx.labels,
    image: prereq.image,
    gpusPerNode: gpu.gpusPerNode,
    workers: gpu.workers,
    launcherNodeSelector: ctx.placement.nodeSelector,
  };
  const shapeLine =
    shape.platform === "eks"
      ? `EKS: workers on instance type ${shape.instanceType}, ${shape.efa > 0 ? `${shape.efa} EFA adapter(s) each` : "no EFA adapters (largest message 4G)"}`
      : `GKE: GPUDirect-TCPXO over ${shape.networks.length} GPU NIC networks`;
  const details = [
    `${spec.workers} worker(s) × ${spec.gpusPerNode} GPU(s) = ${spec.workers * spec.gpusPerNode} ranks; ${shapeLine}`,
    `image ${spec.image}; TrainJob ${spec.namespace}/${spec.trainJobName}`,
  ];
  ctx.log.info(`NCCL all-reduce across ${spec.workers} GPU node(s) with ${spec.image}`);

  const runtimeRef = {
    apiVersion: TRAINER_VERSION,
    kind: "TrainingRuntime",
    namespace: spec.namespace,
    name: spec.runtimeName,
  };
  const jobRef = {
    apiVersion: TRAINER_VERSION,
    kind: "TrainJob",
    namespace: spec.namespace,
    name: spec.trainJobName,
  };
  let runtimeUid: string | undefined;
  let jobUid: string | undefined;
  try {
    try {
      const created = await ctx.client.create(trainingRuntime(spec, shape));
      runtimeUid = created.metadata?.uid;
    } catch (err) {
      return failed(
        `could not create the TrainingRuntime ${spec.runtimeName}: ${(err as Error).message}`,
        details,
      );
    }
    const visible = await pollFor(
      ctx,
      { intervalMs: WAIT.runtimePollMs, maxMs: ctx.waitMs(WAIT.runtimeVisibleMs) },
      async () => ((await getOptional(ctx.client, runtimeRef)) ? true : undefined),
    );
    if (!visible)
      return failed(`the TrainingRuntime ${spec.runtimeName} was not readable after it was created`, details);
    try {
      const created = await ctx.client.create(trainJob(spec));
      jobUid = created.metadata?.uid;
    } catch (err) {
      return failed(`the NCCL test did not start: ${(err as Error).message}`, details);
    }

    // The launcher: the TrainJob's JobSet pod of the launcher job, in this namespace only.
    let jobFailure: string | undefined;
    const launcher = await pollFor(
      ctx,
      { intervalMs: WAIT.launcherPollMs, maxMs: ctx.waitMs(WAIT.launcherAppearsMs) },
      async () => {
        const pods = await ctx.client.list<Pod>("v1", "Pod", {
          namespace: spec.namespace,
          labelSelector: launcherSelector(spec.trainJobName),
        });
        const first = pods.items[0];
        if (first) return first;
        jobFailure = trainJobFailure(await getOptional(ctx.client, jobRef));
        return jobFailure ? null : undefined;
      },
    );
    if (!launcher)
      return failed(
        jobFailure
          ? `the TrainJob ${spec.trainJobName} failed before its launcher started: ${jobFailure}`
          : `no launcher pod of the TrainJob ${spec.trainJobName} appeared within ${Math.round(ctx.waitMs(WAIT.launcherAppearsMs) / 1000)} s: is the Kubeflow Trainer controller (and JobSet) running?`,
        details,
      );
    const podName = launcher.metadata?.name ?? "";
    details.push(`launcher pod ${podName}`);
    const end = await waitPodEnd(ctx, spec.namespace, podName, { maxMs: ctx.waitMs(WAIT.trainJobRunMs) });
    if (end.kind === "stuck")
      return failed(`the NCCL launcher pod ${podName} cannot run: ${end.reason}`, details);
    if (end.kind === "timeout")
      return failed(
        `the NCCL launcher pod ${podName} did not finish within ${Math.round(ctx.waitMs(WAIT.trainJobRunMs) / 1000)} s (${describePod(end.last)})`,
        details,
      );
    const container = end.pod.spec?.containers?.[0]?.name ?? "node";
    const log = await readLog(ctx, podName, container).catch((err: Error) => {
      ctx.log.warn(`could not read the log of the launcher ${podName}: ${err.message}`);
      return "";
    });
    if (end.pod.status?.phase === "Failed")
      return failed(`the NCCL launcher pod ${podName} failed: ${terminated(end.pod)}`, [
        ...details,
        ...(log ? ["launcher log (last lines):", ...logTail(log).map((l) => `  ${l}`)] : []),
      ]);
    const measured = parseBusBandwidth(log);
    if (!measured)
      return failed(
        `the launcher's output holds no nccl-tests result row (container ${container} of ${podName})`,
        [
          ...details,
          ...(log
            ? ["launcher log (last lines):", ...logTail(log).map((l) => `  ${l}`)]
            : ["the log was empty"]),
        ],
      );
    const verdict = bandwidthVerdict(measured.busbw, recipe.constraint, recipe.threshold);
    ctx.evidence(
      "NCCL All Reduce Bandwidth",
      evidenceLines(measured.busbw, recipe.constraint, verdict.passed),
    );
    details.push(`largest message ${measured.size} bytes`);
    return verdict.passed ? passed(verdict.message, details) : failed(verdict.message, details);
  } finally {
    // The TrainJob first (its JobSet and pods go with it), then the runtime; the namespace's delete is the backstop.
    if (jobUid) await deleteQuietly(ctx.client, jobRef, jobUid);
    if (runtimeUid) await deleteQuietly(ctx.client, runtimeRef, runtimeUid);
  }
};
