/**
 * An isolated check in its pod: the context built from the Job's environment (its namespace, image,
 * labels, time limit), its evidence written to stdout as it goes, its verdict returned.
 */
import { delay } from "../../core/async.ts";
import { AicrError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import type { KubeClient } from "../../kube/client.ts";
import { nameWithRunId } from "../../run/names.ts";
import type { Snapshot } from "../../snapshot/schema.ts";
import { VALIDATOR_ENV, type ValidatorEntry } from "../_catalog.ts";
import { boundedGet } from "../checks/_http.ts";
import { type CheckContext, evidenceBlock, type ProbePlacement } from "../checks/context.ts";
import { CHECK_RUNS } from "../checks/registry.ts";
import type { Recipe } from "../recipe.ts";
import type { Verdict } from "./_checks.ts";

type Env = Readonly<Record<string, string | undefined>>;

function needed(env: Env, key: string): string {
  const value = env[key];
  if (!value)
    throw new AicrError("INVALID_REQUEST", `validator mode needs the environment variable ${key}`, {
      remedy: "run validators only through aicr validate, which sets their environment",
    });
  return value;
}

function json<T>(env: Env, key: string, fallback: T): T {
  const text = env[key];
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new AicrError("INVALID_REQUEST", `${key} is not valid JSON`, {
      remedy: "run validators only through aicr validate, which sets their environment",
    });
  }
}

function positive(env: Env, key: string, fallback: number): number {
  const text = env[key];
  if (text === undefined || text === "") return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0)
    throw new AicrError("INVALID_REQUEST", `${key}=${JSON.stringify(text)} is not a positive number`, {
      remedy: "run validators only through aicr validate, which sets their environment",
    });
  return n;
}

export interface IsolatedIo {
  client: KubeClient;
  env: Env;
  signal: AbortSignal;
  log: Logger;
  recipe: Recipe;
  snapshot: Snapshot;
  writeStdout: (text: string) => void;
  now?: () => number;
}

/** Builds the check's context from its pod's environment and runs it within its time limit. */
export async function runIsolatedCheck(entry: ValidatorEntry, io: IsolatedIo): Promise<Verdict> {
  const load = CHECK_RUNS[entry.name];
  if (!load)
    throw new AicrError(
      "INTERNAL",
      `check ${entry.name} is in the catalog but this build has no code for it`,
    );
  const { env } = io;
  const runId = needed(env, "AICR_RUN_ID");
  const timeoutMs = positive(env, VALIDATOR_ENV.checkTimeoutMs, entry.timeoutMs);
  const scale = positive(env, VALIDATOR_ENV.waitScale, 1);
  const signal = AbortSignal.any([io.signal, AbortSignal.timeout(timeoutMs)]);
  const ctx: CheckContext = {
    client: io.client,
    recipe: io.recipe,
    snapshot: io.snapshot,
    namespace: needed(env, VALIDATOR_ENV.namespace),
    testNamespace: needed(env, VALIDATOR_ENV.testNamespace),
    runId,
    name: (base) => nameWithRunId(base, runId),
    labels: json<Record<string, string>>(env, VALIDATOR_ENV.labels, {}),
    image: needed(env, VALIDATOR_ENV.probeImage),
    ncclImage: env[VALIDATOR_ENV.ncclImage] || undefined,
    placement: json<ProbePlacement>(env, VALIDATOR_ENV.probePlacement, {}),
    signal,
    evidence: (label, data, equivalent) => io.writeStdout(evidenceBlock(label, data, equivalent)),
    log: io.log,
    now: io.now ?? (() => Date.now()),
    waitMs: (ms) => Math.max(1, Math.round(ms * scale)),
    sleep: (ms) => delay(ms, signal),
    httpGet: (url) => boundedGet(url, signal),
  };
  const run = await load();
  try {
    return await run(ctx);
  } catch (err) {
    // The check's own time limit: a verdict naming it, not a crash.
    if (signal.aborted && !io.signal.aborted)
      return {
        status: "failed",
        message: `[TIMEOUT] check ${entry.name} did not finish within ${Math.round(timeoutMs / 1000)}s`,
        details: [],
      };
    throw err;
  }
}
