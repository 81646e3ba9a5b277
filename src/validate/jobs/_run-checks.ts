import { delay } from "../../core/async.ts";
import type { Logger } from "../../core/log.ts";
import { DEFAULT_IMAGE } from "../../core/version.ts";
import type { KubeClient } from "../../kube/client.ts";
import { isNotFound } from "../../kube/errors.ts";
import type { Json, V1Node } from "../../kube/types.ts";
import type { OwnerRef } from "../../rbac/objects.ts";
import { createAllBindingsLast, settleAll } from "../../run/create-owned.ts";
import { ensureNamespace } from "../../run/namespace.ts";
import { type OpenRun, withRun } from "../../run/pipeline.ts";
import type { RunScope } from "../../run/scope.ts";
import {
  findValidator,
  isolatedEntries,
  NVIDIA_SMI_CHECK,
  type PlannedCheck,
  type ValidatorEntry,
} from "../_catalog.ts";
import { buildCtrf, type CheckResult } from "../_report.ts";
import type { Inputs, ValidateOptions } from "../options.ts";
import { PHASES, type Phase, type Recipe } from "../recipe.ts";
import { checkValidatorPermissions, planIsolated } from "./_gate.ts";
import {
  buildCheckIdentity,
  buildPhaseReport,
  buildSupportObjects,
  buildValidatorClusterRole,
  type Ctx,
  checkJobName,
  VALIDATION_COMPONENT,
  validationNames,
} from "./_objects.ts";
import { runNvidiaSmi } from "./_run-nvidia-smi.ts";
import { type RunOneIo, runOneCheck } from "./_run-one.ts";

export interface JobsIo {
  client: KubeClient;
  log: Logger;
  signal: AbortSignal;
  runId: string;
  /** The invocation's ID (the run context's): it goes on every object. */
  invocationId: string;
  now: () => number;
  /** When the validation's --timeout began (Date.now()): the capture and the checks share it. */
  startedAt?: number | undefined;
  /** This build's version: the phase reports' tool version. */
  version?: string | undefined;
  /** The invocation's environment (AICR_CHECK_WAIT_SCALE is passed to the isolated checks). */
  env?: Readonly<Record<string, string | undefined>> | undefined;
}

/**
 * One run (run/pipeline.ts): the gate, then the run's validator RBAC and data ConfigMaps (anchored on
 * the ClusterRole), each phase's checks as Jobs, and the deletes of exactly what it created, pinned by
 * UID. A check still running when the run's --timeout passes is reported as timed out, as is every check
 * after it.
 */
export async function runValidationJobs(
  inputs: Inputs,
  o: ValidateOptions,
  io: JobsIo,
): Promise<CheckResult[]> {
  const image = o.image ?? DEFAULT_IMAGE;
  const perNode = inputs.checks.some((c) => c.name === NVIDIA_SMI_CHECK && !c.skipped);
  const run = await withRun(
    {
      client: io.client,
      log: io.log,
      signal: io.signal,
      runId: io.runId,
      invocationId: io.invocationId,
      timeoutMs: o.timeoutMs,
      startedAt: io.startedAt,
      cleanup: o.cleanup,
      noun: "validation",
      component: VALIDATION_COMPONENT,
      timeout: {
        what: "the validation did not finish",
        remedy: "raise --timeout if the checks are just slow; each check's pod status says where it stood",
      },
    },
    {
      plan: (identity, labels): Ctx => ({
        names: validationNames(identity.runId),
        namespace: o.namespace,
        labels: { ...labels },
        placement: o.placement,
      }),
      gate: async (run) => {
        await checkValidatorPermissions(io.client, o.namespace, {
          signal: run.signal,
          listNodes: perNode,
          isolated: planIsolated(inputs.checks, inputs.recipe, run.identity.runId),
        });
        // check-nvidia-smi's nodes are read before anything is created (a refusal leaves nothing behind).
        return perNode ? (await io.client.list<Json<V1Node>>("v1", "Node")).items : [];
      },
      scope: (run, ctx) => ({
        removeCommand: () =>
          `aicr runs delete ${run.identity.runId} -n ${o.namespace} (or: kubectl delete clusterrole ${ctx.names.rbac})`,
      }),
      execute: (run, ctx, nodes) =>
        runPhases(run, ctx, nodes, inputs, o, {
          image,
          now: io.now,
          env: io.env ?? {},
          version: io.version ?? "",
        }),
    },
  );
  return run.value;
}

