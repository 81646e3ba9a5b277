/**
 * `npm test`'s last step: `bun test` as two processes at once — suites whose time is mostly waiting
 * (BESIDE: the conformance checks' real control planes, on controllers' loops, HPA syncs and pod waits;
 * cleanup-legacy's; a silent apiserver's timeouts) beside every other file — so the whole run takes
 * about the longer of the two, not their sum.
 *
 *   bun scripts/test.ts [bun test flags]     (npm test -- --reporter=junit --reporter-outfile=f.xml)
 *
 * The main run's output streams live; the other's is kept in .tmp/test-beside.log and
 * printed after it. A --reporter-outfile gets one JUnit report: both runs' merged (counts summed, the
 * wall time the longer). The exit status is non-zero when either run failed. With a file or name
 * filter (any argument not starting with "-") it is plain `bun test <args>`: one process, as asked.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
/** Run beside the rest: folders (every test file below) and files. */
const BESIDE = ["test/validate/conformance/", "test/legacy/", "test/e2e/silent-apiserver.test.ts"];
const given = process.argv.slice(2);
/**
 * Headroom for tests that spawn the binary and start servers on a loaded 2-core machine (bun's own
 * default is 5 s, and bun does not read a timeout from bunfig.toml); a --timeout given wins.
 */
const args = given.some((a) => a.startsWith("--timeout")) ? given : ["--timeout=60000", ...given];
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
const log = join(ROOT, ".tmp/test-beside.log");
const ignore = BESIDE.map((p) => `--path-ignore-patterns=${p.endsWith("/") ? `${p}**` : p}`);
const [main, beside] = await Promise.all([
  // bunfig.toml's own ignore patterns are replaced by the flag's: both are given
  run([...withReport("main"), ...ignore, "--path-ignore-patterns=test/fixtures/**"]),
  run([...withReport("beside"), ...BESIDE.map((p) => `./${p}`)], log),
]);
process.stdout.write(`\n--- run beside the rest: ${BESIDE.join(", ")} (its log: .tmp/test-beside.log) ---\n`);
process.stdout.write(readFileSync(log, "utf8"));

if (outfile) {
  const reports = ["main", "beside"].map((s) => {
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
process.exit(main !== 0 ? main : beside);

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
