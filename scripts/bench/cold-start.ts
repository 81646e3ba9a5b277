/**
 * Cold start and peak RSS of the compiled binary: `bun scripts/bench/cold-start.ts [runs] [-- args]`.
 * Runs dist/aicr with the given arguments (default --help), after warm-up runs, and prints medians.
 * Figures are recorded by hand in docs/performance.md; nothing here asserts a threshold.
 */
import { join } from "node:path";

const root = join(import.meta.dir, "../..");
const binary = join(root, "dist/aicr");
const sep = process.argv.indexOf("--");
const runs = Number(process.argv[2] && process.argv[2] !== "--" ? process.argv[2] : 30);
const args = sep >= 0 ? process.argv.slice(sep + 1) : ["--help"];
const WARMUP = 3;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

const wall: number[] = [];
const rss: number[] = [];
for (let i = 0; i < WARMUP + runs; i++) {
  const start = Bun.nanoseconds();
  const proc = Bun.spawn([binary, ...args], { stdout: "ignore", stderr: "ignore", cwd: root });
  await proc.exited;
  const elapsed = (Bun.nanoseconds() - start) / 1e6;
  const usage = proc.resourceUsage();
  if (i < WARMUP) continue;
  wall.push(elapsed);
  if (usage) rss.push(usage.maxRSS / (1024 * 1024)); // Bun reports maxRSS in bytes
}

const p = (q: number): number =>
  [...wall].sort((a, b) => a - b)[Math.min(wall.length - 1, Math.floor(q * wall.length))] ?? 0;
console.log(`dist/aicr ${args.join(" ")} — ${runs} runs after ${WARMUP} warm-up`);
console.log(
  `wall ms: median ${median(wall).toFixed(1)}, p90 ${p(0.9).toFixed(1)}, min ${Math.min(...wall).toFixed(1)}`,
);
console.log(`peak RSS MB: median ${median(rss).toFixed(1)}, max ${Math.max(...rss).toFixed(1)}`);
