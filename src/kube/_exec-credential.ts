/**
 * Exec credential plugins (a kubeconfig user's `exec:`), run as kubectl runs them, with the bounds
 * kubectl lacks. The client.authentication.k8s.io v1 and v1beta1 ExecCredential protocol: the plugin
 * gets KUBERNETES_EXEC_INFO (its apiVersion, `interactive: false`, and with provideClusterInfo the
 * cluster: server, tls-server-name, insecure-skip-tls-verify, certificate-authority-data, proxy-url)
 * and the kubeconfig's `env` over this process's environment, and prints an ExecCredential whose
 * status holds a token or a client certificate and key (or both), and maybe an expirationTimestamp.
 *
 * - Cached for the process, per plugin (its command, args, env, apiVersion and, when it is given
 *   one, the cluster): until `expirationTimestamp` (refreshed EXEC_REFRESH_MARGIN_MS before it), or
 *   for the whole process without one, as kubectl does. A credential the apiserver refused (401) is
 *   forgotten (forgetExecCredential) and the next request runs the plugin again.
 * - One run at a time: the requests that need a credential while the plugin runs all await that run.
 * - Bounded: EXEC_PLUGIN_TIMEOUT_MS, stdout 1 MiB (a credential is a few KiB), the last 4 KiB of
 *   stderr kept.
 * - Never interactive: stdin is not the terminal and the plugin runs in its own session (no
 *   controlling terminal), so `interactiveMode: Always` is refused before it runs.
 * - Stopped, with everything it started (its process group), when every request waiting on it has
 *   been cancelled (their signals), on SIGINT/SIGTERM (a terminal's Ctrl-C reaches a plugin in
 *   aicr's own process group; this one is in its own) and when the process exits: no orphan.
 * - A failure is an AicrError naming the plugin's command and showing its stderr's tail, escaped:
 *   UNAUTHORIZED (exit 4) when it ran and gave no usable credential (it failed, timed out, printed
 *   no ExecCredential), INVALID_REQUEST (exit 2) when the kubeconfig's exec cannot be run at all (no
 *   such command, an unsupported apiVersion, interactiveMode Always). Its stdout is never shown: it
 *   may hold a credential. Neither is a credential ever put in a message or a field.
 */
import { statSync } from "node:fs";
import { AicrError } from "../core/errors.ts";
import { quoted, visible } from "../core/terminal.ts";

/**
 * How long one run may take. kubectl has no bound, so a hanging plugin hangs it; a token minter
 * (aws eks get-token, gke-gcloud-auth-plugin, kubelogin with its cache) answers in seconds, and a
 * minute leaves room for a slow network login while still ending a plugin that waits for input it
 * cannot get. The same bound as Docker credential helpers (image/registry/_cred-helper.ts).
 */
export const EXEC_PLUGIN_TIMEOUT_MS = 60_000;
/** A credential this close to its expirationTimestamp is not used: the plugin runs again. */
export const EXEC_REFRESH_MARGIN_MS = 10_000;

const API_VERSIONS = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"];
/** The versions a plugin may name in its answer (only the configured one is accepted). */
const KNOWN_API_VERSIONS = [...API_VERSIONS, "client.authentication.k8s.io/v1alpha1"];
const STDOUT_LIMIT = 1024 * 1024;
const STDERR_KEPT = 4096;
const STDERR_LINES = 20;
/** After SIGTERM, how long the plugin's group has before SIGKILL. */
const KILL_GRACE_MS = 1000;
/** After the plugin exited, how long a pipe a leftover process holds open is read. */
const PIPE_GRACE_MS = 1000;

/** A kubeconfig user's `exec`, checked. */
export interface ExecPlugin {
  command: string;
  args: string[];
  env: { name: string; value: string }[];
  apiVersion: string;
  provideClusterInfo: boolean;
  installHint: string | undefined;
}

