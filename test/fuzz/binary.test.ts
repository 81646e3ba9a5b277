/**
 * Random command lines for every command, and random kubeconfigs, through the compiled binary (a
 * sample: each run is a process). Each command line runs twice at once — as drawn, and with logging
 * turned up (--debug, -v=9, --log-json) — against counting servers standing in for the apiserver and
 * the registry, with a kubeconfig and a docker config holding known secrets and random AICR_*
 * variables. Every run keeps _harness.ts's properties: no crash, an exit in the contract, nothing
 * sent before a refusal, no secret shown, bounded time and memory. fast-check shrinks a failure to
 * its smallest command line and prints it with the seed (AICR_FUZZ_SEED replays it).
 */
import { afterAll, beforeAll, describe, test } from "bun:test";
import { join } from "node:path";
import fc from "fast-check";
import { type ArgvContext, argvFor, envArb, LOGGING } from "./_arbitraries.ts";
import { loadCommands } from "./_commands.ts";
import { FIXTURES } from "./_file-flags.ts";
import {
  BINARY_RUNS,
  type CountingServer,
  makeWorkspace,
  QUICK_INPUT_KINDS,
  type RunResult,
  runBinary,
  SEED,
  startCountingServer,
  TIME_BOUND_MS,
  violations,
  type Workspace,
} from "./_harness.ts";
import { kubeconfigArb } from "./_kubeconfigs.ts";
import { knownFailure, loadRegressions, RUN_KNOWN } from "./_regressions.ts";

const COMMANDS = await loadCommands();
const regressions = loadRegressions();
let ws: Workspace;
let servers: [CountingServer, CountingServer];
let tried = 0;
/** Exit statuses seen, by command: how deep the random command lines reach (printed at the end). */
const exits = new Map<string, Map<string, number>>();

beforeAll(() => {
  ws = makeWorkspace();
  servers = [startCountingServer(), startCountingServer()];
  for (const s of servers) ws.kubeconfigFor(s);
  ws.dockerConfigFor(servers);
});
afterAll(() => {
  for (const s of servers ?? []) s.stop();
  ws?.cleanup();
  const table = [...exits].map(
    ([c, m]) => `  ${c}: ${[...m].map(([code, n]) => `exit ${code} ×${n}`).join(", ")}`,
  );
  process.stderr.write(`fuzz binary: ${tried} runs of the binary (seed ${SEED})\n${table.join("\n")}\n`);
});

/** The paths a command line may name: hostile kinds the file suite does not own, and valid fixtures. */
function context(server: CountingServer): ArgvContext {
  return {
    inputs: [
      ...QUICK_INPUT_KINDS.map((k) => ws.input(k)),
      ws.kubeconfigFor(server),
      FIXTURES.snapshot,
      FIXTURES.target,
      FIXTURES.recipe,
      FIXTURES.template,
    ],
    outputs: (["dev-zero", "fifo", "directory", "symlink-loop", "proc-file", "missing-parent"] as const).map(
      (k) => ws.output(k),
    ),
    registry: server.host,
    secret: ws.secrets.password,
  };
}

/** One command line run twice at once (as drawn; with logging up); the failures of both, described. */
async function twice(
  argv: string[],
  env: Record<string, string>,
  logging: string[],
  kubeconfig?: (s: CountingServer) => string,
) {
  const runs = await Promise.all(
    servers.map((server, i) =>
      runBinary(
        {
          argv: i === 0 ? argv : [...argv, ...logging],
          env: {
            KUBECONFIG: kubeconfig?.(server) ?? ws.kubeconfigFor(server),
            DOCKER_CONFIG: join(ws.dir, "docker"),
            AICR_PROGRESS_INTERVAL_MS: "200",
            ...env,
          },
          cwd: ws.freshDir(),
        },
        server,
      ),
    ),
  );
  tried += runs.length;
  const key = argv.slice(0, argv[0] === "runs" || argv[0] === "image" ? 2 : 1).join(" ");
  const seen = exits.get(key) ?? new Map<string, number>();
  for (const r of runs) seen.set(String(r.code), (seen.get(String(r.code)) ?? 0) + 1);
  exits.set(key, seen);
  return runs.flatMap((r: RunResult, i) =>
    violations(r, ws.secrets).map(
      (v) => `${i === 0 ? "" : `(with ${logging.join(" ")}) `}[${v.property}] ${v.detail}`,
    ),
  );
}

