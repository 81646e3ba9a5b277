/**
 * Reads every legacy-named object in scope (reads only): the cluster-scoped names always, the
 * namespaced names by exact name per namespace, or with a name field selector across all of them.
 */
import { AicrError } from "../core/errors.ts";
import type { KubeClient } from "../kube/client.ts";
import { isNotFound } from "../kube/errors.ts";
import { inScope } from "./_guards.ts";
import {
  CLUSTER_TARGETS,
  LEGACY_SNAPSHOT_JOB,
  LEGACY_VALIDATE_JOB,
  type LegacyTarget,
  NAMESPACED_TARGETS,
} from "./_names.ts";
import { parseObserved } from "./_parse.ts";
import type { Observation, ObservedObject, Scope, UnverifiedNamespace } from "./types.ts";

const PAGE = 500;

async function getIfPresent(
  client: KubeClient,
  where: { target: LegacyTarget; namespace?: string },
): Promise<ObservedObject | undefined> {
  const { target, namespace } = where;
  try {
    const raw = await client.get({
      apiVersion: target.apiVersion,
      kind: target.kind,
      name: target.name,
      namespace,
    });
    return parseObserved(target.kind, raw);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function listByName(client: KubeClient, target: LegacyTarget): Promise<ObservedObject[]> {
  const found: ObservedObject[] = [];
  let continueToken: string | undefined;
  do {
    const page = await client.list(target.apiVersion, target.kind, {
      fieldSelector: `metadata.name=${target.name}`,
      limit: PAGE,
      continueToken,
    });
    // The selector narrows the list; the exact name is still checked here, not trusted.
    for (const raw of page.items) {
      const o = parseObserved(target.kind, raw);
      if (o.name === target.name) found.push(o);
    }
    continueToken = page.continueToken;
  } while (continueToken);
  return found;
}

async function namespacedObjects(client: KubeClient, scope: Scope): Promise<ObservedObject[]> {
  if (scope.allNamespaces) {
    return (await Promise.all(NAMESPACED_TARGETS.map((t) => listByName(client, t)))).flat();
  }
  const reads = scope.namespaces.flatMap((ns) =>
    NAMESPACED_TARGETS.map((t) => getIfPresent(client, { target: t, namespace: ns })),
  );
  return (await Promise.all(reads)).filter((o): o is ObservedObject => o !== undefined);
}

/** Legacy Jobs in namespaces a cluster-scoped binding names but the scope leaves out (guards only). */
async function outsideJobs(
  client: KubeClient,
  namespaces: string[],
): Promise<{ jobs: ObservedObject[]; unverified: UnverifiedNamespace[] }> {
  const jobs: ObservedObject[] = [];
  const unverified: UnverifiedNamespace[] = [];
  const jobTargets = NAMESPACED_TARGETS.filter(
    (t) => t.kind === "Job" && (t.name === LEGACY_SNAPSHOT_JOB || t.name === LEGACY_VALIDATE_JOB),
  );
  for (const namespace of namespaces) {
    try {
      for (const t of jobTargets) {
        const job = await getIfPresent(client, { target: t, namespace });
        if (job) jobs.push(job);
      }
    } catch (err) {
      if (!(err instanceof AicrError) || err.code === "CANCELED") throw err;
      unverified.push({ namespace, reason: `${err.code}: ${err.message}` });
    }
  }
  return { jobs, unverified };
}

export async function observe(client: KubeClient, scope: Scope): Promise<Observation> {
  const cluster = (await Promise.all(CLUSTER_TARGETS.map((t) => getIfPresent(client, { target: t })))).filter(
    (o): o is ObservedObject => o !== undefined,
  );
  const namespaced = await namespacedObjects(client, scope);
  const subjectNamespaces = cluster
    .flatMap((o) => o.subjects ?? [])
    .filter((s) => s.kind === "ServiceAccount" && s.namespace && !inScope(scope, s.namespace))
    .map((s) => s.namespace ?? "");
  const outside = await outsideJobs(client, [...new Set(subjectNamespaces)].sort());
  return {
    scope,
    objects: [...cluster, ...namespaced],
    outsideJobs: outside.jobs,
    unverified: outside.unverified,
  };
}