/** The cluster, as the plugin is told about it with provideClusterInfo (KUBERNETES_EXEC_INFO). */
export interface ExecClusterInfo {
  server: string;
  tlsServerName?: string | undefined;
  insecureSkipTlsVerify?: boolean | undefined;
  /** Base64 PEM. */
  certificateAuthorityData?: string | undefined;
  proxyUrl?: string | undefined;
}

/** What the plugin answered (its ExecCredential's status). */
export interface ExecCredential {
  readonly token: string | undefined;
  /** PEM, with clientKeyData. */
  readonly clientCertificateData: string | undefined;
  readonly clientKeyData: string | undefined;
  /** expirationTimestamp in ms since the epoch; undefined: good for the process. */
  readonly expiresAt: number | undefined;
}

export interface ExecOptions {
  /** How long one run may take (EXEC_PLUGIN_TIMEOUT_MS). */
  timeoutMs?: number | undefined;
  /** The environment the plugin inherits and PATH is searched in (this process's). */
  env?: Readonly<Record<string, string | undefined>> | undefined;
}

/** The command as messages name it: quoted, every character a terminal would obey escaped. */
export const pluginName = (command: string): string => quoted(command);

const invalidExec = (user: string, problem: string, remedy: string): AicrError =>
  new AicrError(
    "INVALID_REQUEST",
    `the kubeconfig's exec credential plugin of user ${JSON.stringify(user)} ${problem}`,
    {
      remedy,
      context: { field: "users[].user.exec", user },
    },
  );

const isStringArray = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((a) => typeof a === "string");

/**
 * The kubeconfig user's `exec` (as client-node read it), checked as kubectl checks it; undefined when
 * the user has none. An exec aicr cannot run is INVALID_REQUEST, before anything is started.
 */
export function execPlugin(raw: unknown, user: string): ExecPlugin | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== "object" || Array.isArray(raw))
    throw invalidExec(user, "is not a mapping", "give users[].user.exec a command and an apiVersion");
  const e = raw as Record<string, unknown>;
  if (typeof e.command !== "string" || e.command === "")
    throw invalidExec(user, "has no command", "set users[].user.exec.command to the plugin to run");
  const command = e.command;
  const apiVersion = e.apiVersion;
  if (typeof apiVersion !== "string" || !API_VERSIONS.includes(apiVersion))
    throw invalidExec(
      user,
      `(${pluginName(command)}) has ${typeof apiVersion === "string" && apiVersion ? `apiVersion ${JSON.stringify(apiVersion)}, which is not supported` : "no apiVersion"}`,
      `set users[].user.exec.apiVersion to ${API_VERSIONS.join(" or ")}, whichever the plugin speaks`,
    );
  const args = e.args ?? [];
  if (!isStringArray(args))
    throw invalidExec(
      user,
      `(${pluginName(command)}) has args that are not a list of strings`,
      "quote each argument",
    );
  const env = e.env ?? [];
  if (
    !Array.isArray(env) ||
    !env.every(
      (v) =>
        v !== null &&
        typeof v === "object" &&
        typeof (v as Record<string, unknown>).name === "string" &&
        typeof (v as Record<string, unknown>).value === "string",
    )
  )
    throw invalidExec(
      user,
      `(${pluginName(command)}) has an env that is not a list of name and value strings`,
      "write each variable as {name: ..., value: ...} (values quoted)",
    );
  const mode = e.interactiveMode ?? "";
  if (mode === "" && apiVersion === "client.authentication.k8s.io/v1")
    throw invalidExec(
      user,
      `(${pluginName(command)}) has no interactiveMode, which apiVersion client.authentication.k8s.io/v1 requires (as kubectl says)`,
      "set users[].user.exec.interactiveMode to Never or IfAvailable",
    );
  if (mode === "Always")
    throw invalidExec(
      user,
      `(${pluginName(command)}) asks for interactiveMode Always, and aicr runs plugins without a terminal`,
      "log in once with kubectl (a plugin that caches its credential then answers without one), or set interactiveMode: IfAvailable if the plugin can run without a terminal",
    );
  if (mode !== "" && mode !== "Never" && mode !== "IfAvailable")
    throw invalidExec(
      user,
      `(${pluginName(command)}) has an interactiveMode that is not Never, IfAvailable or Always`,
      "set users[].user.exec.interactiveMode to Never or IfAvailable",
    );
  return {
    command,
    args,
    env: env as { name: string; value: string }[],
    apiVersion,
    provideClusterInfo: e.provideClusterInfo === true,
    installHint: typeof e.installHint === "string" && e.installHint.trim() ? e.installHint : undefined,
  };
}

