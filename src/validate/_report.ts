/** Validation results and their three renderings: CTRF JSON, JUnit XML, a terminal table. Pure. */
import { visible } from "../core/terminal.ts";

export type CheckStatus = "passed" | "failed" | "skipped" | "other";

export interface CheckResult {
  /** `readiness` for recipe constraints, else the validation phase. */
  suite: string;
  name: string;
  status: CheckStatus;
  durationMs: number;
  message?: string | undefined;
  /** A readiness constraint's expression as written in the recipe. */
  expected?: string | undefined;
  /** A readiness constraint's reading in the snapshot; absent when the snapshot has none. */
  actual?: string | undefined;
  /** The validator's output lines (truncated). */
  stdout: string[];
  /** The check ran out of time (the run then exits TIMEOUT); not rendered. */
  timedOut?: boolean | undefined;
}

export interface ReportInput {
  version: string;
  /** Epoch milliseconds. */
  start: number;
  stop: number;
  results: readonly CheckResult[];
}

/** Exit-code contract of a validator container: 0 passed, 1 failed, 2 skipped, anything else other. */
export function statusOfExitCode(code: number | undefined): CheckStatus {
  if (code === 0) return "passed";
  if (code === 1) return "failed";
  if (code === 2) return "skipped";
  return "other";
}

/** How many results have each check status, and how many there are: every report's summary. */
export function countByStatus(
  results: readonly CheckResult[],
): Record<CheckStatus, number> & { tests: number } {
  const count = (s: CheckStatus) => results.filter((r) => r.status === s).length;
  return {
    tests: results.length,
    passed: count("passed"),
    failed: count("failed"),
    skipped: count("skipped"),
    other: count("other"),
  };
}

export function buildCtrf(input: ReportInput): Record<string, unknown> {
  const s = countByStatus(input.results);
  return {
    reportFormat: "CTRF",
    specVersion: "0.0.0",
    timestamp: new Date(input.stop).toISOString(),
    generatedBy: "aicr",
    results: {
      tool: { name: "aicr", version: input.version },
      summary: { ...s, pending: 0, start: input.start, stop: input.stop },
      tests: input.results.map((r) => ({
        name: r.name,
        status: r.status,
        duration: r.durationMs,
        suite: [r.suite],
        ...(r.message ? { message: r.message } : {}),
        stdout: r.stdout,
        ...(r.expected !== undefined
          ? { extra: { expected: r.expected, ...(r.actual !== undefined ? { actual: r.actual } : {}) } }
          : {}),
      })),
    },
  };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: XML 1.0 forbids these characters
const XML_FORBIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff\ud800-\udfff]/gu;

/**
 * Text as XML 1.0 character data or an attribute value: the markup characters as entities, and each
 * character XML 1.0 forbids (the C0 controls but tab, LF and CR; U+FFFE, U+FFFF; a lone surrogate)
 * written as `\uXXXX`, core/terminal.ts's notation (ESC: `\u001b`): the document stays well-formed
 * and its reader still sees that something was there. Every other character (DEL, C1) is allowed as is.
 */
const xmlEscape = (s: string): string =>
  s
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(XML_FORBIDDEN, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

const seconds = (ms: number): string => (ms / 1000).toFixed(3);

function testcase(r: CheckResult): string {
  const attrs = `name="${xmlEscape(r.name)}" classname="${xmlEscape(r.suite)}" time="${seconds(r.durationMs)}"`;
  const msg = xmlEscape(r.message ?? "");
  const inner = [
    r.status === "failed" ? `      <failure message="${msg}"/>` : "",
    r.status === "other" ? `      <error message="${msg}"/>` : "",
    r.status === "skipped" ? `      <skipped message="${msg}"/>` : "",
    r.stdout.length > 0 ? `      <system-out>${xmlEscape(r.stdout.join("\n"))}</system-out>` : "",
  ].filter(Boolean);
  return inner.length === 0
    ? `    <testcase ${attrs}/>`
    : `    <testcase ${attrs}>\n${inner.join("\n")}\n    </testcase>`;
}

export function buildJunit(input: ReportInput): string {
  const suites = [...new Set(input.results.map((r) => r.suite))];
  const all = countByStatus(input.results);
  const body = suites.map((suite) => {
    const rs = input.results.filter((r) => r.suite === suite);
    const s = countByStatus(rs);
    const time = rs.reduce((t, r) => t + r.durationMs, 0);
    return [
      `  <testsuite name="${xmlEscape(suite)}" tests="${s.tests}" failures="${s.failed}" errors="${s.other}" skipped="${s.skipped}" time="${seconds(time)}">`,
      ...rs.map(testcase),
      "  </testsuite>",
    ].join("\n");
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="aicr validate" tests="${all.tests}" failures="${all.failed}" errors="${all.other}" skipped="${all.skipped}" time="${seconds(input.stop - input.start)}">`,
    ...body,
    "</testsuites>",
    "",
  ].join("\n");
}

/**
 * Phase, check, status, duration, message — aligned columns for a terminal. The message shows its
 * first line; every cell is made visible (core/terminal.ts): a reading's escape codes are shown, not obeyed.
 */
export function buildTable(results: readonly CheckResult[]): string {
  const rows = [
    ["PHASE", "CHECK", "STATUS", "DURATION", "MESSAGE"],
    ...results.map((r) => [
      visible(r.suite),
      visible(r.name),
      r.status,
      `${seconds(r.durationMs)}s`,
      visible((r.message ?? "").split("\n")[0] ?? ""),
    ]),
  ];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((row) => (row[i] ?? "").length)));
  const lines = rows.map((row) =>
    row
      .map((cell, i) => (i < 4 ? cell.padEnd(widths[i] ?? 0) : cell))
      .join("  ")
      .trimEnd(),
  );
  const s = countByStatus(results);
  lines.push(
    "",
    `${s.tests} checks: ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped, ${s.other} other`,
  );
  return `${lines.join("\n")}\n`;
}
