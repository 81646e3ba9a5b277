/**
 * A cluster for validate, on either backend (testbed.ts): GPU nodes, the GPU Operator fixture, and pods
 * that run dist/aicr.
 */
import { join } from "node:path";
import { processRuntime } from "../cluster/controllers/process-runtime.ts";
import {
  type GpuOperatorOptions,
  gpuClusterNodes,
  installGpuOperator,
  operandRuntime,
} from "../cluster/gpu-operator.ts";
import type { KObject } from "../cluster/objects.ts";
import { resource } from "../cluster/resources.ts";
import { type Backend, startTestCluster, type TestCluster } from "../cluster/testbed.ts";
import { AICR, aicr, baseEnv, ensureBuilt, type Result, ROOT } from "../e2e/_aicr.ts";
import { untilStore } from "../support/until.ts";

export const IMAGE = "ghcr.io/nvidia/aicr:validate-test";
export const NS = "aicr-validation";
export const SAMPLE_RECIPE = join(ROOT, "examples/recipe.yaml");
export const SNAPSHOT = join(ROOT, "test/validate/fixtures/snapshot-h100.yaml");
/** A bound on a stuck test only; every wait ends on a condition long before. */
export const LONG = 180_000;

export async function validationCluster(
  backend: Backend,
  options: GpuOperatorOptions & {
    nodes?: { resource: string; object: KObject }[];
    operator?: boolean;
    /** Image → executable for the pods (default: IMAGE → dist/aicr). */
    images?: Record<string, string>;
  } = {},
): Promise<TestCluster> {
  await ensureBuilt();
  const cluster = await startTestCluster(backend, {
    nodes: (options.nodes ?? gpuClusterNodes(options)).map((n) => n.object),
    runtime: (api) =>
      processRuntime({
        images: options.images ?? { [IMAGE]: AICR },
        kubeconfigForServiceAccount: api.kubeconfigForServiceAccount,
        baseEnv: {
          PATH: `${join(ROOT, "test/fixtures/bin/h100")}:${process.env.PATH}`,
          AICR_HOST_ROOT: join(ROOT, "test/fixtures/hosts/h100-node"),
          NO_COLOR: "1",
        },
        fallback: operandRuntime,
      }),
  });
  try {
    if (options.operator !== false) await installGpuOperator(cluster, options);
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  return cluster;
}

let counter = 0;
/** Distinct run IDs in the real format. */
export function runId(tag: string): string {
  counter++;
  const hex = `${tag}${counter.toString(16)}`
    .replace(/[^0-9a-f]/g, "0")
    .padEnd(16, "0")
    .slice(0, 16);
  return `20261129-130000-${hex}`;
}

/** The compiled binary against the cluster as admin: `aicr validate <args> -k … -n … --image …`. */
export function validate(
  cluster: TestCluster,
  args: string[],
  extra: { namespace?: string } = {},
): Promise<Result> {
  const kubeconfig = cluster.kubeconfigFor("admin");
  return aicr(["validate", ...args, "-k", kubeconfig, "-n", extra.namespace ?? NS, "--image", IMAGE], {
    env: baseEnv(),
  });
}

const NAMESPACED = ["serviceaccounts", "roles", "rolebindings", "jobs", "pods", "configmaps"];
const CLUSTER = ["clusterroles", "clusterrolebindings"];

/** "Kind/name" of every object carrying the run ID label (namespaced in `namespace`, and cluster-wide). */
export function objectsOfRun(cluster: TestCluster, namespace: string, id: string): string[] {
  const labelSelector = `aicr.run/run-id=${id}`;
  const out: string[] = [];
  for (const p of NAMESPACED)
    for (const o of cluster.store.list(resource(p), { namespace, labelSelector }).items)
      out.push(`${o.kind}/${o.metadata.name}`);
  for (const p of CLUSTER)
    for (const o of cluster.store.list(resource(p), { labelSelector }).items)
      out.push(`${o.kind}/${o.metadata.name}`);
  return out.sort();
}

/** No object of the run is left (the real backend's mirror learns of a delete a moment after it). */
export const untilRunGone = (cluster: TestCluster, namespace: string, id: string) =>
  untilStore(
    cluster,
    () => objectsOfRun(cluster, namespace, id).length === 0,
    () =>
      `no object of run ${id} left in ${namespace}; left: ${objectsOfRun(cluster, namespace, id).join(", ")}`,
  );

/** Objects the apiserver was asked to create: kind, name and labels from each POST body. */
export function createdObjects(
  cluster: TestCluster,
): { kind: string; name: string; labels: Record<string, string> }[] {
  return cluster.log.entries
    .filter((e) => e.method === "POST" && e.status < 300 && typeof e.body === "object" && e.body !== null)
    .map((e) => e.body as { kind?: string; metadata?: { name?: string; labels?: Record<string, string> } })
    .filter((b) => b.kind && b.metadata?.name)
    .map((b) => ({ kind: b.kind ?? "", name: b.metadata?.name ?? "", labels: b.metadata?.labels ?? {} }));
}

export function ctrf(result: Result): {
  summary: Record<string, number>;
  tests: { name: string; status: string; suite: string[]; message?: string; stdout: string[] }[];
} {
  try {
    return JSON.parse(result.stdout).results;
  } catch {
    throw new Error(`no CTRF on stdout (exit ${result.code}):\n${result.stderr}`);
  }
}