// ---------------------------------------------------------------------------------------------------
// The cache: per plugin, the last credential and the run in flight.

interface Entry {
  credential: ExecCredential | undefined;
  run: PluginRun | undefined;
}
const cache = new Map<string, Entry>();

const fresh = (c: ExecCredential): boolean =>
  c.expiresAt === undefined || c.expiresAt - Date.now() > EXEC_REFRESH_MARGIN_MS;

/**
 * The plugin's credential: the cached one while fresh, else the run in flight (joined), else a new
 * run. `signal` lets this request stop waiting (it rejects with the signal's reason); the run is
 * stopped once no request waits for it.
 */
export function execCredential(
  plugin: ExecPlugin,
  cluster: ExecClusterInfo,
  options: ExecOptions = {},
  signal?: AbortSignal,
): Promise<ExecCredential> {
  const key = JSON.stringify([
    plugin.command,
    plugin.args,
    plugin.env,
    plugin.apiVersion,
    plugin.provideClusterInfo ? cluster : null,
  ]);
  let entry = cache.get(key);
  if (!entry) {
    entry = { credential: undefined, run: undefined };
    cache.set(key, entry);
  }
  if (entry.credential && fresh(entry.credential)) return Promise.resolve(entry.credential);
  // A run being stopped (its waiters all left) is not joined: this request starts another.
  if (!entry.run || entry.run.stopping) {
    const own = entry;
    const run = new PluginRun(plugin, cluster, options);
    own.run = run;
    run.done.then(
      (credential) => {
        own.credential = credential;
        if (own.run === run) own.run = undefined;
      },
      () => {
        // Not cached: the next request runs the plugin again (as kubectl does).
        if (own.run === run) own.run = undefined;
      },
    );
  }
  return entry.run!.join(signal);
}

/** A credential the apiserver refused (401): not used again, the next request runs its plugin. */
export function forgetExecCredential(credential: ExecCredential): void {
  for (const entry of cache.values()) if (entry.credential === credential) entry.credential = undefined;
}

/** Every cached credential forgotten (tests: each starts from a process with none). */
export function clearExecCredentials(): void {
  cache.clear();
}

// ---------------------------------------------------------------------------------------------------
// The runs in flight, and the process's end.

const live = new Set<PluginRun>();
let exitHooked = false;

const onSignal = (signal: NodeJS.Signals): void => {
  for (const run of live) run.stop(() => cancelled(run.plugin, `cancelled by ${signal}`));
  // Alone (aicr's main is not there to decide): the signal's default, as if this listener were not.
  if (process.listenerCount(signal) === 1) {
    unhookSignals();
    process.kill(process.pid, signal);
  }
};
const onExit = (): void => {
  for (const run of live) run.killNow();
};
function hookSignals(): void {
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}
function unhookSignals(): void {
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
}

function track(run: PluginRun): void {
  if (!exitHooked) {
    process.on("exit", onExit);
    exitHooked = true;
  }
  if (live.size === 0) hookSignals();
  live.add(run);
}
function untrack(run: PluginRun): void {
  if (live.delete(run) && live.size === 0) unhookSignals();
}

// ---------------------------------------------------------------------------------------------------
// One run.

type Reason = (stderr: string) => AicrError;

