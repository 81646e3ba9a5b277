/**
 * Benchmark (b): one `aicr snapshot` run vs a shell script doing the same steps with kubectl
 * (create -f of the RBAC and the Job, wait, logs, read the ConfigMap, delete), against the same fake
 * cluster (HTTPS: kubectl sends no token over plain http), with the same near-instant agent on both
 * sides, so the tools themselves are compared. The script's manifests are the very objects an aicr run
 * created (taken from the request log), with a fresh run ID.
 *
 * kubectl is the one built from the control plane's Kubernetes release (test/control-plane).
 *
 *   bun scripts/bench/snapshot-vs-kubectl.ts [--runs 15] [--backend fake|real] [--against <rev>]
 *
 * --against: <rev>'s own build runs too, interleaved with this tree's (same cluster, same load), and
 * both are compared with the script.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { stringify } from "yaml";
import { controlPlaneBinary } from "../../test/control-plane/build.ts";
import { buildRevision, type RevisionBuild } from "./_revision.ts";
import {
  AICR,
  backendArg,
  INSTANT_IMAGE,
  instantCluster,
  median,
  runCli,
  snapshotTemplate,
} from "./snapshot-common.ts";

const { values } = parseArgs({
  options: { runs: { type: "string" }, backend: { type: "string" }, against: { type: "string" } },
});
const RUNS = Number(values.runs ?? 15);
const BACKEND = backendArg(values.backend);
const KUBECTL = (await controlPlaneBinary()).kubectl;
const NS = "bench";

using previous: RevisionBuild | undefined = values.against ? await buildRevision(values.against) : undefined;
const cluster = await instantCluster(await snapshotTemplate(), { https: true, backend: BACKEND });
const admin = cluster.kubeconfigFor("admin");
const dir = mkdtempSync(join(tmpdir(), "aicr-bench-kubectl-"));
try {
  // aicr: warm once (namespace created), then measure.
  const first = await runCli(admin, ["-n", NS, "--image", INSTANT_IMAGE]);
  if (first.code !== 0) throw new Error(first.stderr);
  const runId = first.stderr.match(/runID=(\S+)/)?.[1] ?? "";
  const bodies = cluster.log.entries
    .filter(
      (e) =>
        e.method === "POST" && e.status === 201 && !e.query.dryRun && JSON.stringify(e.body).includes(runId),
    )
    .map((e) => e.body as { kind: string; metadata: Record<string, unknown> });
  const aicr: number[] = [];
  const before: number[] = [];
  if (previous) {
    const warm = await runCli(admin, ["-n", NS, "--image", INSTANT_IMAGE], previous.binary);
    if (warm.code !== 0) throw new Error(warm.stderr);
  }
  for (let i = 0; i < RUNS; i++) {
    // Alternated with the previous build's run, so a change of machine load falls on both alike.
    for (const [binary, into] of [
      ...(previous ? [[previous.binary, before] as const] : []),
      [AICR, aicr] as const,
    ]) {
      const r = await runCli(admin, ["-n", NS, "--image", INSTANT_IMAGE], binary);
      if (r.code !== 0) throw new Error(r.stderr);
      into.push(r.ms);
    }
  }

  // kubectl: the same objects (ownerReferences dropped: the script deletes each one itself).
  const script = (id: string): string => {
    const objs = bodies.map((b) => {
      const o = JSON.parse(JSON.stringify(b).replaceAll(runId, id)) as { metadata: Record<string, unknown> };
      delete o.metadata.ownerReferences;
      return o as { kind: string; metadata: Record<string, unknown> };
    });
    const rbac = objs.filter((o) => o.kind !== "Job");
    const job = objs.filter((o) => o.kind === "Job");
    writeFileSync(join(dir, `rbac-${id}.yaml`), rbac.map((o) => stringify(o)).join("---\n"));
    writeFileSync(join(dir, `job-${id}.yaml`), job.map((o) => stringify(o)).join("---\n"));
    const jobName = `aicr-${id}`;
    const cm = `aicr-agent-snapshot-${id}`;
    return [
      "set -euo pipefail",
      `kubectl create --validate=false -f ${dir}/rbac-${id}.yaml >/dev/null`,
      `kubectl create --validate=false -f ${dir}/job-${id}.yaml >/dev/null`,
      `kubectl wait -n ${NS} --for=condition=complete job/${jobName} --timeout=60s >/dev/null`,
      `kubectl logs -n ${NS} job/${jobName} >&2`,
      `kubectl get configmap -n ${NS} ${cm} -o jsonpath='{.data.snapshot\\.yaml}'`,
      `kubectl delete -n ${NS} configmap ${cm} --wait=false >/dev/null`,
      `kubectl delete --wait=false -f ${dir}/job-${id}.yaml -f ${dir}/rbac-${id}.yaml >/dev/null`,
    ].join("\n");
  };
  const kubectl: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    const id = runId.replace(/.{4}$/, (i + 0x1000).toString(16));
    const t0 = performance.now();
    const proc = Bun.spawn(["bash", "-c", script(id)], {
      env: { PATH: `${KUBECTL.replace(/\/kubectl$/, "")}:${process.env.PATH}`, KUBECONFIG: admin, HOME: dir },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    if (code !== 0 || !out.includes(id)) throw new Error(`kubectl script failed (${code}): ${err}`);
    if (i > 0) kubectl.push(performance.now() - t0); // the first run warms kubectl's discovery cache
  }
  const a = median(aicr);
  const k = median(kubectl);
  console.log(
    `runs each:                  ${RUNS} (medians; agent near-instant on both sides; ${BACKEND} backend)`,
  );
  console.log(
    `aicr snapshot:              ${a.toFixed(0)} ms  (${aicr.map((x) => x.toFixed(0)).join(", ")})`,
  );
  console.log(
    `kubectl script (7 calls):   ${k.toFixed(0)} ms  (${kubectl.map((x) => x.toFixed(0)).join(", ")})`,
  );
  console.log(`speed-up:                   ${(k / a).toFixed(1)}×`);
  if (previous) {
    const b = median(before);
    console.log(
      `aicr at ${previous.rev}:${" ".repeat(Math.max(1, 18 - previous.rev.length))}${b.toFixed(0)} ms  (${before.map((x) => x.toFixed(0)).join(", ")}); speed-up ${(k / b).toFixed(1)}×`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  await cluster.stop();
}
