/**
 * What a conformance or performance check is handed in its pod (validator/run.ts builds it), and the
 * verdict it returns. A check reads and writes the cluster only through `client` (its own
 * ServiceAccount), creates objects only in `testNamespace` (made by the run, deleted by it, UID-pinned),
 * names them with `name()` and labels them with `labels`.
 */
import type { Logger } from "../../core/log.ts";
import type { Toleration } from "../../deployer/job-spec.ts";
import type { KubeClient } from "../../kube/client.ts";
import type { Snapshot } from "../../snapshot/schema.ts";
import type { Recipe } from "../recipe.ts";
import type { Verdict } from "../validator/_checks.ts";

export type { Verdict };

export interface ProbePlacement {
  nodeSelector?: Record<string, string> | undefined;
  tolerations?: Toleration[] | undefined;
}

export interface CheckContext {
  client: KubeClient;
  /** The run's recipe; undefined only where a check's own tests want the original's null-recipe rule. */
  recipe: Recipe | undefined;
  snapshot: Snapshot | undefined;
  /** The validation namespace (the check's Job runs there). */
  namespace: string;
  /**
   * The check's own namespace, created by the run before its Job (`aicr-<check>-<runID>`): every object
   * the check creates goes here, so the run's UID-pinned delete of it removes what the check left.
   */
  testNamespace: string;
  runId: string;
  /** `<base>-<runID>` cut to 63 characters: the name of an object the check creates. */
  name: (base: string) => string;
  /** The run's labels plus the check's: on every object the check creates. */
  labels: Readonly<Record<string, string>>;
  /** This project's image (the binary's own): every pod a check runs uses it (`aicr probe …`). */
  image: string;
  /** The operator's NCCL test image (--nccl-image); never a default. */
  ncclImage?: string | undefined;
  /** --node-selector and --toleration of the run, for the pods a check creates. */
  placement: ProbePlacement;
  /** The check's deadline (its catalog timeout within the run's --timeout) and the pod's stop signal. */
  signal: AbortSignal;
  /** Writes one evidence block to stdout at once: `--- <label> ---`, the kubectl equivalent, the data. */
  evidence: (label: string, data: string, equivalent?: string) => void;
  log: Logger;
  now: () => number;
  /**
   * A wait's bound as the check uses it: the original's constant, scaled by the run's
   * AICR_CHECK_WAIT_SCALE (default 1; tests shorten the waits of their failing cases with it).
   */
  waitMs: (ms: number) => number;
  /** Waits `ms`, or rejects when `signal` ends first. */
  sleep: (ms: number) => Promise<void>;
  /** A plain GET, 30 s in all, at most 1 MiB of body read; rejects on a transport error. */
  httpGet: (url: string) => Promise<{ status: number; body: string; truncated: boolean }>;
}

/** One check built into the binary: its verdict from the cluster, through the context. */
export type CheckRun = (ctx: CheckContext) => Promise<Verdict>;

/** One evidence block as the original prints it (pure). */
export function evidenceBlock(label: string, data: string, equivalent?: string): string {
  const head = `--- ${label} ---\n`;
  const eq = equivalent ? `Equivalent: ${equivalent}\n\n` : "";
  return `${head}${eq}${data}${data.endsWith("\n") ? "" : "\n"}`;
}

export const passed = (message: string, details: string[] = []): Verdict => ({
  status: "passed",
  message,
  details,
});
export const failed = (message: string, details: string[] = []): Verdict => ({
  status: "failed",
  message,
  details,
});
export const skipped = (message: string, details: string[] = []): Verdict => ({
  status: "skipped",
  message,
  details,
});