class PluginRun {
  readonly done: Promise<ExecCredential>;
  private waiters = 0;
  private settled = false;
  private proc: Bun.Subprocess<"ignore", "pipe", "pipe"> | undefined;
  private stopped: Reason | undefined;
  private escalation: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly plugin: ExecPlugin,
    cluster: ExecClusterInfo,
    options: ExecOptions,
  ) {
    this.done = this.run(cluster, options).finally(() => {
      this.settled = true;
      clearTimeout(this.escalation);
      untrack(this);
    });
    // Its waiters each handle the outcome; the run itself leaves no unhandled rejection behind.
    this.done.catch(() => {});
  }

  /** This request's wait: the run's outcome, or its signal's reason once that aborts. */
  join(signal: AbortSignal | undefined): Promise<ExecCredential> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.waiters++;
    if (!signal) return this.done;
    return new Promise<ExecCredential>((resolve, reject) => {
      const leave = () => {
        this.waiters--;
        reject(signal.reason);
        if (this.waiters === 0 && !this.settled)
          this.stop(() => cancelled(this.plugin, "every request waiting for it was cancelled"));
      };
      signal.addEventListener("abort", leave, { once: true });
      this.done.then(
        (c) => {
          signal.removeEventListener("abort", leave);
          resolve(c);
        },
        (err: unknown) => {
          signal.removeEventListener("abort", leave);
          reject(err);
        },
      );
    });
  }

  get stopping(): boolean {
    return this.stopped !== undefined;
  }

  /** SIGTERM to the plugin's process group, SIGKILL after a grace; the run fails with `reason`. */
  stop(reason: Reason): void {
    if (this.stopped || this.settled) return;
    this.stopped = reason;
    if (this.proc) this.terminate();
  }

  private terminate(): void {
    if (!this.proc) return;
    killGroup(this.proc, "SIGTERM");
    this.escalation = setTimeout(() => this.killNow(), KILL_GRACE_MS);
  }

  /** SIGKILL to the plugin's process group (the process is exiting: nothing may be left). */
  killNow(): void {
    if (this.proc && this.proc.exitCode === null && this.proc.signalCode === null)
      killGroup(this.proc, "SIGKILL");
  }

  private async run(cluster: ExecClusterInfo, options: ExecOptions): Promise<ExecCredential> {
    const p = this.plugin;
    const parentEnv = options.env ?? process.env;
    const path = resolveCommand(p, parentEnv.PATH ?? "");
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(parentEnv)) if (v !== undefined) env[k] = v;
    for (const { name, value } of p.env) env[name] = value;
    env.KUBERNETES_EXEC_INFO = JSON.stringify(execInfo(p, cluster));
    const timeoutMs = options.timeoutMs ?? EXEC_PLUGIN_TIMEOUT_MS;
    track(this);
    try {
      this.proc = Bun.spawn([path, ...p.args], {
        env,
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
        // Its own session and process group: no controlling terminal to prompt on, and the group is
        // what stop() kills (a plugin's own children with it).
        detached: true,
      });
    } catch (err) {
      throw new AicrError(
        "INVALID_REQUEST",
        `the exec credential plugin ${pluginName(p.command)} cannot be run: ${errnoOf(err)}`,
        {
          remedy: "check that the kubeconfig's users[].user.exec.command is an executable file",
          context: { plugin: p.command },
        },
      );
    }
    // Stopped (a cancel) while it was being started: it starts only to be stopped.
    if (this.stopped) this.terminate();
    const proc = this.proc;
    const stdout = readPipe(proc.stdout, "head", STDOUT_LIMIT, () =>
      this.stop((stderr) => failure(p, `printed more than ${STDOUT_LIMIT / 1024 / 1024} MiB`, stderr)),
    );
    const stderr = readPipe(proc.stderr, "tail", STDERR_KEPT);
    const timer = setTimeout(
      () =>
        this.stop((tail) =>
          failure(p, `gave no credential within ${formatMs(timeoutMs)} and was stopped`, tail, {
            remedy:
              "it may be waiting for a login in a browser or on a terminal, which aicr cannot show it: log in once with kubectl, then run aicr again",
          }),
        ),
      timeoutMs,
    );
    const code = await proc.exited;
    clearTimeout(timer);
    // What it printed is read to the end, unless something it left behind holds the pipes open.
    await Promise.race([Promise.all([stdout.done, stderr.done]), Bun.sleep(PIPE_GRACE_MS)]);
    stdout.cancel();
    stderr.cancel();
    const tail = stderrTail(stderr.bytes());
    if (this.stopped) throw this.stopped(tail);
    if (code !== 0) {
      const how = proc.signalCode ? `was killed by ${proc.signalCode}` : `failed (exit ${code})`;
      throw failure(p, how, tail);
    }
    return parseCredential(p, stdout.bytes(), tail);
  }
}

