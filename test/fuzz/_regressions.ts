/**
 * regressions.json: every input that once broke a property, replayed on every run (regressions.test.ts),
 * and the known failures — inputs that break a property today because of work in progress elsewhere,
 * each naming its issue; the suites report them as test.todo instead of running them, so the suite is
 * green while the fix is pending. Delete a `known` entry (or a case's `known`) once it is fixed.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Property } from "./_harness.ts";

export interface KnownFailure {
  /** The test's id: `file: <command> <flag> ← <kind>`, or a property's name in the in-process suite. */
  id: string;
  property: Property | string;
  /** Why, and whose fix it waits for. */
  issue: string;
}

export interface RegressionCase {
  id: string;
  /**
   * The command line; placeholders: `$KUBECONFIG` (the worker's kubeconfig), `$SERVER` (the counting
   * server's host:port), `$FILE:<name>` (files[name], written to the workspace), `$INPUT:<kind>`
   * (a hostile file of that kind), `$FIXTURE:<name>` (_file-flags.ts FIXTURES). A file's text may
   * hold the same placeholders, `$FILE:` excepted.
   */
  argv: string[];
  files?: Record<string, string>;
  env?: Record<string, string>;
  /** stdin: text, or a placeholder naming a file to open (`$INPUT:directory`). */
  stdin?: string;
  /** What the run must also do now, beyond the properties (a fixed finding's exit and message). */
  expect?: { code?: number; stderr?: string };
  /** The property it broke (or "expectation": it did the wrong thing within the contract), and how. */
  broke: Property | "expectation";
  detail: string;
  found: string;
  /** The commit that fixed it, when fixed. */
  fixed?: string;
  /** Still failing: why, and whose fix it waits for (the case is a test.todo until this is removed). */
  known?: string;
}

export interface Regressions {
  known: KnownFailure[];
  cases: RegressionCase[];
}

export const REGRESSIONS_FILE = join(import.meta.dir, "regressions.json");

export const loadRegressions = (): Regressions =>
  JSON.parse(readFileSync(REGRESSIONS_FILE, "utf8")) as Regressions;

/**
 * AICR_FUZZ_KNOWN=run runs the known failures as ordinary tests (to see which a fix has mended,
 * before its mark is removed from regressions.json).
 */
export const RUN_KNOWN = process.env.AICR_FUZZ_KNOWN === "run";

/** The known failure for a test id, if it is one (never, with AICR_FUZZ_KNOWN=run). */
export function knownFailure(regressions: Regressions, id: string): KnownFailure | undefined {
  return RUN_KNOWN ? undefined : regressions.known.find((k) => k.id === id);
}
