/**
 * Every file flag of every command (_file-flags.ts) given every hostile kind of file through the
 * compiled binary: /dev/zero, a FIFO, a directory, an empty file, random bytes, invalid UTF-8, 4 MiB,
 * a sparse 3 GiB file, a symlink loop, a missing path, the kubeconfig itself (its secrets must not be
 * echoed), a /proc file; outputs get a device, a FIFO, a directory, a loop, /proc and a missing
 * parent; --password-stdin gets them on stdin. Each run keeps _harness.ts's properties: no crash,
 * an exit in the contract, nothing sent before a refusal, no secret shown, bounded time and memory.
 * The known failures of regressions.json are test.todo, naming their issue.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { loadCommands } from "./_commands.ts";
import { FILE_FLAGS, type FileFlag, PATH_HINTS, PATH_POSITIONALS } from "./_file-flags.ts";
import {
  type CountingServer,
  FILE_TIME_BOUND_MS,
  INPUT_KINDS,
  makeWorkspace,
  OUTPUT_KINDS,
  pool,
  runBinary,
  startCountingServer,
  violations,
  type Workspace,
} from "./_harness.ts";
import { knownFailure, loadRegressions } from "./_regressions.ts";

/** What --password-stdin is given on stdin. */
const STDIN_KINDS = [
  "dev-zero",
  "empty",
  "random-bytes",
  "invalid-utf8",
  "big-4MiB",
  "sparse-3GiB",
  "directory",
  "kubeconfig",
] as const;

const regressions = loadRegressions();
const WIDTH = 2;
let ws: Workspace;
let servers: CountingServer[];
let tried = 0;

beforeAll(() => {
  ws = makeWorkspace();
  servers = Array.from({ length: WIDTH }, startCountingServer);
  for (const s of servers) ws.kubeconfigFor(s);
  ws.dockerConfigFor(servers.slice(0, 1));
});
afterAll(() => {
  for (const s of servers ?? []) s.stop();
  ws?.cleanup();
  process.stderr.write(`fuzz files: ${tried} runs of the binary\n`);
});

const kindsOf = (flag: FileFlag): readonly string[] =>
  flag.role === "output" ? OUTPUT_KINDS : flag.role === "stdin" ? STDIN_KINDS : INPUT_KINDS;

async function runCase(flag: FileFlag, kind: string, worker: number) {
  const server = servers[worker] as CountingServer;
  // The worker's own kubeconfig: its requests reach its own server, never another worker's count.
  const path =
    kind === "kubeconfig"
      ? ws.kubeconfigFor(server)
      : flag.role === "output"
        ? ws.output(kind as (typeof OUTPUT_KINDS)[number])
        : ws.input(kind as (typeof INPUT_KINDS)[number]);
  const env = {
    KUBECONFIG: ws.kubeconfigFor(server),
    DOCKER_CONFIG: join(ws.dir, "docker"),
    ...flag.env?.(path),
  };
  const r = await runBinary(
    {
      argv: flag.argv(path, { ws, server }),
      timeBoundMs: FILE_TIME_BOUND_MS,
      env,
      cwd: ws.freshDir(),
      ...(flag.role === "stdin" ? { stdin: { path } } : {}),
    },
    server,
  );
  tried++;
  return { kind, r, broken: violations(r, ws.secrets) };
}

describe("every file flag, every hostile file", () => {
  test("the table names every flag whose value is a path", async () => {
    const missing: string[] = [];
    for (const { words, args } of await loadCommands())
      for (const [name, spec] of Object.entries(args)) {
        const command = words.join(" ");
        const hint = "valueHint" in spec ? spec.valueHint : undefined;
        const isPath =
          spec.type === "positional"
            ? PATH_POSITIONALS.includes(`${command} ${name}`)
            : hint !== undefined && PATH_HINTS.includes(hint);
        if (!isPath) continue;
        const spellings = [`--${name}`, `<${name}>`, ...[spec.alias ?? []].flat().map((a) => `-${a}`)];
        const listed = FILE_FLAGS.some(
          (f) => f.id.startsWith(`${command} `) && f.id.split(" ").some((word) => spellings.includes(word)),
        );
        if (!listed) missing.push(`${command} ${spellings[0]}`);
      }
    expect(missing).toEqual([]);
  });

  for (const flag of FILE_FLAGS) {
    const kinds = kindsOf(flag).filter((k) => !(k in (flag.skip ?? {})));
    const known = kinds.filter((k) => knownFailure(regressions, `file: ${flag.id} ← ${k}`));
    for (const k of known) {
      const why = knownFailure(regressions, `file: ${flag.id} ← ${k}`);
      test.todo(`file: ${flag.id} ← ${k} — known: ${why?.property}, ${why?.issue}`);
    }
    const run = kinds.filter((k) => !known.includes(k));
    test(
      `file: ${flag.id} ← ${run.join(", ")}`,
      async () => {
        const results = await pool(run, WIDTH, (kind, worker) => runCase(flag, kind, worker));
        const failures = results
          .filter((x) => x.broken.length > 0)
          .map(
            (x) => `${flag.id} ← ${x.kind}: ${x.broken.map((b) => `[${b.property}] ${b.detail}`).join("; ")}`,
          );
        expect(failures).toEqual([]);
      },
      (FILE_TIME_BOUND_MS + 5_000) * Math.ceil(run.length / WIDTH) + 10_000,
    );
  }
});