/** What a later phase's checks say after a phase with a failed check (the original's words). */
export const AFTER_FAILED_PHASE = "skipped due to previous phase failure";

const skippedRow = (c: PlannedCheck, message: string): CheckResult => ({
  suite: c.phase,
  name: c.name,
  status: "skipped",
  durationMs: 0,
  message,
  stdout: [],
});

async function runPhases(
  run: OpenRun & { scope: RunScope },
  ctx: Ctx,
  nodes: readonly Json<V1Node>[],
  inputs: Inputs,
  o: ValidateOptions,
  io: {
    image: string;
    now: () => number;
    env: Readonly<Record<string, string | undefined>>;
    version: string;
  },
): Promise<CheckResult[]> {
  const { client, log, signal, scope } = run;
  const runId = run.identity.runId;
  const results: CheckResult[] = [];
  await ensureNamespace(client, { namespace: o.namespace, log, signal });
  const anchor = await scope.create(buildValidatorClusterRole(ctx), signal);
  const owner: OwnerRef = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    name: ctx.names.rbac,
    uid: anchor.metadata?.uid ?? "",
  };
  const isolated = isolatedEntries(inputs.checks);
  await settleAll(
    createAllBindingsLast(
      buildSupportObjects(
        ctx,
        owner,
        { snapshot: inputs.snapshotText, recipe: inputs.recipeText },
        isolated.map((c) => checkJobName(c.name, runId)),
      ),
      (x) => scope.create(x, signal),
      false,
    ),
  );
  const one: RunOneIo = {
    client,
    create: scope.createOptions(signal),
    ctx,
    owner,
    runId,
    image: io.image,
    timeoutMs: o.timeoutMs,
    signal,
    now: io.now,
  };
  const runCheck = async (c: PlannedCheck): Promise<CheckResult> => {
    if (c.skipped) return runOneCheck(c, one);
    if (c.name === NVIDIA_SMI_CHECK) return runNvidiaSmi(c, nodes, o.placement.nodeSelector, one);
    const entry = findValidator(c.name);
    if (!entry?.isolated) return runOneCheck(c, one);
    await prepareIsolatedCheck(run, ctx, { entry, runId, recipe: inputs.recipe }, owner);
    return runOneCheck(c, one, undefined, {
      timeoutMs: entry.timeoutMs,
      ncclImage: o.ncclImage,
      waitScale: io.env.AICR_CHECK_WAIT_SCALE,
    });
  };
  let stopped: { phase: string; message: string } | undefined;
  for (const phase of PHASES) {
    const checks = inputs.checks.filter((c) => c.phase === phase);
    if (checks.length === 0) continue;
    if (stopped) {
      results.push(...checks.map((c) => skippedRow(c, stopped?.message ?? AFTER_FAILED_PHASE)));
      continue;
    }
    log.info(`phase ${phase}: running ${checks.length} check(s)`);
    run.progress.wait(`phase ${phase}: waiting for ${checks.length} check(s)`);
    const rows = await runPhaseChecks(checks, runCheck);
    run.progress.idle();
    for (const r of rows) log.info(`${r.suite}/${r.name}: ${r.status}`, { message: r.message });
    results.push(...rows);
    await writePhaseReport(run, ctx, owner, { phase, rows, runId, version: io.version });
    if (rows.some((r) => r.status === "failed")) stopped = { phase, message: AFTER_FAILED_PHASE };
    else if (o.failFast && rows.some((r) => r.status === "other"))
      stopped = { phase, message: `not run: --fail-fast after a failure in phase ${phase}` };
  }
  return results;
}

/**
 * One phase's checks, in recipe order in the report: those that hold GPUs one after another (they
 * would take each other's devices), beside them every other check at once. Every check settles before
 * a failure propagates: a Job create still in flight when cleanup looks would be left to the garbage
 * collector.
 */
