/** One pod's life on the kubelet: image pulls, init containers in order, then the containers together. */
import type { KObject, Store } from "../store.ts";
import { type Clock, rfc3339 } from "./clock.ts";
import { ContainerConfigError, containerEnv } from "./env.ts";
import type { EventRecorder } from "./events.ts";
import type { KubeletLogs } from "./logs.ts";
import type { ContainerView, PodView } from "./pod-status.ts";
import { type ContainerRuntime, pullImage, sleep } from "./runtime.ts";

export interface PodWorkerContext {
  store: Store;
  pod: KObject;
  podIP: string;
  hostIP: string;
  signal: AbortSignal;
  clock: Clock;
  runtime: ContainerRuntime;
  logs: KubeletLogs;
  record: EventRecorder;
  isUnpullable(image: string): boolean;
  imagePullBackoffMs: number;
  writeStatus(view: PodView): void;
}

type Spec = KObject["spec"];
const decoder = new TextDecoder();
const text = (c: string | Uint8Array) => (typeof c === "string" ? c : decoder.decode(c));
const hex64 = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("");

export async function runPod(ctx: PodWorkerContext): Promise<void> {
  const { pod, clock } = ctx;
  const now = () => rfc3339(clock.now());
  const initSpecs: Spec[] = pod.spec.initContainers ?? [];
  const mainSpecs: Spec[] = pod.spec.containers ?? [];
  const waiting = (c: Spec, reason: string): ContainerView => ({
    name: c.name,
    image: c.image,
    state: { waiting: { reason } },
  });
  const view: PodView = {
    phase: "Pending",
    hostIP: ctx.hostIP,
    podIP: ctx.podIP,
    startTime: now(),
    init: initSpecs.map((c) => waiting(c, "PodInitializing")),
    main: mainSpecs.map((c) => waiting(c, initSpecs.length > 0 ? "PodInitializing" : "ContainerCreating")),
  };
  ctx.writeStatus(view);
  const fieldPath = (isInit: boolean, i: number) =>
    `spec.${isInit ? "initContainers" : "containers"}{${(isInit ? initSpecs : mainSpecs)[i].name}}`;

  // Every image is pulled before any container starts (real kubelets pull per container, just in time).
  const all = [
    ...initSpecs.map((c, i) => [c, true, i] as const),
    ...mainSpecs.map((c, i) => [c, false, i] as const),
  ];
  for (const [c, isInit, i] of all) {
    const slot = (isInit ? view.init : view.main)[i]!;
    const fp = fieldPath(isInit, i);
    const pull = await pullImage(ctx.runtime, c.image, ctx.isUnpullable);
    if (ctx.signal.aborted) return;
    if (pull.ok) {
      if (pull.pulled) {
        ctx.record(pod, "Normal", "Pulling", `Pulling image "${c.image}"`, fp);
        ctx.record(pod, "Normal", "Pulled", `Successfully pulled image "${c.image}"`, fp);
      } else
        ctx.record(pod, "Normal", "Pulled", `Container image "${c.image}" already present on machine`, fp);
      continue;
    }
    const msg = pull.message;
    ctx.record(pod, "Normal", "Pulling", `Pulling image "${c.image}"`, fp);
    ctx.record(pod, "Warning", "Failed", `Failed to pull image "${c.image}": ${msg}`, fp);
    ctx.record(pod, "Warning", "Failed", "Error: ErrImagePull", fp);
    slot.state = { waiting: { reason: "ErrImagePull", message: msg } };
    ctx.writeStatus(view);
    if (!(await sleep(clock.setTimeout.bind(clock), ctx.imagePullBackoffMs, ctx.signal))) return;
    // Simplification: after ImagePullBackOff the pull is never retried; the pod stays Pending.
    ctx.record(pod, "Normal", "BackOff", `Back-off pulling image "${c.image}"`, fp);
    ctx.record(pod, "Warning", "Failed", "Error: ImagePullBackOff", fp);
    slot.state = { waiting: { reason: "ImagePullBackOff", message: `Back-off pulling image "${c.image}"` } };
    ctx.writeStatus(view);
    return;
  }

  for (let i = 0; i < initSpecs.length; i++) {
    const code = await runContainer(ctx, view, initSpecs[i], view.init[i]!, fieldPath(true, i));
    if (code === undefined) return;
    if (code !== 0) {
      view.phase = "Failed";
      for (const m of view.main) m.state = { waiting: { reason: "PodInitializing" } };
      ctx.writeStatus(view);
      return;
    }
    ctx.writeStatus(view);
  }
  view.phase = "Running";
  const codes = await Promise.all(
    mainSpecs.map((c, i) => runContainer(ctx, view, c, view.main[i]!, fieldPath(false, i), true)),
  );
  if (codes.some((c) => c === undefined)) return;
  // Simplification: restartPolicy Always/OnFailure containers are not restarted; the pod ends like Never.
  view.phase = codes.every((c) => c === 0) ? "Succeeded" : "Failed";
  ctx.writeStatus(view);
}

/** Runs one container to its end; undefined when the pod went away or its config cannot be built. */
async function runContainer(
  ctx: PodWorkerContext,
  view: PodView,
  spec: Spec,
  slot: ContainerView,
  fieldPath: string,
  concurrent = false,
): Promise<number | undefined> {
  const { pod, clock } = ctx;
  let env: Record<string, string>;
  try {
    env = containerEnv(
      ctx.store,
      { ...pod, status: { ...pod.status, podIP: view.podIP, hostIP: view.hostIP } },
      spec,
    );
  } catch (err) {
    if (!(err instanceof ContainerConfigError)) throw err;
    // Simplification: CreateContainerConfigError is not retried when the ConfigMap appears later.
    slot.state = { waiting: { reason: "CreateContainerConfigError", message: err.message } };
    ctx.record(pod, "Warning", "Failed", `Error: ${err.message}`, fieldPath);
    ctx.writeStatus(view);
    return undefined;
  }
  const containerID = `containerd://${hex64()}`;
  slot.containerID = containerID;
  const startedAt = rfc3339(clock.now());
  const log = ctx.logs.open(pod.metadata.uid!, spec.name, () => clock.now());
  ctx.record(pod, "Normal", "Created", `Created container: ${spec.name}`, fieldPath);
  ctx.record(pod, "Normal", "Started", `Started container ${spec.name}`, fieldPath);
  slot.state = { running: { startedAt } };
  if (!concurrent || view.main.every((c) => "running" in c.state || "terminated" in c.state))
    ctx.writeStatus(view);
  let exitCode: number;
  let message: string | undefined;
  let reason: string | undefined;
  try {
    const res = await ctx.runtime.run({
      pod,
      container: spec,
      env,
      signal: ctx.signal,
      stdout: (c) => log.write(text(c)),
      stderr: (c) => log.write(text(c)),
    });
    exitCode = res.exitCode;
    message = res.message;
  } catch (err) {
    exitCode = 128;
    reason = "StartError";
    message = (err as Error).message;
  } finally {
    log.finish();
  }
  if (ctx.signal.aborted) return undefined;
  if (message === undefined && exitCode !== 0 && spec.terminationMessagePolicy === "FallbackToLogsOnError") {
    message = log.tailForTerminationMessage();
  }
  slot.state = {
    terminated: {
      exitCode,
      reason: reason ?? (exitCode === 0 ? "Completed" : "Error"),
      ...(message ? { message } : {}),
      startedAt,
      finishedAt: rfc3339(clock.now()),
      containerID,
    },
  };
  if (concurrent && view.main.some((c) => !("terminated" in c.state))) ctx.writeStatus(view);
  return exitCode;
}
