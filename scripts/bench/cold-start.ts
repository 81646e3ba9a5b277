/**
 * Cold start and peak RSS of the compiled binary:
 *
 *   bun scripts/bench/cold-start.ts [runs] [--against <rev>] [-- args]
 *
 * Runs dist/aicr with the given arguments (default --help), after warm-up runs, and prints medians.
 * With --against (npm run bench passes HEAD~1), the same runs of <rev>'s own build — made in a
 * throw-away worktree — are interleaved with this tree's, so both meet the same machine load, and the
 * ratio is printed: a start-up regression shows in the figures of the commit that made it. Figures
 * are recorded by hand in docs/performance.md; nothing here asserts a threshold.
 */
import { join } from "node:path";
import { buildRevision } from "./_revision.ts";

const root = join(import.meta.dir, "../..");
const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
const own = sep >= 0 ? argv.slice(0, sep) : argv;
const args = sep >= 0 ? argv.slice(sep + 1) : ["--help"];
const againstAt = own.indexOf("--against");
const against = againstAt >= 0 ? own[againstAt + 1] : undefined;
const runs = Number(own.find((a, i) => /^[0-9]+$/.test(a) && own[i - 1] !== "--against") ?? 30);
const WARMUP = 3;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

interface Sample {
  wall: number[];
  rss: number[];
}

async function once(binary: string, into: Sample | undefined): Promise<void> {
  const start = Bun.nanoseconds();
  const proc = Bun.spawn([binary, ...args], { stdout: "ignore", stderr: "ignore", cwd: root });
  await proc.exited;
  const elapsed = (Bun.nanoseconds() - start) / 1e6;
  const usage = proc.resourceUsage();
  if (!into) return;
  into.wall.push(elapsed);
  if (usage) into.rss.push(usage.maxRSS / (1024 * 1024)); // Bun reports maxRSS in bytes
}

const report = (name: string, s: Sample) => {
  const sorted = [...s.wall].sort((a, b) => a - b);
  const p90 = sorted[Math.min(sorted.length - 1, Math.floor(0.9 * sorted.length))] ?? 0;
  console.log(
    `${name}: wall ms median ${median(s.wall).toFixed(1)}, p90 ${p90.toFixed(1)}, min ${Math.min(...s.wall).toFixed(1)}; peak RSS MB median ${median(s.rss).toFixed(1)}, max ${Math.max(...s.rss).toFixed(1)}`,
  );
};

const current: Sample = { wall: [], rss: [] };
const mine = join(root, "dist/aicr");
if (!against) {
  for (let i = 0; i < WARMUP + runs; i++) await once(mine, i < WARMUP ? undefined : current);
  console.log(`dist/aicr ${args.join(" ")} — ${runs} runs after ${WARMUP} warm-up`);
  report("this tree", current);
} else {
  using build = await buildRevision(against);
  const previous: Sample = { wall: [], rss: [] };
  for (let i = 0; i < WARMUP + runs; i++) {
    // Alternated, so a change of machine load falls on both alike.
    await once(build.binary, i < WARMUP ? undefined : previous);
    await once(mine, i < WARMUP ? undefined : current);
  }
  console.log(`dist/aicr ${args.join(" ")} — ${runs} runs each after ${WARMUP} warm-up, interleaved`);
  report(against, previous);
  report("this tree", current);
  console.log(`ratio (this tree / ${against}): ${(median(current.wall) / median(previous.wall)).toFixed(2)}`);
}
