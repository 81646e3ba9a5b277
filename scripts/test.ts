/**
 * `npm test`'s last step: `bun test` as two processes at once — the conformance checks' real-control-plane
 * suites (test/validate/conformance: their time is mostly controllers' loops, HPA syncs and pod waits,
 * not CPU) beside every other file — so the whole run takes the longer of the two, not their sum.
 *
 *   bun scripts/test.ts [bun test flags]     (npm test -- --reporter=junit --reporter-outfile=f.xml)
 *
 * The main run's output streams live; the conformance run's is kept in .tmp/test-conformance.log and
 * printed after it. A --reporter-outfile gets one JUnit report: both runs' merged (counts summed, the
 * wall time the longer). The exit status is non-zero when either run failed. With a file or name
 * filter (any argument not starting with "-") it is plain `bun test <args>`: one process, as asked.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const CONFORMANCE = "test/validate/conformance";
const args = process.argv.slice(2);
const bun = process.execPath;

const run = async (argv: string[], log?: string): Promise<number> => {
  // one descriptor for both streams: their lines interleave in the log as they would on a terminal
  const fd = log ? openSync(log, "w") : undefined;
  try {
    const proc = Bun.spawn([bun, "test", ...argv], {
      cwd: ROOT,
      stdin: "ignore",
      stdout: fd ?? "inherit",
      stderr: fd ?? "inherit",
    });
    return await proc.exited;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
};

if (args.some((a) => !a.startsWith("-"))) process.exit(await run(args));

const OUTFILE = "--reporter-outfile=";
const outfile = args.find((a) => a.startsWith(OUTFILE))?.slice(OUTFILE.length);
const withReport = (suffix: string) =>
  outfile ? args.map((a) => (a.startsWith(OUTFILE) ? `${OUTFILE}${outfile}.${suffix}` : a)) : args;

mkdirSync(join(ROOT, ".tmp"), { recursive: true });
const log = join(ROOT, ".tmp/test-conformance.log");
const [main, conformance] = await Promise.all([
  // bunfig.toml's own ignore patterns are replaced by the flag's: both are given
  run([
    ...withReport("main"),
    `--path-ignore-patterns=${CONFORMANCE}/**`,
    "--path-ignore-patterns=test/fixtures/**",
  ]),
  run([...withReport("conformance"), CONFORMANCE], log),
]);
process.stdout.write(`\n--- ${CONFORMANCE} (run beside the rest; its log: .tmp/test-conformance.log) ---\n`);
process.stdout.write(readFileSync(log, "utf8"));

if (outfile) {
  const reports = ["main", "conformance"].map((s) => {
    const path = `${outfile}.${s}`;
    try {
      return readFileSync(join(ROOT, path), "utf8");
    } catch {
      return "";
    } finally {
      rmSync(join(ROOT, path), { force: true });
    }
  });
  writeFileSync(join(ROOT, outfile), mergeJunit(reports));
}
process.exit(main !== 0 ? main : conformance);

/** JUnit reports as one: the suites side by side under one <testsuites>, counts summed, the longer time. */
function mergeJunit(reports: readonly string[]): string {
  const HEAD = /<testsuites([^>]*)>/;
  const num = (attrs: string, key: string) =>
    Number(attrs.match(new RegExp(` ${key}="([0-9.]+)"`))?.[1] ?? 0);
  let [tests, assertions, failures, skipped, time] = [0, 0, 0, 0, 0];
  const bodies: string[] = [];
  for (const r of reports) {
    const head = r.match(HEAD);
    if (!head) {
      // a run that wrote no report (it crashed) counts as a failure
      failures++;
      continue;
    }
    const attrs = head[1] ?? "";
    tests += num(attrs, "tests");
    assertions += num(attrs, "assertions");
    failures += num(attrs, "failures");
    skipped += num(attrs, "skipped");
    time = Math.max(time, num(attrs, "time"));
    const start = (head.index ?? 0) + head[0].length;
    bodies.push(r.slice(start, r.lastIndexOf("</testsuites>")).replace(/^\n|\n$/g, ""));
  }
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="bun test" tests="${tests}" assertions="${assertions}" failures="${failures}" skipped="${skipped}" time="${time}">`,
    ...bodies,
    "</testsuites>",
    "",
  ].join("\n");
}
