/**
 * Wall time of one live `aicr validate`: the operator's command, live capture (the agent snapshot) then
 * the four deployment-phase checks (operator-health, expected-resources, gpu-operator-version,
 * check-nvidia-smi), on the validate suites' test bed: two 8-GPU nodes and a CPU node, the GPU Operator
 * fixture, pods running the binary over the 8×H100 fixture host.
 *
 *   bun scripts/bench/validate.ts [--runs 7] [--backend real|fake] [--against <rev>]
 *
 * --backend real (default): the real control plane (its Job controller, scheduler and garbage
 * collector, our process kubelet); fake: the in-process fake. One warm-up run, then the timed ones;
 * after each run, its objects are awaited gone before the next starts (not timed). With --against,
 * <rev>'s own build (made in a throw-away worktree) runs as CLI and as agent and validator image, and
 * its runs alternate with this tree's dist/aicr (previous, this, previous, …) so both meet the same
 * load; the ratio is printed. Build this tree first (npm run build). Every run must exit 0 with its
 * four checks passed, else the script fails with the run's stderr tail. Figures go to
 * docs/performance.md by hand; nothing here asserts a threshold.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parse, stringify } from "yaml";
import type { TestCluster } from "../../test/cluster/testbed.ts";
import { baseEnv, ensureBuilt, type Result } from "../../test/e2e/_aicr.ts";
import {
  ctrf,
  IMAGE,
  NS,
  runId,
  SAMPLE_RECIPE,
  untilRunGone,
  validationCluster,
} from "../../test/validate/_harness.ts";
import { buildRevision, type RevisionBuild } from "./_revision.ts";
import { AICR, backendArg, median } from "./snapshot-common.ts";

const { values } = parseArgs({
  options: { runs: { type: "string" }, backend: { type: "string" }, against: { type: "string" } },
});
const runs = Number(values.runs ?? 7);
const backend = backendArg(values.backend ?? "real");
const CHECKS = ["operator-health", "expected-resources", "gpu-operator-version", "check-nvidia-smi"];
/** The agent and validator image of --against's runs: its own binary. */
const PREVIOUS_IMAGE = "ghcr.io/nvidia/aicr:validate-previous";

interface Binary {
  name: string;
  path: string;
  image: string;
  wall: number[];
  codes: number[];
}

/** The sample recipe (its constraints and version constraint) with all four deployment checks. */
function writeRecipe(dir: string): string {
  const recipe = parse(readFileSync(SAMPLE_RECIPE, "utf8"));
  recipe.spec.validation.deployment.checks = CHECKS;
  const path = join(dir, "recipe.yaml");
  writeFileSync(path, stringify(recipe));
  return path;
}

/**
 * validationCluster (test/validate/_harness.ts) with one image per binary compared: the same nodes,
 * GPU Operator and host fixture.
 */
const tail = (text: string, lines = 30) => text.trimEnd().split("\n").slice(-lines).join("\n");

/** One `validate` by `b`; timed into `b` unless a warm-up. Fails loudly unless exit 0 and four checks passed. */
async function once(cluster: TestCluster, recipe: string, b: Binary, timed: boolean): Promise<void> {
  const id = runId("bench");
  const t0 = performance.now();
  const proc = Bun.spawn(
    [
      b.path,
      "validate",
      "-r",
      recipe,
      "--run-id",
      id,
      "-k",
      cluster.kubeconfigFor("admin"),
      "-n",
      NS,
      "--image",
      b.image,
    ],
    { env: baseEnv(), stdout: "pipe", stderr: "pipe", stdin: "ignore" },
  );
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const ms = performance.now() - t0;
  const r: Result = { code, stdout, stderr };
  const fail = (why: string) => {
    throw new Error(`${b.name} (${b.path}): ${why}; stderr tail:\n${tail(stderr)}`);
  };
  if (code !== 0) fail(`exit ${code}`);
  const passed = ctrf(r)
    .tests.filter((t) => t.suite[0] === "deployment" && t.status === "passed")
    .map((t) => t.name);
  if (CHECKS.some((c) => !passed.includes(c))) fail(`deployment checks passed: ${passed.join(", ")}`);
  if (timed) {
    b.wall.push(ms);
    b.codes.push(code);
  }
  await untilRunGone(cluster, NS, id);
}

await ensureBuilt();
using previousBuild: RevisionBuild | undefined = values.against
  ? await buildRevision(values.against)
  : undefined;
const current: Binary = { name: "this tree", path: AICR, image: IMAGE, wall: [], codes: [] };
const previous: Binary | undefined = previousBuild && {
  name: previousBuild.rev,
  path: previousBuild.binary,
  image: PREVIOUS_IMAGE,
  wall: [],
  codes: [],
};
const order = previous ? [previous, current] : [current];
const dir = mkdtempSync(join(tmpdir(), "aicr-bench-validate-"));
const cluster = await validationCluster(backend, {
  images: Object.fromEntries(order.map((b) => [b.image, b.path])),
});
try {
  const recipe = writeRecipe(dir);
  for (const b of order) await once(cluster, recipe, b, false);
  for (let i = 0; i < runs; i++) for (const b of order) await once(cluster, recipe, b, true);
} finally {
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}

console.log(
  `aicr validate, live capture + ${CHECKS.length} deployment checks, ${backend} backend — ${runs} runs${previous ? " each, interleaved" : ""}, after 1 warm-up`,
);
for (const b of order)
  console.log(
    `${b.name}: wall median ${median(b.wall).toFixed(0)} ms; samples ${b.wall.map((ms) => ms.toFixed(0)).join(", ")} ms; exit codes ${b.codes.join(", ")}`,
  );
if (previous)
  console.log(
    `ratio (this tree / ${previous.name}): ${(median(current.wall) / median(previous.wall)).toFixed(2)}`,
  );