function killGroup(proc: Bun.Subprocess, signal: NodeJS.Signals): void {
  try {
    process.kill(-proc.pid, signal);
  } catch {
    try {
      proc.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** Where the command is: a name is looked up on PATH (kubectl's), a path taken as it is. */
function resolveCommand(p: ExecPlugin, PATH: string): string {
  const hint = p.installHint ? oneLine(p.installHint) : undefined;
  if (!p.command.includes("/")) {
    const found = Bun.which(p.command, { PATH });
    if (found) return found;
    throw new AicrError(
      "INVALID_REQUEST",
      `the kubeconfig's exec credential plugin ${pluginName(p.command)} is not on PATH`,
      {
        remedy: hint ?? "install the plugin, or set users[].user.exec.command to its full path",
        context: { plugin: p.command },
      },
    );
  }
  let isFile = false;
  try {
    isFile = statSync(p.command).isFile();
  } catch {
    // absent
  }
  if (!isFile)
    throw new AicrError(
      "INVALID_REQUEST",
      `the kubeconfig's exec credential plugin ${pluginName(p.command)} does not exist`,
      {
        remedy: hint ?? "install the plugin, or fix users[].user.exec.command",
        context: { plugin: p.command },
      },
    );
  return p.command;
}

/** KUBERNETES_EXEC_INFO: the ExecCredential the plugin is given (its spec). */
function execInfo(p: ExecPlugin, c: ExecClusterInfo): Record<string, unknown> {
  const spec: Record<string, unknown> = { interactive: false };
  if (p.provideClusterInfo) {
    spec.cluster = {
      server: c.server,
      ...(c.tlsServerName ? { "tls-server-name": c.tlsServerName } : {}),
      ...(c.insecureSkipTlsVerify ? { "insecure-skip-tls-verify": true } : {}),
      ...(c.certificateAuthorityData ? { "certificate-authority-data": c.certificateAuthorityData } : {}),
      ...(c.proxyUrl ? { "proxy-url": c.proxyUrl } : {}),
    };
  }
  return { apiVersion: p.apiVersion, kind: "ExecCredential", spec };
}

/** Its ExecCredential, checked as kubectl checks it; its stdout is never quoted. */
function parseCredential(p: ExecPlugin, stdout: Uint8Array, stderr: string): ExecCredential {
  const bad = (what: string) =>
    failure(p, `printed no usable ExecCredential: ${what}`, stderr, {
      remedy: `check the plugin's version against the kubeconfig's exec apiVersion ${p.apiVersion}; its output is not shown, as it may hold a credential`,
    });
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder().decode(stdout));
  } catch {
    throw bad("its output is not JSON");
  }
  if (!doc || typeof doc !== "object" || (doc as Record<string, unknown>).kind !== "ExecCredential")
    throw bad("its output is not of kind ExecCredential");
  const d = doc as Record<string, unknown>;
  if (d.apiVersion !== p.apiVersion) {
    const said =
      typeof d.apiVersion === "string" && KNOWN_API_VERSIONS.includes(d.apiVersion)
        ? ` ${d.apiVersion}`
        : " another";
    throw bad(`it answered apiVersion${said}, where the kubeconfig names ${p.apiVersion}`);
  }
  const s = d.status;
  if (!s || typeof s !== "object") throw bad("it has no status");
  const st = s as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  const token = str(st.token);
  const cert = str(st.clientCertificateData);
  const key = str(st.clientKeyData);
  if (Boolean(cert) !== Boolean(key))
    throw bad("its status has a client certificate without its key, or a key without its certificate");
  if (!token && !cert) throw bad("its status has neither a token nor a client certificate and key");
  let expiresAt: number | undefined;
  if (st.expirationTimestamp !== undefined && st.expirationTimestamp !== null) {
    expiresAt = typeof st.expirationTimestamp === "string" ? Date.parse(st.expirationTimestamp) : Number.NaN;
    if (!Number.isFinite(expiresAt)) throw bad("its status.expirationTimestamp is not a time");
  }
  return { token, clientCertificateData: cert, clientKeyData: key, expiresAt };
}

function failure(p: ExecPlugin, how: string, stderr: string, o: { remedy?: string } = {}): AicrError {
  return new AicrError(
    "UNAUTHORIZED",
    `the exec credential plugin ${pluginName(p.command)} ${how}${stderr ? `; its stderr:\n${stderr}` : " (nothing on its stderr)"}`,
    {
      remedy:
        o.remedy ??
        `run ${pluginName(p.command)} as the kubeconfig does to see why; it may need a new login (e.g. your cloud's login command)`,
      context: { plugin: p.command },
    },
  );
}

function cancelled(p: ExecPlugin, why: string): AicrError {
  return new AicrError(
    "CANCELED",
    `the exec credential plugin ${pluginName(p.command)} was stopped: ${why}`,
    {
      remedy: "run the command again to finish it",
      context: { plugin: p.command },
    },
  );
}

// ---------------------------------------------------------------------------------------------------
// Bounded pipes and what is shown of them.

interface Pipe {
  done: Promise<void>;
  bytes(): Uint8Array;
  cancel(): void;
}

/** Reads `stream` keeping its first `limit` bytes (`onOverflow` past them) or its last `limit`. */
function readPipe(
  stream: ReadableStream<Uint8Array>,
  keep: "head" | "tail",
  limit: number,
  onOverflow?: () => void,
): Pipe {
  const reader = stream.getReader();
  let chunks: Uint8Array[] = [];
  let size = 0;
  let over = false;
  const done = (async () => {
    try {
      for (;;) {
        const { done: end, value } = await reader.read();
        if (end) return;
        if (over) continue;
        chunks.push(value);
        size += value.byteLength;
        if (size <= limit) continue;
        if (keep === "head") {
          over = true;
          onOverflow?.();
        } else {
          const all = Buffer.concat(chunks);
          chunks = [all.subarray(all.byteLength - limit)];
          size = limit;
        }
      }
    } catch {
      // cancelled, or the pipe broke: what was read is what there is
    }
  })();
  return {
    done,
    bytes: () => Buffer.concat(chunks),
    cancel: () => void reader.cancel().catch(() => {}),
  };
}

/**
 * The last lines of the plugin's stderr, indented, every character a terminal would obey escaped
 * (core/terminal.ts): shown, never obeyed.
 */
export function stderrTail(bytes: Uint8Array): string {
  const lines = new TextDecoder()
    .decode(bytes)
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== "");
  const shown = lines
    .slice(-STDERR_LINES)
    .map((l) => `    ${visible(l.length > 300 ? `${l.slice(0, 300)}…` : l)}`);
  return shown.join("\n");
}

const oneLine = (text: string): string => visible(text.replace(/\s+/g, " ").trim());

function errnoOf(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : err instanceof Error ? oneLine(err.message) : String(err);
}

const formatMs = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);
