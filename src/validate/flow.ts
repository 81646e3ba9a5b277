import { timedOut } from "../core/deadline.ts";
import { AicrError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { KubeClient } from "../kube/client.ts";
import { parseSnapshot } from "../snapshot/schema.ts";
import { captureSnapshot } from "./_capture.ts";
import { defaultTimeoutMs, planChecks } from "./_catalog.ts";
import { type LoadedText, loadSource, parseSnapshotWarning } from "./_inputs.ts";
import { type ConstraintResult, evaluateReadiness, readinessError } from "./_readiness.ts";
import type { CheckResult } from "./_report.ts";
import { versionSkew } from "./_skew.ts";
import { writeReports } from "./_write-reports.ts";
import type { Source, ValidateOptions } from "./options.ts";
import { parseRecipe } from "./recipe.ts";

export interface FlowIo {
  log: Logger;
  signal: AbortSignal;
  /** This invocation's one run ID: the capture and every validator object carry it. */
  runId: string;
  /** This invocation's ID (the run context's): on every object, the capture's included. */
  invocationId: string;
  version: string;
  env: Readonly<Record<string, string | undefined>>;
  connect: () => Promise<KubeClient>;
  writeStdout: (text: string) => void;
  now: () => number;
}

/** The readiness results as report rows (suite `readiness`). */
function readinessRows(results: readonly ConstraintResult[], allowMissing: boolean): CheckResult[] {
  return results.map((r) => ({
    suite: "readiness",
    name: r.name,
    status: r.status === "passed" ? "passed" : r.status === "missing" && allowMissing ? "skipped" : "failed",
    durationMs: 0,
    message:
      r.status === "missing"
        ? `no such reading in the snapshot (expected ${r.expected})`
        : `expected ${r.expected}, actual ${r.actual}`,
    expected: r.expected,
    actual: r.actual,
    stdout: [],
  }));
}

/**
 * aicr validate: recipe → declared checks → snapshot (file, cm://, https:// or live capture) → readiness →
 * validation Jobs (unless --no-cluster or readiness failed) → reports → exit status by the results
 * (a readiness failure: INVALID_REQUEST, exit 2, after its report).
 */
export async function runValidate(options: ValidateOptions, io: FlowIo): Promise<void> {
  let o = options;
  const start = io.now();
  // One --timeout for the whole validation: the live capture and the checks share it.
  const startedAt = Date.now();
  const load = (source: Source, what: "recipe" | "snapshot") =>
    loadSource(source, what, io.connect, { ca: o.ca, signal: io.signal });
  // An https:// input is in hand before the first cluster request: a failed fetch sends nothing (a
  // cm:// recipe is read after an https:// snapshot, a file or https:// recipe before it).
  let fetched: LoadedText | undefined;
  if (o.snapshot?.kind === "url" && o.recipe.kind === "configmap")
    fetched = await load(o.snapshot, "snapshot");
  const recipeSrc = await load(o.recipe, "recipe");
  const recipe = parseRecipe(recipeSrc.text, recipeSrc.name);
  const checks = planChecks(recipe, { phases: o.phases, skip: o.skipChecks });
  // Without --timeout, conformance and performance checks get the time their own limits allow.
  if (!o.timeoutGiven) o = { ...o, timeoutMs: defaultTimeoutMs(checks, o.timeoutMs) };
  if (o.snapshot?.kind === "url" && !fetched) fetched = await load(o.snapshot, "snapshot");
  // -o cm:// is checked before the capture deploys anything: results are never made only to be lost.
  if (o.outputConfigMap) {
    const { checkReportTarget } = await import("./_report-cm.ts");
    await checkReportTarget(await io.connect(), o.outputConfigMap, io.signal);
  }
  let snapshotText: string;
  let snapshotName: string;
  if (o.snapshot) {
    const src = fetched ?? (await load(o.snapshot, "snapshot"));
    snapshotText = src.text;
    snapshotName = src.name;
  } else {
    const client = await io.connect();
    snapshotText = await captureSnapshot(o, { ...io, client, startedAt });
    snapshotName = "the live capture";
  }
  // A file's missing envelope is warned about here; the live capture's reader has already said so.
  const snapshot = o.snapshot
    ? parseSnapshotWarning(snapshotText, snapshotName, io.log)
    : parseSnapshot(snapshotText, snapshotName);
  const skew = versionSkew(recipe, snapshot, io.version);
  if (skew) io.log.warn(skew.message, skew.fields);
  const readiness = evaluateReadiness(recipe.spec.constraints, snapshot);
  // A readiness failure deploys nothing, but is still reported (CI reads the report): its failed
  // constraints as failed tests, every check as not run. The exit status stays 2 (thrown below).
  const blocked = readinessError(readiness, o.allowMissing);
  if (!blocked) {
    io.log.info(`readiness: ${readiness.length} constraint(s) evaluated against ${snapshotName}`, {
      missing: readiness.filter((r) => r.status === "missing").length,
    });
  }
  const rows = readinessRows(readiness, o.allowMissing);
  let checkRows: CheckResult[];
  if (blocked || o.noCluster || checks.every((c) => c.skipped)) {
    // Nothing to deploy: every check is reported, none is run.
    const notRun = blocked ? "not run: readiness failed" : "not run: --no-cluster";
    checkRows = checks.map((c) => ({
      suite: c.phase,
      name: c.name,
      status: "skipped",
      durationMs: 0,
      message: c.skipped ? "withheld by --skip-check" : notRun,
      stdout: [],
    }));
  } else {
    const { runValidationJobs } = await import("./jobs/_run-checks.ts");
    checkRows = await runValidationJobs(
      { recipe, recipeText: recipeSrc.text, snapshot, snapshotText, checks },
      o,
      { ...io, client: await io.connect(), startedAt },
    );
  }
  const results = [...rows, ...checkRows];
  await writeReports(results, o, { ...io, start, stop: io.now() });
  if (blocked) throw blocked;
  const failing = checkRows.filter((r) => r.status === "failed" || r.status === "other");
  if (failing.length > 0 && o.failOnError) {
    const message = `${failing.length} check(s) did not pass: ${failing.map((r) => `${r.suite}/${r.name} ${r.status}${r.message ? ` (${r.message.split("\n")[0]})` : ""}`).join("; ")}`;
    const detail = {
      remedy:
        "read each check's message and output in the report (a timeout: raise --timeout); --no-fail-on-error reports without failing",
      context: { failed: failing.map((r) => r.name) },
    };
    throw failing.some((r) => r.timedOut)
      ? timedOut(message, detail)
      : new AicrError("INTERNAL", message, detail);
  }
}
