import { AicrError } from "../core/errors.ts";
import type { Snapshot } from "../snapshot/schema.ts";
import type { ResultConfigMap } from "./result.ts";
import type { AgentExit, JobOutcome, PodState } from "./wait.ts";

/**
 * When is a run over? Not when the Job controller says so (it batches pod updates for about a second
 * before it marks the Job Complete), but when these facts hold together:
 *
 *  1. a pod whose controller ownerReference is the Job's UID (the UID this invocation's create
 *     returned; pod-select.ts) has its agent container terminated with exit code 0 — the agent exits 0
 *     only after the apiserver acknowledged its ConfigMap apply, and writes nothing after it;
 *  2. the output ConfigMap, seen in a watch event newer than the Job's create or in a read sent after
 *     fact 1 was seen (a read without resourceVersion is a quorum read: it shows that write or a later
 *     one), holds a document whose metadata names that pod (`pod-uid`), this Job (`job-uid`, when
 *     present) and this run (`run-id`, when present).
 *
 * Then the document is that pod's write, and its last: the run ends there. A document that names no
 * pod (an agent image that does not stamp its provenance, such as the Go original's) cannot prove
 * anything, and the run falls back to the Job's condition; one naming another run or Job is never
 * returned as this run's. A container that exits non-zero ends the run at once (backoffLimit 0: the
 * Job will fail); a Job condition seen first (Failed, or Complete with the pod's event still on its
 * way) is taken as it is.
 */

/** How a document's provenance relates to a finished pod. */
export type Provenance =
  /** It names this run, this Job and this pod: the pod's own, final write. */
  | "proven"
  /** It names another pod of this Job (a replaced pod's write): this run's, not this pod's. */
  | "other-pod"
  /** It names no pod: its writer does not stamp provenance (kept for the Go original's agent). */
  | "unnamed"
  /** It names another run or Job: never this run's result. */
  | "foreign";

export interface RunIdentityFacts {
  runId: string;
  jobUid: string;
}

/** What a document's metadata says of who wrote it. */
export function provenanceOf(doc: Snapshot, run: RunIdentityFacts, podUid: string | undefined): Provenance {
  const m = doc.metadata;
  const runId = m["run-id"];
  const jobUid = m["job-uid"];
  const pod = m["pod-uid"];
  if ((runId && runId !== run.runId) || (jobUid && jobUid !== run.jobUid)) return "foreign";
  if (!pod) return "unnamed";
  return pod === podUid ? "proven" : "other-pod";
}

/** The run's end: its result (and which fact ended it), or the agent's failure. */
export type RunEnd =
  | { ok: true; cm: ResultConfigMap; document: Snapshot; content: string; by: "pod" | "job" }
  | { ok: false; condition: { reason?: string | undefined; message?: string | undefined }; pod?: PodState };

export interface RunEndInputs {
  run: () => RunIdentityFacts;
  /** The first pod of the Job whose agent container terminated (agentExitOf). */
  exit: Promise<AgentExit>;
  /** The Job's condition (wait.ts waitForJob): the fallback, and failures the pod never shows. */
  completion: Promise<JobOutcome>;
  /** Writes of the output ConfigMap seen on a watch since the Job's create, oldest first (may be none). */
  writes: () => readonly ResultConfigMap[];
  /** A quorum read of the output ConfigMap (NOT_FOUND when it does not exist). */
  read: () => Promise<ResultConfigMap>;
  /** The document in a ConfigMap (a bad or missing document throws). */
  parse: (cm: ResultConfigMap) => { document: Snapshot; content: string };
  /** The output, for messages: namespace/name. */
  output: string;
}

/** Decides the run's end from the facts above; the caller bounds it with its deadline. */
export async function awaitRunEnd(inputs: RunEndInputs): Promise<RunEnd> {
  // Each write is parsed once, however many facts look at it.
  const parsed = new Map<ResultConfigMap, ReturnType<RunEndInputs["parse"]>>();
  const o: RunEndInputs = {
    ...inputs,
    parse: (cm) => {
      const known = parsed.get(cm);
      if (known) return known;
      const p = inputs.parse(cm);
      parsed.set(cm, p);
      return p;
    },
  };
  const first = await Promise.race([
    o.exit.then((exit) => ({ exit }) as const),
    o.completion.then((job) => ({ job }) as const),
  ]);
  if ("job" in first) return byJob(o, first.job, undefined);
  const { exit } = first;
  if (exit.exitCode !== 0)
    return {
      ok: false,
      condition: { reason: undefined, message: exit.message ?? exit.reason },
      pod: exit.pod,
    };
  const podUid = exit.pod.metadata.uid;
  // Newest first: a pod's own write is normally the latest event, already here.
  const seen = [...o.writes()].reverse();
  for (const cm of seen) {
    const found = proven(o, cm, podUid);
    if (found) return found;
  }
  const found = proven(o, await o.read(), podUid);
  if (found) return found;
  return byJob(o, await o.completion, exit.pod);
}

function proven(o: RunEndInputs, cm: ResultConfigMap, podUid: string | undefined): RunEnd | undefined {
  const parsed = o.parse(cm);
  if (provenanceOf(parsed.document, o.run(), podUid) !== "proven") return undefined;
  return { ok: true, cm, ...parsed, by: "pod" };
}

const foreign = (o: RunEndInputs, cm: ResultConfigMap) =>
  provenanceOf(o.parse(cm).document, o.run(), undefined) === "foreign";

/** The Job's condition decides: Complete → the latest write of this run seen, else a read, unless that is another run's. */
async function byJob(o: RunEndInputs, job: JobOutcome, pod: PodState | undefined): Promise<RunEnd> {
  if (!job.succeeded) return { ok: false, condition: job, ...(pod ? { pod } : {}) };
  const cm = [...o.writes()].reverse().find((w) => !foreign(o, w)) ?? (await o.read());
  const parsed = o.parse(cm);
  if (foreign(o, cm)) {
    const by = parsed.document.metadata["run-id"] ?? "another run";
    throw new AicrError(
      "CONFLICT",
      `ConfigMap ${o.output} holds a snapshot written by ${by}, not by this run (${o.run().runId}): another writer replaced it before this run read it`,
      { remedy: "deliver each run to its own ConfigMap (--output cm://<namespace>/<name>), or run again" },
    );
  }
  return { ok: true, cm, ...parsed, by: "job" };
}
