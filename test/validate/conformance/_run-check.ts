/**
 * One in-process run of a check as its pod runs it: the check's namespace made as the run makes it, the
 * check's own identity holding exactly the catalog's rules (_standin-cluster.ts checkIdentity), and
 * afterwards what the run would find — the requests that identity made (writes, refusals) and the
 * objects left in the namespace — before the namespace is deleted, as the run deletes it.
 *
 *   const r = await runCheck(cluster(), "platform-health", run, { recipe });     // the whole run
 *   expectReadOnly(r);                                                            // nothing written
 *   const { verdict } = await runAsIdentity(cluster(), check, ctx, run);         // a context of one's own
 */
import { expect } from "bun:test";
import { KubeClient } from "../../../src/kube/client.ts";
import type { CheckContext, CheckRun, Verdict } from "../../../src/validate/checks/context.ts";
import type { Recipe } from "../../../src/validate/recipe.ts";
import type { LoggedRequest } from "../../cluster/request-log.ts";
import type { TestCluster } from "../../cluster/testbed.ts";
import { checkContext, type TestCheckContext } from "./_context.ts";
import { checkIdentity, objectsIn } from "./_standin-cluster.ts";

type Kinds = { apiVersion: string; kind: string }[];

/** Kinds a check could leave behind in its namespace. */
const LEFT_KINDS: Kinds = [
  { apiVersion: "v1", kind: "Pod" },
  { apiVersion: "v1", kind: "ConfigMap" },
  { apiVersion: "v1", kind: "Service" },
  { apiVersion: "v1", kind: "Secret" },
  { apiVersion: "v1", kind: "ServiceAccount" },
  { apiVersion: "apps/v1", kind: "Deployment" },
  { apiVersion: "apps/v1", kind: "DaemonSet" },
  { apiVersion: "batch/v1", kind: "Job" },
];
/** What the cluster itself puts in every namespace. */
const OWN = new Set(["ConfigMap/kube-root-ca.crt", "ServiceAccount/default"]);
const NO_RECIPE = { kind: "RecipeMetadata", spec: { constraints: [] } } as unknown as Recipe;

export interface IdentityRun {
  verdict: Verdict;
  /** Every request of the check's identity. */
  requests: LoggedRequest[];
  /** Requests of the check's identity that were not reads. */
  writes: LoggedRequest[];
  /** Requests of the check's identity the apiserver refused (403): a rule the catalog lacks. */
  refused: LoggedRequest[];
  ms: number;
}

export interface CheckOutcome extends IdentityRun {
  /** The context, its client the admin's again. */
  ctx: TestCheckContext;
  /** Objects in the check's namespace after it ended (its identity's own excluded). */
  left: string[];
}

/**
 * Runs `run` in `ctx` with its client the check's own identity (for ctx.recipe, else none), removed
 * after and the admin's client put back; what that identity asked meanwhile.
 */
export async function runAsIdentity(
  cluster: TestCluster,
  check: string,
  ctx: TestCheckContext,
  run: CheckRun,
  o: { extraClusterRules?: Parameters<typeof checkIdentity>[4] } = {},
): Promise<IdentityRun> {
  const recipe = ctx.recipe ?? NO_RECIPE;
  const identity = await checkIdentity(cluster, check, recipe, ctx.testNamespace, o.extraClusterRules);
  const admin = ctx.client;
  ctx.client = identity.client;
  const user = `system:serviceaccount:${ctx.testNamespace}:${check}-identity`;
  const from = cluster.log.entries.length;
  const started = performance.now();
  let verdict: Verdict;
  try {
    verdict = await run(ctx);
  } finally {
    await identity.remove();
    ctx.client = admin;
  }
  const ms = performance.now() - started;
  const mine = cluster.log.entries.slice(from).filter((e) => e.user === user);
  return {
    verdict,
    requests: mine,
    writes: mine.filter((e) => !["GET", "HEAD"].includes(e.method)),
    refused: mine.filter((e) => e.status === 403),
    ms,
  };
}

/** The whole run of a check as its identity (see the header); `kinds`: what counts as left (default LEFT_KINDS). */
export async function runCheck(
  cluster: TestCluster,
  check: string,
  run: CheckRun,
  o: {
    recipe?: Recipe | undefined;
    waitScale?: number;
    context?: Partial<CheckContext>;
    kinds?: Kinds;
  } = {},
): Promise<CheckOutcome> {
  const ctx = await checkContext(cluster, check, {
    recipe: o.recipe,
    waitScale: o.waitScale ?? 1,
    ...o.context,
  });
  try {
    const outcome = await runAsIdentity(cluster, check, ctx, run);
    const left = (await objectsIn(cluster, ctx.testNamespace, o.kinds ?? LEFT_KINDS)).filter(
      (n) => !OWN.has(n) && !n.endsWith(`/${check}-identity`),
    );
    return { ...outcome, ctx, left };
  } finally {
    await ctx.client.delete({ apiVersion: "v1", kind: "Namespace", name: ctx.testNamespace }).catch(() => {});
    if (ctx.client instanceof KubeClient) ctx.client.close();
  }
}

/** The run wrote nothing, was refused nothing and left nothing: a read-only check within its rules. */
export function expectReadOnly(r: CheckOutcome): void {
  expect({ writes: r.writes, refused: r.refused, left: r.left }).toEqual({
    writes: [],
    refused: [],
    left: [],
  });
}
