/** render-rbac's --dir: checked before anything is written, each failure exit 2 (issue 25, item 10). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../../../src/core/log.ts";
import { checkRbacDir, writeAgentRbac } from "../../../src/rbac/write.ts";
import { rejection, thrown } from "../../support/reject.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "aicr-rbac-dir-"));
  writeFileSync(join(dir, "file"), "x");
  symlinkSync("/proc/self", join(dir, "to-proc"));
  mkdirSync(join(dir, "ok"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("checkRbacDir", () => {
  test("an existing writable directory passes", () => {
    expect(() => checkRbacDir(join(dir, "ok"))).not.toThrow();
    expect(() => checkRbacDir(".")).not.toThrow();
  });

  const cases: [string, () => string, RegExp][] = [
    ["/proc", () => "/proc", /it is under \/proc, a kernel pseudo-filesystem/],
    ["/sys/kernel", () => "/sys/kernel", /it is under \/sys, a kernel pseudo-filesystem/],
    ["a link to /proc/self", () => join(dir, "to-proc"), /resolves to "\/proc\/.*", under \/proc/],
    ["a missing directory", () => join(dir, "missing"), /no such directory/],
    ["a file", () => join(dir, "file"), /it is not a directory/],
    ["a path through a file", () => join(dir, "file", "x"), /no such directory/],
  ];
  for (const [what, path, message] of cases)
    test(`${what}: INVALID_REQUEST naming --dir and the value`, () => {
      const e = thrown(() => checkRbacDir(path()));
      expect(e.code).toBe("INVALID_REQUEST");
      expect(e.exitCode).toBe(2);
      expect(e.message).toStartWith(`invalid --dir ${JSON.stringify(path())}: `);
      expect(e.message).toMatch(message);
      expect(e.remedy).toContain("--dir");
    });

  test.skipIf(process.getuid?.() === 0)("a directory this user may not write into", () => {
    const locked = join(dir, "locked");
    mkdirSync(locked, { mode: 0o500 });
    chmodSync(locked, 0o500);
    expect(thrown(() => checkRbacDir(locked)).message).toContain("this user may not write into it");
  });
});

test("writeAgentRbac writes nothing when --dir is refused", async () => {
  const options = {
    namespace: "ns",
    serviceAccount: "sa",
    discoverNetwork: false,
    runId: "20261129-101500-0123456789abcdef",
    json: false,
    log: createLogger({ json: false, debug: false, write: () => {} }),
    writeStdout: () => {},
  };
  const e = await rejection(writeAgentRbac({ ...options, dir: "/proc" }));
  expect(e.code).toBe("INVALID_REQUEST");
  await writeAgentRbac({ ...options, dir: join(dir, "ok") });
  expect(readdirSync(join(dir, "ok"))).toEqual(["snapshot-rbac-20261129-101500-0123456789abcdef"]);
});
