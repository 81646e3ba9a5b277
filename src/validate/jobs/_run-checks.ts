import type { Logger } from "../../core/log.ts";
import { DEFAULT_IMAGE } from "../../core/version.ts";
import type { KubeClient } from "../../kube/client.ts";
import type { Json, V1Node } from "../../kube/types.ts";
import type { OwnerRef } from "../../rbac/objects.ts";
import { createAllBindingsLast, settleAll } from "../../run/create-owned.ts";
import { ensureNamespace } from "../../run/namespace.ts";
import { type OpenRun, withRun } from "../../run/pipeline.ts";
import type { RunScope } from "../../run/scope.ts";
import { NVIDIA_SMI_CHECK } from "../_catalog.ts";
import type { CheckResult } from "../_report.ts";
import type { Inputs, ValidateOptions } from "../options.ts";
import { PHASES } from "../recipe.ts";
import { checkValidatorPermissions } from "./_gate.ts";
import {
  buildSupportObjects,
  buildValidatorClusterRole,
  type Ctx,
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
        await checkValidatorPermissions(io.client, o.namespace, { signal: run.signal, listNodes: perNode });
        // check-nvidia-smi's nodes are read before anything is created (a refusal leaves nothing behind).
        return perNode ? (await io.client.list<Json<V1Node>>("v1", "Node")).items : [];
      },
      scope: (run, ctx) => ({
        removeCommand: () =>
          `aicr runs delete ${run.identity.runId} -n ${o.namespace} (or: kubectl delete clusterrole ${ctx.names.rbac})`,
      }),
      execute: (run, ctx, nodes) => runPhases(run, ctx, nodes, inputs, o, { image, now: io.now }),
    },
  );
  return run.value;
}

async function runPhases(
  run: OpenRun & { scope: RunScope },
  ctx: Ctx,
  nodes: readonly Json<V1Node>[],
  inputs: Inputs,
  o: ValidateOptions,
  io: { image: string; now: () => number },
): Promise<CheckResult[]> {
  const { client, log, signal, scope } = run;
  const results: CheckResult[] = [];
  await ensureNamespace(client, { namespace: o.namespace, log, signal });
  const anchor = await scope.create(buildValidatorClusterRole(ctx), signal);
  const owner: OwnerRef = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    name: ctx.names.rbac,
    uid: anchor.metadata?.uid ?? "",
  };
  await settleAll(
    createAllBindingsLast(
      buildSupportObjects(ctx, owner, { snapshot: inputs.snapshotText, recipe: inputs.recipeText }),
      (x) => scope.create(x, signal),
      false,
    ),
  );
  const one: RunOneIo = {
    client,
    create: scope.createOptions(signal),
    ctx,
    owner,
    runId: run.identity.runId,
    image: io.image,
    timeoutMs: o.timeoutMs,
    signal,
    now: io.now,
  };
  let stopped: string | undefined;
  for (const phase of PHASES) {
    const checks = inputs.checks.filter((c) => c.phase === phase);
    if (checks.length === 0) continue;
    if (stopped) {
      results.push(
        ...checks.map((c) => ({
          suite: phase,
          name: c.name,
          status: "skipped" as const,
          durationMs: 0,
          message: `not run: --fail-fast after a failure in phase ${stopped}`,
          stdout: [],
        })),
      );
      continue;
    }
    log.info(`phase ${phase}: running ${checks.length} check(s)`);
    run.progress.wait(`phase ${phase}: waiting for ${checks.length} check(s)`);
    // Every check settles before a failure propagates: a Job create still in flight when cleanup
    // looks would be left to the garbage collector.
    const settled = await Promise.allSettled(
      checks.map((c) =>
        c.name === NVIDIA_SMI_CHECK
          ? runNvidiaSmi(c, nodes, o.placement.nodeSelector, one)
          : runOneCheck(c, one),
      ),
    );
    run.progress.idle();
    const rejected = settled.find((x): x is PromiseRejectedResult => x.status === "rejected");
    if (rejected) throw rejected.reason;
    const rows = settled.map((x) => (x as PromiseFulfilledResult<CheckResult>).value);
    for (const r of rows) log.info(`${r.suite}/${r.name}: ${r.status}`, { message: r.message });
    results.push(...rows);
    if (o.failFast && rows.some((r) => r.status === "failed" || r.status === "other")) stopped = phase;
  }
  return results;
}
