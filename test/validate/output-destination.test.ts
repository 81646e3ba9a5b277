/**
 * Issue 15: `aicr validate -o <file>` and `--junit <file>` that cannot be written are refused with
 * exit 2 before the first request — not after the capture and the checks ran.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { requestsSince } from "../support/requests.ts";
import { LONG, SAMPLE_RECIPE, validate, validationCluster } from "./_harness.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "aicr-validate-output-"));
  mkdirSync(join(dir, "a-directory"));
  symlinkSync(join(dir, "nowhere.xml"), join(dir, "dangling.xml"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** [what, flag, the value (made in beforeAll), a text naming the cause] */
const CASES: [string, "-o" | "--junit", () => string, string][] = [
  ["-o under a missing parent", "-o", () => join(dir, "missing", "r.json"), "does not exist"],
  ["-o a directory", "-o", () => join(dir, "a-directory"), "it is a directory"],
  ["--junit a dangling symlink", "--junit", () => join(dir, "dangling.xml"), "it is a symlink"],
  ["--junit under /proc", "--junit", () => "/proc/junit.xml", "under /proc"],
];

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { hookMs: LONG, start: validationCluster });

    for (const [what, flag, value, cause] of CASES)
      test(
        `${what}: exit 2 naming the flag and the value, no request at all`,
        async () => {
          const v = value();
          const before = cluster().log.entries.length;
          const r = await validate(cluster(), ["-r", SAMPLE_RECIPE, flag, v]);
          const named = flag === "-o" ? "--output" : "--junit";
          expect(r.code, r.stderr).toBe(2);
          expect(r.stderr).toContain(`[INVALID_REQUEST] invalid ${named} ${JSON.stringify(v)}`);
          expect(r.stderr).toContain(cause);
          expect(r.stdout).toBe("");
          expect(requestsSince(cluster(), before)).toEqual([]);
        },
        LONG,
      );
  });
