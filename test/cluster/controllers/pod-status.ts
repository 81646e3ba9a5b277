/** Renders a pod's status from the kubelet's view of its containers, with the real condition texts. */
import { type Condition, setCondition } from "./k8s.ts";

export type ContainerState =
  | { waiting: { reason: string; message?: string } }
  | { running: { startedAt: string } }
  | {
      terminated: {
        exitCode: number;
        reason: string;
        message?: string;
        startedAt?: string;
        finishedAt: string;
        containerID?: string;
      };
    };

export interface ContainerView {
  name: string;
  image: string;
  state: ContainerState;
  containerID?: string;
}

export interface PodView {
  phase: "Pending" | "Running" | "Succeeded" | "Failed";
  hostIP: string;
  podIP?: string;
  startTime: string;
  init: ContainerView[];
  main: ContainerView[];
}

const isRunning = (c: ContainerView) => "running" in c.state;
const exitedOk = (c: ContainerView) => "terminated" in c.state && c.state.terminated.exitCode === 0;

// Simplification: no probes, so a running container is ready at once; restartCount is always 0.
function containerStatus(c: ContainerView, isInit: boolean) {
  const running = isRunning(c);
  return {
    name: c.name,
    state: c.state,
    lastState: {},
    ready: isInit ? exitedOk(c) : running,
    restartCount: 0,
    image: c.image,
    imageID: c.containerID ? `${c.image}@sha256:${"0".repeat(64)}` : "",
    ...(c.containerID ? { containerID: c.containerID } : {}),
    started: running,
  };
}

function names(cs: ContainerView[]): string {
  return `[${cs.map((c) => c.name).join(" ")}]`;
}

export function renderStatus(view: PodView, live: any, now: string): any {
  let conds: Condition[] = live?.conditions ?? [];
  const done = view.phase === "Succeeded" || view.phase === "Failed";
  const set = (c: Condition) => {
    conds = setCondition(conds, { ...c, lastProbeTime: null }, now);
  };
  set({ type: "PodReadyToStartContainers", status: done ? "False" : "True" });
  const pendingInit = view.init.filter((c) => !exitedOk(c));
  set(
    pendingInit.length === 0
      ? { type: "Initialized", status: "True" }
      : {
          type: "Initialized",
          status: "False",
          reason: "ContainersNotInitialized",
          message: `containers with incomplete status: ${names(pendingInit)}`,
        },
  );
  const unready = view.main.filter((c) => !isRunning(c));
  for (const type of ["Ready", "ContainersReady"]) {
    if (done) set({ type, status: "False", reason: "PodCompleted" });
    else if (unready.length > 0) {
      set({
        type,
        status: "False",
        reason: "ContainersNotReady",
        message: `containers with unready status: ${names(unready)}`,
      });
    } else set({ type, status: "True" });
  }
  const order = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"];
  conds.sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type));
  return {
    ...live,
    phase: view.phase,
    conditions: conds,
    hostIP: view.hostIP,
    hostIPs: [{ ip: view.hostIP }],
    ...(view.podIP ? { podIP: view.podIP, podIPs: [{ ip: view.podIP }] } : {}),
    startTime: view.startTime,
    ...(view.init.length > 0
      ? { initContainerStatuses: view.init.map((c) => containerStatus(c, true)) }
      : {}),
    containerStatuses: view.main.map((c) => containerStatus(c, false)),
  };
}
