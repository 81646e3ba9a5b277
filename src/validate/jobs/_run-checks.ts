import type { Logger } from "../../core/log.ts";
import { DEFAULT_IMAGE } from "../../core/version.ts";
import type { KubeClient } from "../../kube/client.ts";
import type { Json, V1Node } from "../../kube/types.ts";
import type { OwnerRef } from "../../rbac/objects.ts";
import { createAllBindingsLast, settleAll } from "../../run/create-owned.ts";
import { ensureNamespace } from "../../run/namespace.ts";
import { RunScope } from "../../run/scope.ts";
import { NVIDIA_SMI_CHECK } from "../_catalog.ts";
import type { CheckResult } from "../_report.ts";
import type { Inputs, ValidateOptions } from "../options.ts";
import { PHASES } from "../recipe.ts";
import { checkValidatorPermissions } from "./_gate.ts";
import {
  buildSupportObjects,
  buildValidatorClusterRole,
  type Ctx,
  validationLabels,
  validationNames,
} from "./_objects.ts";
import { runNvidiaSmi } from "./_run-nvidia-smi.ts";
import { runOneCheck } from "./_run-one.ts";

export interface JobsIo {
  client: KubeClient;
  log: Logger;
  signal: AbortSignal;
  runId: string;
  /** The invocation's ID (the run context's): it goes on every object. */
  invocationId: string;
  now: () => number;
}

/**
 * Deploys the run's validator RBAC and data ConfigMaps (anchored on the ClusterRole), runs each phase's
 * checks as Jobs, and deletes exactly what it created, pinned by UID.
 */
export async function runValidationJobs(
  inputs: Inputs,
  o: ValidateOptions,
  io: JobsIo,
): Promise<CheckResult[]> {
  const identity = { runId: io.runId, invocationId: io.invocationId };
  const ctx: Ctx = {
    names: validationNames(io.runId),
    namespace: o.namespace,
    labels: validationLabels(identity),
    placement: o.placement,
  };
  const image = o.image ?? DEFAULT_IMAGE;
  const perNode = inputs.checks.some((c) => c.name === NVIDIA_SMI_CHECK && !c.skipped);
  await checkValidatorPermissions(io.client, o.namespace, { signal: io.signal, listNodes: perNode });
  // check-nvidia-smi's nodes are read before anything is created (a refusal leaves nothing behind).
  const nodes = perNode ? (await io.client.list<Json<V1Node>>("v1", "Node")).items : [];
  await using scope = new RunScope({
    client: io.client,
    identity,
    log: io.log,
    cleanup: o.cleanup,
    noun: "validation",
    removeCommand: () =>
      `aicr runs delete ${identity.runId} -n ${o.namespace} (or: kubectl delete clusterrole ${ctx.names.rbac})`,
  });
  const create = scope.createOptions(io.signal);
  const results: CheckResult[] = [];
  await ensureNamespace(io.client, { namespace: o.namespace, log: io.log });
  const anchor = await scope.create(buildValidatorClusterRole(ctx), io.signal);
  const owner: OwnerRef = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    name: ctx.names.rbac,
    uid: anchor.metadata?.uid ?? "",
  };
  await settleAll(
    createAllBindingsLast(
      buildSupportObjects(ctx, owner, { snapshot: inputs.snapshotText, recipe: inputs.recipeText }),
      (x) => scope.create(x, io.signal),
      false,
    ),
  );
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
    io.log.info(`phase ${phase}: running ${checks.length} check(s)`);
    // Every check settles before a failure propagates: a Job create still in flight when cleanup
    // looks would be left to the garbage collector.
    const one = {
      client: io.client,
      create,
      ctx,
      owner,
      runId: io.runId,
      image,
      timeoutMs: o.timeoutMs,
      signal: io.signal,
      now: io.now,
    };
    const settled = await Promise.allSettled(
      checks.map((c) =>
        c.name === NVIDIA_SMI_CHECK
          ? runNvidiaSmi(c, nodes, o.placement.nodeSelector, one)
          : runOneCheck(c, one),
      ),
    );
    const rejected = settled.find((x): x is PromiseRejectedResult => x.status === "rejected");
    if (rejected) throw rejected.reason;
    const rows = settled.map((x) => (x as PromiseFulfilledResult<CheckResult>).value);
    for (const r of rows) io.log.info(`${r.suite}/${r.name}: ${r.status}`, { message: r.message });
    results.push(...rows);
    if (o.failFast && rows.some((r) => r.status === "failed" || r.status === "other")) stopped = phase;
  }
  return results;
}
