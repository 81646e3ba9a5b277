/**
 * The fuzz suite's harness: the budget (seed, run counts), the compiled binary run under a watchdog
 * (wall time and peak RSS bounded, killed past either), a counting HTTP server standing in for the
 * apiserver and the registry, a kubeconfig whose secrets are known, hostile files of every kind, and
 * the properties every run of the binary must keep:
 *
 * - no crash: exit 1 (an unstructured error) is never allowed, nor a death by signal;
 * - the exit status is one of README's table (0, 2–9);
 * - a refusal (exit 2, INVALID_REQUEST) sends nothing: zero requests;
 * - no secret (the kubeconfig's token and client key, a registry password) in stdout or stderr;
 * - bounded: finished within TIME_BOUND_MS, peak RSS under RSS_BOUND_BYTES.
 */
import { generateKeyPairSync } from "node:crypto";
import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AICR, ensureBuilt } from "../e2e/_aicr.ts";

/** The fixed seed of CI's run; AICR_FUZZ_SEED replays another (a failure prints the seed it ran with). */
export const SEED = Number(process.env.AICR_FUZZ_SEED ?? 20_251_202);
/**
 * Runs of each in-process property (AICR_FUZZ_RUNS, default 1000); the random command lines per
 * command through the binary are a 100th of it (each a process, run twice), or AICR_FUZZ_BINARY_RUNS.
 */
export const RUNS = Math.max(1, Number(process.env.AICR_FUZZ_RUNS ?? 1000));
export const BINARY_RUNS = Math.max(2, Number(process.env.AICR_FUZZ_BINARY_RUNS ?? Math.ceil(RUNS / 100)));

/** A run of the binary longer than this is killed and fails "time" (AICR_FUZZ_TIME_BOUND_MS). */
export const TIME_BOUND_MS = Number(process.env.AICR_FUZZ_TIME_BOUND_MS ?? 20_000);
/**
 * The bound of a run given one hostile file: reading and refusing a file takes milliseconds (a local
 * snapshot about 0.2 s), so 10 s is still generous on a loaded 2-core runner.
 */
export const FILE_TIME_BOUND_MS = Math.min(TIME_BOUND_MS, 10_000);
/** A peak RSS above this fails "memory" (aicr's own is about 60 MB; it is killed at once past it). */
export const RSS_BOUND_BYTES = 512 * 1024 * 1024;

/** README's exit-code table; 1 (an unstructured error, a bug) is not in it on purpose. */
export const EXIT_CONTRACT = [0, 2, 3, 4, 5, 6, 7, 8, 9];

// ---------------------------------------------------------------------------------------------
// The counting server: the apiserver (404 with a metav1.Status for everything) and the registry.

export interface CountingServer {
  port: number;
  host: string;
  /** Every request so far, "METHOD path". */
  requests: string[];
  stop(): void;
}

export function startCountingServer(): CountingServer {
  const requests: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      requests.push(`${req.method} ${url.pathname}`);
      const status = {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "the server could not find the requested resource",
        reason: "NotFound",
        code: 404,
      };
      return new Response(JSON.stringify(status), {
        status: 404,
        headers: { "content-type": "application/json" },
      });
    },
  });
  return {
    port: server.port ?? 0,
    host: `127.0.0.1:${server.port}`,
    requests,
    stop: () => void server.stop(true),
  };
}

// ---------------------------------------------------------------------------------------------
// Secrets: what must never reach stdout or stderr.

export interface Secrets {
  token: string;
  /** The client key's PEM body (base64 lines) and its base64 as kubeconfig data. */
  keyPem: string;
  keyData: string;
  password: string;
  /** The docker config's `auth`: base64 of fuzz:<password>. */
  dockerAuth: string;
  /** Every string of them a leak would show (24-character windows of each). */
  all: string[];
}

export function makeSecrets(): Secrets {
  const token = `fuzz-token-${crypto.randomUUID()}`;
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const keyPem = privateKey.export({ type: "sec1", format: "pem" }).toString();
  const keyData = Buffer.from(keyPem).toString("base64");
  const password = `fuzz-password-${crypto.randomUUID()}`;
  const dockerAuth = Buffer.from(`fuzz:${password}`).toString("base64");
  const keyBody = keyPem.split("\n").filter((l) => l && !l.startsWith("-----"));
  // Windows of 24 characters every 8: any 32 characters in a row of a secret hold one of them, so a
  // leak is seen whole, cut at a terminal's width or wrapped into lines.
  const windows = (secret: string): string[] => {
    const out: string[] = [];
    for (let i = 0; i + 24 <= secret.length; i += 8) out.push(secret.slice(i, i + 24));
    return out;
  };
  return {
    token,
    keyPem,
    keyData,
    password,
    dockerAuth,
    all: [...new Set([token, password, dockerAuth, keyData, ...keyBody].flatMap(windows))],
  };
}