const budget = (runs: number) => runs * (TIME_BOUND_MS + 2_000) + 60_000;

describe("random command lines, every command", () => {
  for (const { words, args } of COMMANDS) {
    const id = `binary: aicr ${words.join(" ")}`;
    const known = knownFailure(regressions, id);
    if (known) {
      test.todo(`${id} — known: ${known.property}, ${known.issue}`);
      continue;
    }
    test(
      id,
      async () => {
        const arb = fc.tuple(argvFor(words, args, context(servers[0])), envArb, fc.constantFrom(...LOGGING));
        await fc.assert(
          fc.asyncProperty(arb, async ([argv, env, logging]) => {
            // The second run's server differs: its argv names its own registry.
            const failures = await twice(argv, env, logging);
            if (failures.length) throw new Error(`aicr ${argv.join(" ")}\n${failures.join("\n")}`);
          }),
          {
            seed: SEED,
            numRuns: BINARY_RUNS,
            plugins: [fc.interruptAfterTimeLimit(budget(BINARY_RUNS) - 30_000)],
          },
        );
      },
      budget(BINARY_RUNS) * 3,
    );
  }
});

describe("random kubeconfigs, through the commands that read one", () => {
  for (const k of RUN_KNOWN ? [] : regressions.known.filter((k) => k.id.startsWith("kubeconfig: ")))
    test.todo(`${k.id} — known: ${k.property}, ${k.issue} (left out of the random kubeconfigs)`);
  const id = "binary: random kubeconfigs";
  const known = knownFailure(regressions, id);
  if (known) test.todo(`${id} — known: ${known.property}, ${known.issue}`);
  else
    test(
      id,
      async () => {
        const commands: string[][] = [
          ["runs", "list"],
          ["runs", "list", "-A", "-o", "json"],
          ["snapshot", "--timeout", "5s"],
          ["validate", "-r", FIXTURES.recipe, "--timeout", "5s"],
          ["cleanup-legacy", "--dry-run"],
          ["runs", "delete", "20261202-120000-0123456789abcdef", "--dry-run"],
          ["diff", "-b", "cm://fuzz-ns/a", "--target", FIXTURES.target],
          ["snapshot", "--context", "cert", "--timeout", "5s"],
        ];
        const runs = BINARY_RUNS * 3;
        const tokenFiles = {
          "dev-zero": ws.input("dev-zero"),
          fifo: ws.input("fifo"),
          "big-4MiB": ws.input("big-4MiB"),
          directory: ws.input("directory"),
          "proc-file": ws.input("proc-file"),
        };
        const skip = (kind: string) => knownFailure(regressions, kind) !== undefined;
        // Each server gets the document drawn with its own address, so the two runs stay apart.
        const arb = fc.tuple(fc.nat(1_000_000), fc.constantFrom(...commands), fc.constantFrom(...LOGGING));
        await fc.assert(
          fc.asyncProperty(arb, async ([seed, argv, logging]) => {
            const texts = servers.map(
              (s) =>
                fc.sample(kubeconfigArb(s.host, ws.secrets, ws.certData, tokenFiles, skip), {
                  seed,
                  numRuns: 1,
                })[0] as string,
            );
            const files = texts.map((t, i) => ws.file(t, `random-${seed}-${i}.kubeconfig`));
            const failures = await twice(argv, {}, logging, (s) => files[servers.indexOf(s)] as string);
            if (failures.length)
              throw new Error(
                `aicr ${argv.join(" ")} with the kubeconfig:\n${texts[0]}\n${failures.join("\n")}`,
              );
          }),
          { seed: SEED, numRuns: runs, plugins: [fc.interruptAfterTimeLimit(budget(runs) - 30_000)] },
        );
      },
      budget(BINARY_RUNS * 3) * 3,
    );
});
