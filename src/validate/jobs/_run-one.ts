import { Writable } from "node:stream";
import { DeadlineExceeded } from "../../core/deadline.ts";
import { describePodState, type PodState } from "../../deployer/wait.ts";
import type { KubeClient } from "../../kube/client.ts";
import type { OwnerRef } from "../../rbac/objects.ts";
import { type CreateOwnedOptions, createOwned } from "../../run/create-owned.ts";
import type { PlannedCheck } from "../_catalog.ts";
import { type CheckResult, statusOfExitCode } from "../_report.ts";
import { buildCheckJob, type CheckJobInput, type Ctx, VALIDATOR_CONTAINER } from "./_objects.ts";
import { waitForCheckPod } from "./_wait-check.ts";

/** The original's bounds on a check's output in the report: its last 1000 lines, each cut at 512 characters. */
const MAX_LINES = 1000;
const MAX_LINE = 512;
/** And ours on the whole: a phase's report must fit the ConfigMap it is also written to. */
const MAX_BYTES = 64 * 1024;
/** A row's message is the check's whole verdict, as the original's termination message (its first 4096 bytes). */
const MAX_MESSAGE = 4096;
const VERDICT_LINE = /^(passed|failed|skipped): (.*)$/;

/** The last lines of a log, bounded in count, length and size, for the report. */
export function truncateOutput(text: string): string[] {
  const tail = text.length > MAX_BYTES ? text.slice(-MAX_BYTES) : text;
  const lines = tail.split("\n").filter((l) => l !== "");
  return lines
    .slice(-MAX_LINES)
    .map((l) =>
      l.length > MAX_LINE ? `${l.slice(0, MAX_LINE)}... [truncated ${l.length - MAX_LINE} chars]` : l,
    );
}

/** The validator's own verdict line, which stands in for a termination message the runtime did not keep. */
export function verdictMessage(lines: readonly string[]): string | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = VERDICT_LINE.exec(lines[i] ?? "");
    if (m) return m[2];
  }
  return undefined;
}

async function readLog(
  client: KubeClient,
  namespace: string,
  pod: string,
  signal: AbortSignal,
): Promise<string> {
  const chunks: Buffer[] = [];
  const out = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(Buffer.from(chunk));
      cb();
    },
  });
  await client.followLog({ namespace, pod, container: VALIDATOR_CONTAINER }, { out, signal, follow: false });
  return Buffer.concat(chunks).toString("utf8");
}

export interface RunOneIo {
  client: KubeClient;
  create: CreateOwnedOptions;
  ctx: Ctx;
  owner: OwnerRef;
  runId: string;
  image: string;
  /** --timeout: the check Job's activeDeadlineSeconds backstop. */
  timeoutMs: number;
  /** The run's deadline. */
  signal: AbortSignal;
  now: () => number;
}

/**
 * Creates one check's Job, waits for its own pod, and reads the result from the exit code and output.
 * With `node`, the Job is that node's pod of a per-node check (check-nvidia-smi).
 */
export async function runOneCheck(
  check: PlannedCheck,
  io: RunOneIo,
  node?: { name: string; index: number },
  isolated?: CheckJobInput["isolated"],
): Promise<CheckResult> {
  const start = io.now();
  const row = (r: Omit<CheckResult, "suite" | "name" | "durationMs">): CheckResult => ({
    suite: check.phase,
    name: check.name,
    durationMs: io.now() - start,
    ...r,
  });
  if (check.skipped) return row({ status: "skipped", message: "withheld by --skip-check", stdout: [] });
  const job = buildCheckJob(io.ctx, {
    check: check.name,
    phase: check.phase,
    runId: io.runId,
    image: io.image,
    timeoutMs: io.timeoutMs,
    owner: io.owner,
    node,
    isolated,
  });
  // The run's deadline (its --timeout) bounds the check: past it, the check is reported as timed out.
  let last: PodState | undefined;
  let outcome: Awaited<ReturnType<typeof waitForCheckPod>>;
  try {
    const made = await createOwned(job, { ...io.create, signal: io.signal });
    outcome = await waitForCheckPod(io.client, {
      namespace: io.ctx.namespace,
      runId: io.runId,
      check: check.name,
      jobUid: made.metadata?.uid ?? "",
      image: io.image,
      signal: io.signal,
      seen: (pod) => (last = pod),
    });
  } catch (err) {
    if (err instanceof DeadlineExceeded) {
      // The run's time ran out with this check unfinished: the row says which check and where it stood.
      const where = new DeadlineExceeded(
        { what: `check ${check.name} did not finish`, timeoutMs: err.o.timeoutMs, remedy: err.o.remedy },
        last ? describePodState(last) : "its pod was not seen",
      );
      return row({ status: "other", message: `timed out: ${where.message}`, stdout: [], timedOut: true });
    }
    throw err;
  }
  if (outcome.kind === "stuck")
    return row({
      status: "other",
      message: `the check's pod cannot run: ${outcome.error.message}`,
      stdout: [],
    });
  const log = await readLog(io.client, io.ctx.namespace, outcome.pod.metadata.name, io.signal).catch(
    () => "",
  );
  const stdout = truncateOutput(log);
  const t = outcome.terminated;
  const fromFile =
    t.message && !VERDICT_LINE.test(t.message.trim().split("\n").pop() ?? "") ? t.message.trim() : undefined;
  // The verdict line from the whole log: the report's stdout cuts lines at 512 characters.
  const verdict = verdictMessage(log.split("\n"))?.slice(0, MAX_MESSAGE);
  const message =
    t.reason === "OOMKilled" ? "Container OOMKilled" : (verdict ?? fromFile ?? `exit code ${t.exitCode}`);
  return row({ status: statusOfExitCode(t.exitCode), message, stdout });
}
