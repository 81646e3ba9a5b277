/**
 * `npm run demo`: starts the fake cluster (as `npm run cluster` does: HTTPS, two GPU nodes, one of them
 * tainted, and a CPU node) whose kubelet runs dist/aicr as the agent, then runs two overlapping
 * `aicr snapshot` invocations in one namespace. Shows each run's ID and its own result, then that the
 * namespace holds no run object afterwards. Then it runs `aicr validate` with examples/recipe.yaml
 * against the cluster's GPU Operator (a live capture plus one validation Job per check) and shows the
 * report. Exits 0 when all of that holds.
 */
import { join } from "node:path";
import { processRuntime } from "../test/cluster/controllers/process-runtime.ts";
import { installGpuOperator, operandRuntime } from "../test/cluster/gpu-operator.ts";
import { demoNodes } from "../test/cluster/nodes.ts";
import { resource } from "../test/cluster/resources.ts";
import { startTestCluster } from "../test/cluster/testbed.ts";
import { AICR, ensureBuilt, ROOT } from "../test/e2e/_aicr.ts";

const IMAGE = "ghcr.io/nvidia/aicr:demo";
const NS = "aicr-demo";
const say = (line = ""): void => void process.stdout.write(`${line}\n`);

await ensureBuilt(); // builds dist/aicr when it is missing
const cluster = await startTestCluster("fake", {
  https: true,
  nodes: demoNodes().map((n) => n.object),
  runtime: (api) =>
    processRuntime({
      images: { [IMAGE]: AICR },
      kubeconfigForServiceAccount: api.kubeconfigForServiceAccount,
      baseEnv: {
        PATH: `${join(ROOT, "test/fixtures/bin/h100")}:${process.env.PATH}`,
        AICR_HOST_ROOT: join(ROOT, "test/fixtures/hosts/h100-node"),
        NO_COLOR: "1",
      },
      fallback: operandRuntime,
    }),
});
await installGpuOperator(cluster);
const kubeconfig = cluster.kubeconfigFor("admin");

interface Run {
  name: string;
  stderr: string[];
  done: Promise<{ code: number; stdout: string }>;
}

function start(name: string): Run {
  const proc = Bun.spawn([AICR, "snapshot", "-n", NS, "--image", IMAGE], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
      KUBECONFIG: kubeconfig,
      NO_COLOR: "1",
    },
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  const run: Run = { name, stderr: [], done: Promise.resolve({ code: -1, stdout: "" }) };
  const decoder = new TextDecoder();
  let pending = "";
  const pump = (async () => {
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) {
      pending += decoder.decode(chunk);
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const l of lines) {
        run.stderr.push(l);
        say(`  [${name}] ${l}`);
      }
    }
  })();
  run.done = (async () => {
    const [stdout, code] = await Promise.all([
      new Response(proc.stdout as ReadableStream).text(),
      proc.exited,
      pump,
    ]);
    return { code, stdout };
  })();
  return run;
}

/** Resolves when a line of `run`'s progress contains `text` (or the run ends). */
async function untilLine(run: Run, text: string): Promise<void> {
  let ended = false;
  void run.done.then(() => {
    ended = true;
  });
  while (!ended && !run.stderr.some((l) => l.includes(text))) await Bun.sleep(10);
}

function runObjects(): string[] {
  const out: string[] = [];
  for (const plural of ["serviceaccounts", "roles", "rolebindings", "jobs", "configmaps"])
    for (const o of cluster.store.list(resource(plural), { namespace: NS }).items)
      if (o.metadata.labels?.["aicr.run/run-id"] || o.metadata.name?.startsWith("aicr-agent-snapshot-"))
        out.push(`${o.kind}/${o.metadata.name}`);
  for (const plural of ["clusterroles", "clusterrolebindings"])
    for (const o of cluster.store.list(resource(plural)).items)
      if (o.metadata.labels?.["aicr.run/run-id"]) out.push(`${o.kind}/${o.metadata.name}`);
  return out;
}

let ok = false;
try {
  say(`# fake cluster at ${cluster.url}; agent image ${IMAGE} runs ${AICR}`);
  say(`# run A starts; run B starts once A's objects exist, so the two overlap in namespace ${NS}`);
  const a = start("A");
  await untilLine(a, "run objects created");
  const b = start("B");
  const [ra, rb] = await Promise.all([a.done, b.done]);
  say();
  say("# results");
  let good = true;
  for (const [run, r] of [
    [a, ra],
    [b, rb],
  ] as const) {
    const runId = run.stderr.join("\n").match(/runID=(\S+)/)?.[1] ?? "?";
    const docRunId = r.stdout.match(/run-id: "?([0-9a-f-]+)"?/)?.[1] ?? "?";
    const node = r.stdout.match(/source-node: (\S+)/)?.[1] ?? "?";
    const own = r.code === 0 && docRunId === runId;
    good &&= own;
    say(
      `  run ${run.name}: exit ${r.code}, run ID ${runId}; its snapshot: metadata.run-id ${docRunId}, source-node ${node} ${own ? "(its own)" : "(MISMATCH)"}`,
    );
  }
  const left = runObjects();
  say(
    `  run objects left in namespace ${NS} (and cluster-wide): ${left.length === 0 ? "none" : left.join(", ")}`,
  );
  ok = good && left.length === 0;
  say();
  say(`# aicr validate -r examples/recipe.yaml: readiness, then one validation Job per check`);
  const v = Bun.spawn(
    [AICR, "validate", "-r", join(ROOT, "examples/recipe.yaml"), "-n", NS, "--image", IMAGE, "-t", "json"],
    {
      env: { PATH: process.env.PATH ?? "", KUBECONFIG: kubeconfig, NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const [vout, verr, vcode] = await Promise.all([
    new Response(v.stdout).text(),
    new Response(v.stderr).text(),
    v.exited,
  ]);
  const report = JSON.parse(vout || "{}") as {
    results?: { tests?: { name: string; status: string; message?: string }[] };
  };
  for (const t of report.results?.tests ?? []) say(`  ${t.status.padEnd(7)} ${t.name}: ${t.message ?? ""}`);
  const validateRunId = verr.match(/runID=(\S+)/)?.[1] ?? "?";
  const leftAfter = runObjects();
  say(
    `  validate run ID ${validateRunId}: exit ${vcode}; run objects left: ${leftAfter.length === 0 ? "none" : leftAfter.join(", ")}`,
  );
  ok &&= vcode === 0 && (report.results?.tests?.length ?? 0) > 0 && leftAfter.length === 0;
  say(ok ? "# demo OK" : "# demo FAILED");
} finally {
  await cluster.stop();
}
process.exit(ok ? 0 : 1);
