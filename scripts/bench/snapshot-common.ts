/**
 * Shared by the snapshot benchmarks: a fake cluster whose agent is near-instant (the suites' own,
 * test/support/instant-agent.ts), request timing, and spawning the compiled binary. Not a test:
 * figures go to docs/performance.md.
 */
import { existsSync } from "node:fs";
import { node } from "../../test/cluster/nodes.ts";
import type { LoggedRequest } from "../../test/cluster/request-log.ts";
import { type Backend, startTestCluster, type TestCluster } from "../../test/cluster/testbed.ts";
import { AICR, ROOT } from "../../test/e2e/_aicr.ts";
import { H100_BIN, H100_ROOT, instantAgent, snapshotTemplate } from "../../test/support/instant-agent.ts";

export { AICR, H100_BIN, H100_ROOT, instantAgent, ROOT, snapshotTemplate };
/** Any image: the instant agent ignores it. */
export const INSTANT_IMAGE = "ghcr.io/nvidia/aicr:instant";
const TIME = "/usr/bin/time";

/**
 * A cluster whose agent is near-instant: the fake (in this process) or the real control plane. On the
 * real one the instant agent's write goes to the apiserver as admin, as the real agent's would.
 */
export async function instantCluster(
  template: string,
  opts: { https?: boolean; backend?: Backend } = {},
): Promise<TestCluster> {
  let cluster: TestCluster | undefined;
  cluster = await startTestCluster(opts.backend ?? "fake", {
    https: opts.https ?? false,
    nodes: [node("gpu-node-1", { gpus: 8 }), node("cpu-node-1")],
    runtime: () => instantAgent(() => cluster as TestCluster, template),
  });
  return cluster;
}

/** `--backend fake|real` of the benchmarks. */
export function backendArg(value: string | undefined): Backend {
  if (value === undefined || value === "fake" || value === "real") return value ?? "fake";
  throw new Error(`--backend must be fake or real, not ${value}`);
}

/** Completion time of every logged request (the log records a request when its answer is ready). */
export function timeRequests(cluster: TestCluster): Map<number, number> {
  const at = new Map<number, number>();
  const record = cluster.log.record.bind(cluster.log);
  cluster.log.record = (e) => {
    const entry = record(e);
    at.set(entry.seq, performance.now());
    return entry;
  };
  return at;
}

/**
 * The longest chain of requests each of which started after the previous one was answered, given
 * that every request took at least `latencyMs`: the sequential round trips on the critical path.
 */
export function criticalPath(
  entries: LoggedRequest[],
  at: Map<number, number>,
  latencyMs: number,
): LoggedRequest[] {
  const spans = entries
    .map((e) => ({ e, end: at.get(e.seq) ?? 0 }))
    .map((s) => ({ ...s, start: s.end - latencyMs }))
    .sort((a, b) => a.end - b.end);
  // Longest chain of non-overlapping spans (all the same length): greedy by end time is optimal.
  const chain: typeof spans = [];
  for (const s of spans) if (chain.length === 0 || s.start >= (chain.at(-1)?.end ?? 0) - 1) chain.push(s);
  return chain.map((s) => s.e);
}

/**
 * dist/aicr snapshot under /usr/bin/time: its %M is the peak RSS of aicr itself. (Bun's own
 * resourceUsage().maxRSS for a child reported this parent's figure here, so it is not used.)
 */
export async function runCli(
  kubeconfig: string,
  args: string[],
  binary: string = AICR,
): Promise<{ code: number; stdout: string; stderr: string; ms: number; maxRss: number; cpuMs: number }> {
  const t0 = performance.now();
  const timed = existsSync(TIME);
  const proc = Bun.spawn(
    [...(timed ? [TIME, "-f", "AICR_MAXRSS_KB=%M AICR_CPU_S=%U+%S"] : []), binary, "snapshot", ...args],
    {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp", NO_COLOR: "1", KUBECONFIG: kubeconfig },
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
    },
  );
  const [stdout, rawErr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const ms = performance.now() - t0;
  const kb = Number(rawErr.match(/AICR_MAXRSS_KB=(\d+)/)?.[1] ?? 0);
  // aicr's own CPU time (user + system): what it costs, apart from waiting on the cluster.
  const cpu = rawErr.match(/AICR_CPU_S=([\d.]+)\+([\d.]+)/);
  const cpuMs = cpu ? (Number(cpu[1]) + Number(cpu[2])) * 1000 : 0;
  const stderr = rawErr.replace(/AICR_MAXRSS_KB=\d+ AICR_CPU_S=\S+\n?/, "");
  return { code, stdout, stderr, ms, maxRss: kb * 1024, cpuMs };
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
};

export const runIdIn = (text: string): string | undefined => text.match(/run-id: "?([0-9a-f-]+)"?/)?.[1];

/** Peak RSS of this process, sampled every 20 ms while `fn` runs. */
export async function withPeakRss<T>(fn: () => Promise<T>): Promise<{ value: T; peakRss: number }> {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  try {
    const value = await fn();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { value, peakRss: peak };
  } finally {
    clearInterval(timer);
  }
}

export const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
