/**
 * The near-instant agent: a function runtime for the test clusters that writes the run's result
 * ConfigMap straight into the store (as the real agent would through the API), from one real
 * snapshot of the H100 fixture host. The fleet suite and the snapshot benchmarks (scripts/bench)
 * both use it: a fleet of many nodes costs no agent process per node.
 */
import { join } from "node:path";
import type { RunContext } from "../cluster/controllers/runtime.ts";
import { resource } from "../cluster/resources.ts";
import type { TestCluster } from "../cluster/testbed.ts";
import { AICR, ensureBuilt, ROOT } from "../e2e/_aicr.ts";

export const H100_ROOT = join(ROOT, "test/fixtures/hosts/h100-node");
export const H100_BIN = join(ROOT, "test/fixtures/bin/h100");
const TEMPLATE_RUN_ID = "20260101-000000-0000000000000000";

/** A real snapshot of the fixture host (aicr snapshot --local), used as the instant agent's output. */
export async function snapshotTemplate(): Promise<string> {
  await ensureBuilt();
  const proc = Bun.spawn([AICR, "snapshot", "--local", "--run-id", TEMPLATE_RUN_ID], {
    env: { PATH: `${H100_BIN}:${process.env.PATH}`, AICR_HOST_ROOT: H100_ROOT, NO_COLOR: "1", HOME: "/tmp" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  if (code !== 0) throw new Error(`aicr snapshot --local failed (${code})`);
  return out;
}

/** The agent's contract, minus the collection: write `-o cm://ns/name` with the run's ID, owned by the Job. */
export function instantAgent(getCluster: () => TestCluster, template: string) {
  return async (ctx: RunContext): Promise<{ exitCode: number; message?: string }> => {
    const args: string[] = (ctx.container as { args?: string[] }).args ?? [];
    const target = args[args.indexOf("-o") + 1] ?? "";
    const m = target.match(/^cm:\/\/([^/]+)\/(.+)$/);
    if (!m) return { exitCode: 2, message: `no -o cm:// in ${args.join(" ")}` };
    const [, namespace, name] = m;
    const runId = ctx.env.AICR_RUN_ID ?? "";
    // The run's provenance, stamped as the real agent stamps it from its downward-API env.
    const provenance = [
      ctx.env.AICR_POD_UID ? `\n  pod-uid: "${ctx.env.AICR_POD_UID}"` : "",
      ctx.env.AICR_JOB_UID ? `\n  job-uid: "${ctx.env.AICR_JOB_UID}"` : "",
    ].join("");
    const yaml = template
      .replace(`run-id: "${TEMPLATE_RUN_ID}"`, `run-id: "${runId}"${provenance}`)
      .replaceAll(TEMPLATE_RUN_ID, runId)
      .replace(/source-node: .*/, `source-node: ${ctx.env.NODE_NAME}`);
    const owned = ctx.env.AICR_OUTPUT_OWNED_BY_JOB === "true";
    await getCluster().store.create(resource("configmaps"), {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name,
        namespace,
        labels: { "app.kubernetes.io/name": "aicr", "aicr.run/run-id": runId },
        ...(owned
          ? {
              ownerReferences: [
                {
                  apiVersion: "batch/v1",
                  kind: "Job",
                  name: ctx.env.AICR_JOB_NAME ?? "",
                  uid: ctx.env.AICR_JOB_UID ?? "",
                  controller: true,
                  blockOwnerDeletion: true,
                },
              ],
            }
          : {}),
      },
      data: { "snapshot.yaml": yaml },
    });
    ctx.stdout(`${JSON.stringify({ level: "info", msg: "snapshot written", destination: target })}\n`);
    return { exitCode: 0 };
  };
}