/** The secret strings `text` holds, if any. */
export const leaked = (text: string, secrets: Secrets): string[] =>
  secrets.all.filter((s) => text.includes(s));

/** A self-signed certificate for the client key (openssl), so the kubeconfig is one a user could have. */
export function clientCertificate(dir: string, secrets: Secrets): string {
  const key = join(dir, "client.key");
  writeFileSync(key, secrets.keyPem, { mode: 0o600 });
  const cert = join(dir, "client.crt");
  const r = Bun.spawnSync(
    ["openssl", "req", "-new", "-x509", "-key", key, "-out", cert, "-days", "2", "-subj", "/CN=fuzz"],
    { stdout: "ignore", stderr: "pipe" },
  );
  if (r.exitCode !== 0) throw new Error(`openssl req failed: ${r.stderr.toString()}`);
  rmSync(key);
  return Buffer.from(readFileSync(cert)).toString("base64");
}

/** A kubeconfig for `server` with a token user and a client-certificate user (both secret). */
export function kubeconfigText(server: string, secrets: Secrets, certData: string): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: fuzz
  cluster:
    server: http://${server}
contexts:
- name: fuzz
  context: {cluster: fuzz, user: token-user, namespace: fuzz-ns}
- name: cert
  context: {cluster: fuzz, user: cert-user}
current-context: fuzz
users:
- name: token-user
  user:
    token: ${secrets.token}
- name: cert-user
  user:
    client-certificate-data: ${certData}
    client-key-data: ${secrets.keyData}
