import { createLogger, type Logger } from "../core/log.ts";
import { VERSION } from "../core/version.ts";
import { createTransport } from "../transport/registry.ts";
import type { Transport, TransportName } from "../transport/types.ts";
import { generateInvocationId, resolveRunId } from "./run-id.ts";

/** What every command receives: created once per invocation, in this one place. */
export interface RunContext {
  readonly runId: string;
  /** The run ID came from --run-id / AICR_RUN_ID rather than being generated. */
  readonly runIdGiven: boolean;
  readonly invocationId: string;
  readonly command: string;
  readonly version: string;
  readonly log: Logger;
  /** The log is JSON lines (--log-json, or the agent's pod): no terminal status line then. */
  readonly logJson: boolean;
  /** Aborted by the first SIGINT/SIGTERM: stop waiting, let cleanup run. */
  readonly signal: AbortSignal;
  readonly transport: Transport;
  readonly env: Readonly<Record<string, string | undefined>>;
}

export interface RunContextOptions {
  command: string;
  transport: TransportName;
  signal: AbortSignal;
  flags: {
    runId?: string | undefined;
    debug?: boolean | undefined;
    logJson?: boolean | undefined;
    kubeconfig?: string | undefined;
    context?: string | undefined;
  };
  env?: Record<string, string | undefined>;
  /** Log the run ID at info level (default), or only at debug level. */
  announce?: boolean;
  /** Tests capture logs here; production writes to stderr. */
  writeLog?: (line: string) => void;
}

/**
 * The first line's wording, the one the operator guide tells people to search for: a snapshot from a
 * jump host is a "snapshot agent run", a validation a "validate run"; other commands name themselves.
 */
export function runLabel(command: string, transport: TransportName): string {
  if (command === "snapshot") return transport === "remote" ? "snapshot agent run" : "snapshot run";
  if (command === "validate") return "validate run";
  return `aicr ${command}`;
}

let lastRunId: string | undefined;

/** The run ID of this process's run context, once there is one: main's final error line carries it. */
export const currentRunId = (): string | undefined => lastRunId;

export function createRunContext(options: RunContextOptions): RunContext {
  const env = options.env ?? process.env;
  // Validated before anything else happens, including the first log line.
  const runId = resolveRunId({ flag: options.flags.runId, env: env.AICR_RUN_ID });
  lastRunId = runId;
  // In the agent's pod the log is the remote side's data stream: always JSON lines.
  const logJson = Boolean(options.flags.logJson) || options.transport === "in-cluster";
  const log = createLogger({
    json: logJson,
    debug: Boolean(options.flags.debug),
    // Every JSON line of the run says which run it belongs to.
    fields: { runId },
    ...(options.writeLog ? { write: options.writeLog } : {}),
  });
  const invocationId = generateInvocationId();
  const line = `${runLabel(options.command, options.transport)}: runID=${runId}`;
  if (options.announce ?? true) log.info(line);
  else log.debug(line);
  log.debug("run context", { invocationId, version: VERSION, transport: options.transport });
  // Bun's fetch would follow it; aicr's clients set verification explicitly (kube/http.ts,
  // image/registry/_http.ts), as kubectl ignores it: said once, so nobody believes it took effect.
  if (env.NODE_TLS_REJECT_UNAUTHORIZED !== undefined && env.NODE_TLS_REJECT_UNAUTHORIZED !== "1")
    log.warn(
      `NODE_TLS_REJECT_UNAUTHORIZED=${JSON.stringify(env.NODE_TLS_REJECT_UNAUTHORIZED)} is set and ignored: aicr verifies TLS unless the kubeconfig says insecure-skip-tls-verify (or image push --plain-http)`,
    );
  return {
    runId,
    runIdGiven: Boolean(options.flags.runId || env.AICR_RUN_ID),
    invocationId,
    command: options.command,
    version: VERSION,
    log,
    logJson,
    signal: options.signal,
    transport: createTransport(options.transport, {
      kubeconfig: options.flags.kubeconfig,
      context: options.flags.context,
      env,
      log,
    }),
    env,
  };
}
