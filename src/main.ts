import { AicrError, ExitStatus, errorMessage, exitCodeOf, formatError, isAicrError } from "./core/errors.ts";
import { createLogger } from "./core/log.ts";
import { forcedExitReports } from "./run/shutdown.ts";

/**
 * The entry point and the only place that decides the exit status. The first SIGINT/SIGTERM
 * cancels the run (cleanup still runs); a second one exits at once.
 */
const controller = new AbortController();
let signalsSeen = 0;
const onSignal = (signal: NodeJS.Signals): void => {
  signalsSeen++;
  if (signalsSeen > 1) {
    for (const report of forcedExitReports()) process.stderr.write(`${report}\n`);
    process.exit(EXIT_CANCELED);
  }
  process.stderr.write(`received ${signal}: cancelling; press Ctrl-C again to exit at once\n`);
  controller.abort(
    new AicrError("CANCELED", `cancelled by ${signal}`, { remedy: "run the command again to finish it" }),
  );
};
const EXIT_CANCELED = 9;
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

// --log-json and --debug as the one reading of argv found them (commands/_argv.ts; else AICR_LOG_JSON and
// AICR_DEBUG), for the error's report.
let logging = { json: false, debug: false };
try {
  const { runCli } = await import("./cli.ts");
  await runCli({
    signal: controller.signal,
    stdout: (text) => void process.stdout.write(text),
    logging: (flags) => {
      logging = flags;
    },
  });
  process.exitCode = controller.signal.aborted ? EXIT_CANCELED : 0;
} catch (err) {
  const json = logging.json || process.env.AICR_AGENT_MODE === "true";
  // The run's ID, when the run context was made (already loaded then): the last line is the run's too.
  const runId = await import("./run/context.ts").then(
    (m) => m.currentRunId(),
    () => undefined,
  );
  const log = createLogger({ json, debug: logging.debug, fields: runId ? { runId } : undefined });
  if (err instanceof ExitStatus) {
    log.info(err.message);
    process.exitCode = err.status;
  } else {
    report(log, err, json);
  }
}

function report(log: ReturnType<typeof createLogger>, err: unknown, json: boolean): void {
  const cancelled = controller.signal.aborted && !isAicrError(err);
  const shown = cancelled ? controller.signal.reason : err;
  // Text mode: the message already quotes the values, the remedy on its own line. JSON mode: the
  // message alone, with the code, the remedy and the structured context as fields of their own.
  if (isAicrError(shown) && json)
    log.error(errorMessage(shown), {
      ...shown.context,
      code: shown.code,
      ...(shown.remedy ? { remedy: shown.remedy } : {}),
    });
  else log.error(formatError(shown));
  if (!isAicrError(shown) && shown instanceof Error && shown.stack) log.debug(shown.stack);
  process.exitCode = exitCodeOf(shown);
}

// The command is done (a cancelled run has cleaned up and said so): sockets kept alive for reuse,
// watches still closing or a slow apiserver's answers in flight must not keep the operator waiting.
// Exit once stdout and stderr have drained.
const drained = (stream: NodeJS.WriteStream) =>
  new Promise<void>((resolve) => stream.write("", () => resolve()));
await Promise.all([drained(process.stdout), drained(process.stderr)]);
process.exit(process.exitCode ?? (controller.signal.aborted ? EXIT_CANCELED : 0));