`;
}

// ---------------------------------------------------------------------------------------------
// Hostile files.

/** The kinds of file a file flag is given; each made once per workspace. */
export const INPUT_KINDS = [
  "dev-zero",
  "fifo",
  "directory",
  "empty",
  "random-bytes",
  "invalid-utf8",
  "big-4MiB",
  "keys-40k",
  "keys-under-1MiB",
  "sparse-3GiB",
  "symlink-loop",
  "missing",
  "kubeconfig",
  "proc-file",
] as const;
export type InputKind = (typeof INPUT_KINDS)[number];

/** The kinds random command lines draw from: not the slow ones (the file matrix has those) nor the kubeconfig (a run's own). */
export const QUICK_INPUT_KINDS: readonly InputKind[] = INPUT_KINDS.filter(
  (k) => !["big-4MiB", "keys-40k", "keys-under-1MiB", "kubeconfig"].includes(k),
);

/** The kinds an output flag (a file aicr writes) is given. */
export const OUTPUT_KINDS = [
  "dev-zero",
  "fifo",
  "directory",
  "symlink-loop",
  "proc-file",
  "missing-parent",
] as const;
export type OutputKind = (typeof OUTPUT_KINDS)[number];

export interface Workspace {
  dir: string;
  secrets: Secrets;
  certData: string;
  /** The kubeconfig pointing at `server` (one per server). */
  kubeconfigFor(server: CountingServer): string;
  /**
   * A Docker config directory (for DOCKER_CONFIG) holding the registry password for every server
   * given: image push must never show it either.
   */
  dockerConfigFor(servers: readonly CountingServer[]): string;
  /** A path of the given kind (made on first use; the kubeconfig kind is the first server's). */
  input(kind: InputKind): string;
  output(kind: OutputKind): string;
  /** A file with this text (named by its hash). */
  file(text: string | Uint8Array, name?: string): string;
  /** A fresh empty directory (each run's cwd, so nothing a run writes meets another's). */
  freshDir(): string;
  cleanup(): void;
}

const SPARSE_BYTES = 3 * 1024 ** 3;

export function makeWorkspace(): Workspace {
  const dir = mkdtempSync(join(tmpdir(), "aicr-fuzz-"));
  chmodSync(dir, 0o700);
  const secrets = makeSecrets();
  const certData = clientCertificate(dir, secrets);
  const made = new Map<string, string>();
  let firstKubeconfig: string | undefined;
  let fresh = 0;
  const once = (name: string, make: (path: string) => void): string => {
    const known = made.get(name);
    if (known) return known;
    const path = join(dir, name);
    make(path);
    made.set(name, path);
    return path;
  };
  const ws: Workspace = {
    dir,
    secrets,
    certData,
    kubeconfigFor(server) {
      const path = once(`kubeconfig-${server.port}.yaml`, (p) =>
        writeFileSync(p, kubeconfigText(server.host, secrets, certData), { mode: 0o600 }),
      );
      firstKubeconfig ??= path;
      return path;
    },
    dockerConfigFor(servers) {
      const docker = join(dir, "docker");
      mkdirSync(docker, { recursive: true });
      const auths = Object.fromEntries(servers.map((s) => [s.host, { auth: secrets.dockerAuth }]));
      writeFileSync(join(docker, "config.json"), JSON.stringify({ auths }), { mode: 0o600 });
      return docker;
    },
    input(kind) {
      switch (kind) {
        case "dev-zero":
          return "/dev/zero";
        case "proc-file":
          return "/proc/self/mem";
        case "kubeconfig":
          // Callers with a server of their own use kubeconfigFor(server) (its requests are counted there).
          if (!firstKubeconfig) throw new Error("no kubeconfig made yet");
          return firstKubeconfig;
        case "keys-under-1MiB":
          // 100,000 distinct keys in 0.9 MiB: within every YAML reader's cap, parsed in linear time.
          return once("keys-under-1MiB.yaml", (p) =>
            writeFileSync(
              p,
              Array.from({ length: 100_000 }, (_, i) => `k${i}: v\n`)
                .join("")
                .slice(0, 900 * 1024),
            ),
          );
        case "keys-40k":
          // 40,000 distinct keys (390 KB): a map whose duplicate-key check is quadratic takes seconds.
          return once("keys-40k.yaml", (p) =>
            writeFileSync(p, Array.from({ length: 40_000 }, (_, i) => `k${i}: v\n`).join("")),
          );
        case "fifo":
          return once("fifo", (p) => {
            const r = Bun.spawnSync(["mkfifo", p]);
            if (r.exitCode !== 0) throw new Error("mkfifo failed");
          });
        case "directory":
          return once("a-directory", (p) => mkdirSync(p));
        case "empty":
          return once("empty.yaml", (p) => writeFileSync(p, ""));
        case "random-bytes":
          return once("random.bin", (p) => writeFileSync(p, crypto.getRandomValues(new Uint8Array(4096))));
        case "invalid-utf8":
          return once("invalid-utf8.yaml", (p) =>
            writeFileSync(
              p,
              Buffer.concat([Buffer.from("apiVersion: v1\nkind: "), Buffer.from([0xc3, 0x28, 0xff])]),
            ),
          );
        case "big-4MiB":
          return once("big.yaml", (p) => writeFileSync(p, "a: b\n".repeat((4 * 1024 * 1024) / 5)));
        case "sparse-3GiB":
          return once("sparse.yaml", (p) => {
            closeSync(openSync(p, "w"));
            truncateSync(p, SPARSE_BYTES);
          });
        case "symlink-loop":
          return once("loop-a", (p) => {
            symlinkSync(join(dir, "loop-b"), p);
            symlinkSync(p, join(dir, "loop-b"));
          });
        case "missing":
          return join(dir, "no-such-file.yaml");
      }
    },
    output(kind) {
      switch (kind) {
        case "dev-zero":
          return "/dev/zero";
        case "proc-file":
          return "/proc/self/fuzz-out";
        case "missing-parent":
          return join(dir, "no-such-dir", "out.yaml");
        default:
          return ws.input(kind);
      }
    },
    file(text, name) {
      const bytes = typeof text === "string" ? new TextEncoder().encode(text) : text;
      return once(name ?? `f-${Bun.hash(bytes).toString(16)}`, (p) => writeFileSync(p, bytes));
    },
    freshDir() {
      const d = join(dir, `run-${fresh++}`);
      mkdirSync(d);
      return d;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
  return ws;
}

// ---------------------------------------------------------------------------------------------
// One run of the binary under the watchdog.

export interface RunInput {
  argv: string[];
  /** Killed past this (default TIME_BOUND_MS). */
  timeBoundMs?: number;
  env?: Record<string, string>;
  /** stdin: text, a file's path (opened for reading), or nothing. */
  stdin?: { text: string } | { path: string };
  cwd: string;
}

export interface RunResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  ms: number;
  peakRss: number;
  /** Killed by the watchdog: "time" or "memory". */
  killed?: "time" | "memory";
  requests: string[];
}

/** VmHWM (the peak resident set) of a live process, in bytes; 0 once it is gone. */
function peakRssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

export async function runBinary(input: RunInput, server: CountingServer): Promise<RunResult> {
  await ensureBuilt();
  const before = server.requests.length;
  let stdinFd: number | undefined;
  if (input.stdin && "path" in input.stdin) stdinFd = openSync(input.stdin.path, "r");
  const started = performance.now();
  // This process's own high-water mark, which a spawned child's ru_maxrss inherits (see below).
  const spawnedFrom = peakRssOf(process.pid);
  const proc = Bun.spawn([AICR, ...input.argv], {
    cwd: input.cwd,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: input.cwd,
      NO_COLOR: "1",
      ...input.env,
    },
    stdin:
      stdinFd !== undefined
        ? stdinFd
        : input.stdin && "text" in input.stdin
          ? new TextEncoder().encode(input.stdin.text)
          : "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let killed: "time" | "memory" | undefined;
  let peak = 0;
  const watch = setInterval(() => {
    peak = Math.max(peak, peakRssOf(proc.pid));
    if (peak > RSS_BOUND_BYTES) {
      killed ??= "memory";
      proc.kill("SIGKILL");
    } else if (performance.now() - started > (input.timeBoundMs ?? TIME_BOUND_MS)) {
      killed ??= "time";
      proc.kill("SIGKILL");
    }
  }, 25);
  // Output is bounded too: a run that floods stdout is cut at 8 MiB (enough for any report).
  const text = async (stream: ReadableStream<Uint8Array>) => {
    let out = "";
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      if (out.length < 8 * 1024 * 1024) out += decoder.decode(chunk, { stream: true });
    }
    return out;
  };
  const [stdout, stderr] = await Promise.all([text(proc.stdout), text(proc.stderr)]);
  await proc.exited;
  clearInterval(watch);
  if (stdinFd !== undefined) closeSync(stdinFd);
  // ru_maxrss is not the child's own: Linux carries the spawning process's high-water mark into a
  // child made by vfork/posix_spawn, so from a test process of 1 GB every child "peaks" at 1 GB. It
  // counts only above what this process held when it spawned; the polled VmHWM is the child's own.
  const usage = proc.resourceUsage();
  if (usage && usage.maxRSS > spawnedFrom + 64 * 1024 * 1024) peak = Math.max(peak, usage.maxRSS);
  if (peak > RSS_BOUND_BYTES) killed ??= "memory";
  return {
    code: proc.exitCode,
    signal: proc.signalCode === null ? null : String(proc.signalCode),
    stdout,
    stderr,
    ms: performance.now() - started,
    peakRss: peak,
    ...(killed ? { killed } : {}),
    requests: server.requests.slice(before),
  };
}

// ---------------------------------------------------------------------------------------------
// The properties.

export type Property = "crash" | "contract" | "request-before-refusal" | "secret" | "time" | "memory";

export interface Violation {
  property: Property;
  detail: string;
}

/** The error code of the run's last error line (text or --log-json), if any. */
export function errorCodeOf(stderr: string): string | undefined {
  const text = [...stderr.matchAll(/ERROR \[([A-Z_]+)\]/g)].at(-1)?.[1];
  if (text) return text;
  for (const line of stderr.split("\n").reverse()) {
    if (!line.startsWith("{")) continue;
    try {
      const o = JSON.parse(line) as { level?: string; code?: string };
      if (o.level === "error" && o.code) return o.code;
    } catch {}
  }
  return undefined;
}

/** Every property `r` breaks (empty: all kept). */
export function violations(r: RunResult, secrets: Secrets): Violation[] {
  const out: Violation[] = [];
  const tail = (s: string) => s.slice(-600);
  if (r.killed === "time") out.push({ property: "time", detail: `killed after ${Math.round(r.ms)} ms` });
  if (r.killed === "memory" || r.peakRss > RSS_BOUND_BYTES)
    out.push({
      property: "memory",
      detail: `peak RSS ${Math.round(r.peakRss / 2 ** 20)} MiB (bound ${RSS_BOUND_BYTES / 2 ** 20} MiB)`,
    });
  if (!r.killed) {
    if (r.code === 1 || r.signal !== null)
      out.push({ property: "crash", detail: `exit ${r.code} signal ${r.signal}: ${tail(r.stderr)}` });
    else if (r.code === null || !EXIT_CONTRACT.includes(r.code))
      out.push({
        property: "contract",
        detail: `exit ${r.code} is not in README's table: ${tail(r.stderr)}`,
      });
    if (r.code === 2 && errorCodeOf(r.stderr) !== "CONFLICT" && r.requests.length > 0)
      out.push({
        property: "request-before-refusal",
        detail: `exit 2 after ${r.requests.length} request(s) (${r.requests.slice(0, 3).join(", ")}): ${tail(r.stderr)}`,
      });
  }
  const secretsShown = leaked(r.stdout + r.stderr, secrets);
  if (secretsShown.length)
    out.push({
      property: "secret",
      detail: `output shows ${secretsShown.length} secret string(s): ${tail(r.stderr)}`,
    });
  return out;
}

/** A worker pool: `jobs` run `width` at a time, results in order. */
export async function pool<T, R>(
  items: readonly T[],
  width: number,
  job: (item: T, worker: number) => Promise<R>,
) {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async (_, worker) => {
      while (next < items.length) {
        const i = next++;
        results[i] = await job(items[i] as T, worker);
      }
    }),
  );
  return results;
}
