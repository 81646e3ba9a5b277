/** The kubelet's pluggable container runtime. */
import type { KObject } from "../store.ts";

export interface RunContext {
  pod: KObject;
  /** The container spec (from spec.containers or spec.initContainers). */
  container: KObject["spec"];
  /** Resolved environment: env and envFrom, fieldRefs and configMapKeyRefs filled in, $(VAR) expanded. */
  env: Record<string, string>;
  /** Aborts when the pod is deleted or the kubelet stops. */
  signal: AbortSignal;
  stdout(chunk: string | Uint8Array): void;
  stderr(chunk: string | Uint8Array): void;
  /**
   * A directory holding the pod's ServiceAccount credentials (token, ca.crt, namespace), to be seen by
   * the container at /var/run/secrets/kubernetes.io/serviceaccount, as the kubelet's projected volume is.
   * Set by the process kubelet of the real control plane (test/cluster/real/kubelet.ts); the fake's
   * kubelet leaves it unset.
   */
  serviceAccountDir?: string;
  /**
   * Device nodes the container gets from its pod's allocated ResourceClaims (e.g. /dev/nvidia0,
   * /dev/nvidiactl), as a DRA driver's CDI edits give them: the process runtime makes the container a
   * /dev of its own holding them. Set by the process kubelet of the real control plane
   * (real/kubelet-dra.ts) for a container that names a claim in `resources.claims`; unset otherwise.
   */
  devices?: string[];
}

export interface RunResult {
  exitCode: number;
  /** Termination message, as if the container wrote it to its terminationMessagePath. */
  message?: string;
}

export type RunFunction = (ctx: RunContext) => Promise<RunResult>;

export interface ContainerRuntime {
  run: RunFunction;
  /**
   * Pulls an image before its container starts, as a kubelet does: resolves true once pulled, false
   * for an image this runtime does not pull (it is "already present"), and throws when the pull fails.
   */
  pull?(image: string): Promise<boolean>;
  /** Releases what the runtime holds (its work directory); called once by the kubelet's stop. */
  close?(): Promise<void>;
}

export type PullOutcome = { ok: true; pulled: boolean } | { ok: false; message: string };

/** The kubelets' pull phase for one image: the configured unpullable images, then the runtime's pull. */
export async function pullImage(
  runtime: ContainerRuntime,
  image: string,
  isUnpullable: (image: string) => boolean,
): Promise<PullOutcome> {
  if (isUnpullable(image))
    return {
      ok: false,
      message: `rpc error: code = NotFound desc = failed to pull and unpack image "${image}": failed to resolve reference "${image}": ${image}: not found`,
    };
  if (!runtime.pull) return { ok: true, pulled: false };
  try {
    return { ok: true, pulled: await runtime.pull(image) };
  } catch (e) {
    const detail = (e as Error).message.replace(/\s+/g, " ").trim();
    return {
      ok: false,
      message: `rpc error: code = Unknown desc = failed to pull and unpack image "${image}": ${detail}`,
    };
  }
}

export function asRuntime(r: ContainerRuntime | RunFunction | undefined): ContainerRuntime {
  if (r === undefined) return { run: async () => ({ exitCode: 0 }) };
  return typeof r === "function" ? { run: r } : r;
}

/** Resolves after ms on the clock, or when the signal aborts (then resolves false). */
export function sleep(
  setTimer: (fn: () => void, ms: number) => () => void,
  ms: number,
  signal: AbortSignal,
): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const cancel = setTimer(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      cancel();
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