async function runPhaseChecks(
  checks: readonly PlannedCheck[],
  runCheck: (c: PlannedCheck) => Promise<CheckResult>,
): Promise<CheckResult[]> {
  const exclusive = checks.filter((c) => !c.skipped && findValidator(c.name)?.exclusive);
  const outcomes = new Map<PlannedCheck, PromiseSettledResult<CheckResult>>();
  const chain = (async () => {
    for (const c of exclusive) {
      const [settled] = await Promise.allSettled([runCheck(c)]);
      outcomes.set(c, settled as PromiseSettledResult<CheckResult>);
      if (settled?.status === "rejected") break;
    }
  })();
  const others = checks.filter((c) => !exclusive.includes(c));
  const settled = await Promise.allSettled(others.map(runCheck));
  for (const [i, c] of others.entries()) outcomes.set(c, settled[i] as PromiseSettledResult<CheckResult>);
  await chain;
  const rejected = [...outcomes.values()].find((x): x is PromiseRejectedResult => x.status === "rejected");
  if (rejected) throw rejected.reason;
  return checks.map((c) => {
    const x = outcomes.get(c);
    // A check the chain never reached because an earlier one threw: the throw above already left.
    return x?.status === "fulfilled" ? x.value : skippedRow(c, "not run");
  });
}

/**
 * An isolated check's namespace and identity, journalled in the run scope (so cleanup deletes them,
 * UID-pinned): the namespace first, then its ServiceAccount and roles, then the bindings once their
 * roles exist; then the namespace's `default` ServiceAccount, without which no pod of the check's
 * could be admitted there.
 */
async function prepareIsolatedCheck(
  run: OpenRun & { scope: RunScope },
  ctx: Ctx,
  check: { entry: ValidatorEntry; runId: string; recipe: Recipe },
  owner: OwnerRef,
): Promise<void> {
  const { scope, signal, client } = run;
  const { namespace, rest } = buildCheckIdentity(ctx, check, owner);
  await scope.create(namespace, signal);
  const isBinding = (x: { kind: string }) => x.kind.endsWith("Binding");
  await settleAll(rest.filter((x) => !isBinding(x)).map((x) => scope.create(x, signal)));
  await settleAll(rest.filter(isBinding).map((x) => scope.create(x, signal)));
  await waitForDefaultServiceAccount(client, namespace.metadata.name, signal);
}

/** The serviceaccount controller makes `default` in a new namespace within moments; polled, bounded by the run. */
async function waitForDefaultServiceAccount(
  client: KubeClient,
  namespace: string,
  signal: AbortSignal,
): Promise<void> {
  for (;;) {
    try {
      await client.get({ apiVersion: "v1", kind: "ServiceAccount", namespace, name: "default" });
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    await delay(200, signal);
  }
}

/**
 * The phase's CTRF report as the ConfigMap `aicr-ctrf-<runID>-<phase>` (labels: the run's, the phase,
 * report-type ctrf), journalled: it lives while the run does and goes with its cleanup.
 */
async function writePhaseReport(
  run: OpenRun & { scope: RunScope },
  ctx: Ctx,
  owner: OwnerRef,
  p: { phase: Phase; rows: readonly CheckResult[]; runId: string; version: string },
): Promise<void> {
  // Past the run's deadline there is no time to write it: the report on stdout still has every row.
  if (run.signal.aborted) return;
  const stop = Date.now();
  const start = stop - p.rows.reduce((t, r) => Math.max(t, r.durationMs), 0);
  const ctrf = buildCtrf({ version: p.version, start, stop, results: p.rows });
  const report = buildPhaseReport(ctx, owner, { phase: p.phase, runId: p.runId, ctrf });
  try {
    await run.scope.create(report, run.signal);
  } catch (err) {
    // The results are the run's; this copy of them is not worth failing it.
    run.log.warn(`the ${p.phase} phase's report ConfigMap was not written: ${(err as Error).message}`, {
      configMap: report.metadata.name,
    });
  }
}
