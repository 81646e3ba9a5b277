import { expect, test } from "bun:test";
import { createLogger } from "../../../src/core/log.ts";

function capture(options: Parameters<typeof createLogger>[0]): {
  log: ReturnType<typeof createLogger>;
  lines: string[];
} {
  const lines: string[] = [];
  return { log: createLogger({ ...options, color: false, write: (l) => void lines.push(l) }), lines };
}

test("JSON mode: every line carries the context fields, after msg; a line's own fields follow", () => {
  const { log, lines } = capture({ json: true, fields: { runId: "r-1" } });
  log.info("hello", { n: 1 });
  log.error("boom", { code: "SERVICE_UNAVAILABLE", remedy: "retry", token: "x" });
  const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(records.map((r) => Object.keys(r))).toEqual([
    ["time", "level", "msg", "runId", "n"],
    ["time", "level", "msg", "runId", "code", "remedy", "token"],
  ]);
  expect(records[1]).toMatchObject({ level: "error", msg: "boom", runId: "r-1", token: "[redacted]" });
});

test("text mode never renders the context fields; a line's own field equal to one is dropped too", () => {
  const { log, lines } = capture({ fields: { runId: "r-1" } });
  log.info("plain", { n: 1 });
  // A relayed agent line carries its run's ID, the same run's: nothing to add in text.
  log.info("[agent] collected", { runId: "r-1", node: "a" });
  log.info("[agent] other", { runId: "r-2" });
  expect(lines).toEqual(["plain n=1\n", "[agent] collected node=a\n", "[agent] other runId=r-2\n"]);
});

test("text mode: a message or field holding terminal controls prints them escaped, line feeds kept", () => {
  const { log, lines } = capture({});
  log.error("value \x1b]0;pwned\x07\x1b[2J from cm\n  remedy: none \u009b31m \u202eevil", {
    node: "n\x1b[1m",
    reason: "a b\u009b",
  });
  const [line] = lines;
  expect(line).toBe(
    'ERROR value \\u001b]0;pwned\\u0007\\u001b[2J from cm\n  remedy: none \\u009b31m \\u202eevil node=n\\u001b[1m reason="a b\\u009b"\n',
  );
  // a backslash is not doubled: a message a report already escaped is not escaped twice
  log.info("C:\\path \\u001b");
  expect(lines[1]).toBe("C:\\path \\u001b\n");
});
