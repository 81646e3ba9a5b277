import type { OwnerRef } from "../../agent/rbac-objects.ts";
import type { Logger } from "../../core/log.ts";
import { DEFAULT_IMAGE } from "../../core/version.ts";
import type { KubeClient } from "../../kube/client.ts";
import { cleanupRun, type ReceiptRow } from "../../run/cleanup.ts";
import { createAllBindingsLast, createOwned, settleAll } from "../../run/create-owned.ts";
import { CreatedSet } from "../../run/created-set.ts";
import { ensureNamespace } from "../../run/namespace.ts";
import { generateInvocationId } from "../../run/run-id.ts";
import { onForcedExit } from "../../run/shutdown.ts";
import type { Inputs } from "../flow.ts";
import type { ValidateOptions } from "../options.ts";
import { PHASES } from "../recipe.ts";
import type { CheckResult } from "../report.ts";
import { checkValidatorPermissions } from "./gate.ts";
import {
  buildSupportObjects,
  buildValidatorClusterRole,
  type Ctx,
  validationLabels,
  validationNames,
} from "./objects.ts";
import { runOneCheck } from "./run-one.ts";

export interface JobsIo {
  client: KubeClient;
  log: Logger;
  signal: AbortSignal;
  runId: string;
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
  const identity = { runId: io.runId, invocationId: generateInvocationId() };
  const ctx: Ctx = {
    names: validationNames(io.runId),
    namespace: o.namespace,
    labels: validationLabels(identity),
  };
  const created = new CreatedSet();
  const create = { client: io.client, created, identity, log: io.log, signal: io.signal };
  const image = o.image ?? DEFAULT_IMAGE;
  await checkValidatorPermissions(io.client, o.namespace);
  const unregister = onForcedExit(() => leftovers(created, ctx.names.rbac));
  const results: CheckResult[] = [];
  try {
    await ensureNamespace(io.client, { namespace: o.namespace, log: io.log });
    const anchor = await createOwned(buildValidatorClusterRole(ctx), create);
    const owner: OwnerRef = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      name: ctx.names.rbac,
      uid: anchor.metadata?.uid ?? "",
    };
    await settleAll(
      createAllBindingsLast(
        buildSupportObjects(ctx, owner, { snapshot: inputs.snapshotText, recipe: inputs.recipeText }),
        (x) => createOwned(x, create),
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
      const settled = await Promise.allSettled(
        checks.map((c) =>
          runOneCheck(c, {
            client: io.client,
            create,
            ctx,
            owner,
            runId: io.runId,
            image,
            timeoutMs: o.timeoutMs,
            signal: io.signal,
            now: io.now,
          }),
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
  } finally {
    try {
      if (o.cleanup) report(await cleanupRun({ client: io.client, created, identity, log: io.log }), io.log);
      else
        for (const e of created.list())
          io.log.info(`kept (--no-cleanup): ${e.kind} ${e.namespace ? `${e.namespace}/` : ""}${e.name}`, {
            uid: e.uid,
          });
    } finally {
      unregister();
    }
  }
}

function report(receipt: ReceiptRow[], log: Logger): void {
  const bad = receipt.filter((r) => r.outcome === "failed" || r.outcome === "left-behind");
  if (bad.length > 0)
    log.warn(`cleanup could not remove ${bad.length} validation object(s)`, {
      objects: bad.map((r) => `${r.kind}/${r.name}`).join(","),
    });
  log.info(`validation objects cleaned up`, {
    deleted: receipt.filter((r) => r.outcome === "deleted").length,
  });
}

function leftovers(created: CreatedSet, anchor: string): string | undefined {
  const entries = created.list();
  if (entries.length === 0) return undefined;
  const lines = entries.map(
    (e) => `  ${e.kind} ${e.namespace ? `${e.namespace}/` : ""}${e.name} uid=${e.uid ?? "(unconfirmed)"}`,
  );
  return `exiting without cleanup; this validation run may have left:\n${lines.join("\n")}\nremove them all with (the garbage collector takes the rest): kubectl delete clusterrole ${anchor}`;
}
