/**
 * One in-process run of a check as its pod runs it: the check's namespace made as the run makes it, the
 * check's own identity holding exactly the catalog's rules (_standin-cluster.ts checkIdentity), and
 * afterwards what the run would find — the requests that identity made (writes, refusals) and the
 * objects left in the namespace — before the namespace is deleted, as the run deletes it.
 */
import { KubeClient } from "../../../src/kube/client.ts";
import type { CheckContext, CheckRun, Verdict } from "../../../src/validate/checks/context.ts";
import type { Recipe } from "../../../src/validate/recipe.ts";
import type { LoggedRequest } from "../../cluster/request-log.ts";
import type { TestCluster } from "../../cluster/testbed.ts";
import { checkContext, type TestCheckContext } from "./_context.ts";
import { checkIdentity, objectsIn } from "./_standin-cluster.ts";

/** Kinds a check could leave behind in its namespace. */
const LEFT_KINDS = [
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

export interface CheckOutcome {
  verdict: Verdict;
  ctx: TestCheckContext;
  /** Every request of the check's identity. */
  requests: LoggedRequest[];
  /** Requests of the check's identity that were not reads. */
  writes: LoggedRequest[];
  /** Requests of the check's identity the apiserver refused (403): a rule the catalog lacks. */
  refused: LoggedRequest[];
  /** Objects in the check's namespace after it ended (its identity's own excluded). */
  left: string[];
  ms: number;
}

export async function runCheck(
  cluster: TestCluster,
  check: string,
  run: CheckRun,
  o: { recipe?: Recipe | undefined; waitScale?: number; context?: Partial<CheckContext> } = {},
): Promise<CheckOutcome> {
  const ctx = await checkContext(cluster, check, {
    recipe: o.recipe,
    waitScale: o.waitScale ?? 1,
    ...o.context,
  });
  const recipe = o.recipe ?? ({ kind: "RecipeMetadata", spec: { constraints: [] } } as unknown as Recipe);
  const identity = await checkIdentity(cluster, check, recipe, ctx.testNamespace);
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
  }
  const ms = performance.now() - started;
  const mine = cluster.log.entries.slice(from).filter((e) => e.user === user);
  const left = (await objectsIn(cluster, ctx.testNamespace, LEFT_KINDS)).filter(
    (n) => !OWN.has(n) && !n.endsWith(`/${check}-identity`),
  );
  await admin.delete({ apiVersion: "v1", kind: "Namespace", name: ctx.testNamespace }).catch(() => {});
  if (admin instanceof KubeClient) admin.close();
  return {
    verdict,
    ctx,
    requests: mine,
    writes: mine.filter((e) => !["GET", "HEAD"].includes(e.method)),
    refused: mine.filter((e) => e.status === 403),
    left,
    ms,
  };
}
