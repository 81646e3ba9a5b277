/**
 * Issue 15: a `-o <file>` that cannot be written is refused with exit 2 before the first request —
 * never after the Job ran and the snapshot was collected only to be thrown away.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { requestsSince } from "../support/requests.ts";
import { AGENT_IMAGE, runSnapshot, snapshotCluster, TEST_MS } from "./_harness.ts";

const NS = "output-destination";
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "aicr-output-"));
  mkdirSync(join(dir, "a-directory"));
  writeFileSync(join(dir, "real.yaml"), "keep\n");
  symlinkSync(join(dir, "real.yaml"), join(dir, "link-to-file.yaml"));
  symlinkSync(join(dir, "nowhere.yaml"), join(dir, "dangling.yaml"));
  mkdirSync(join(dir, "read-only"));
  chmodSync(join(dir, "read-only"), 0o555);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const isRoot = process.getuid?.() === 0;

/** [what, the -o value (a function: the directory is made in beforeAll), texts the error must contain] */
const CASES: [string, () => string, string[], boolean?][] = [
  [
    "a missing parent directory",
    () => join(dir, "missing", "x.yaml"),
    ['/missing" does not exist', "remedy: create it first (mkdir -p "],
  ],
  ["a directory", () => join(dir, "a-directory"), ["it is a directory", "give --output a file name"]],
  [
    "a symlink to a file",
    () => join(dir, "link-to-file.yaml"),
    ["it is a symlink", "remove the link or choose another path"],
  ],
  [
    "a dangling symlink",
    () => join(dir, "dangling.yaml"),
    ["it is a symlink", "remove the link or choose another path"],
  ],
  [
    "a file under /proc",
    () => "/proc/x.yaml",
    ["under /proc, a kernel pseudo-filesystem", "choose a path on a regular filesystem"],
  ],
  [
    "a file under /sys",
    () => "/sys/x.yaml",
    ["under /sys, a kernel pseudo-filesystem", "choose a path on a regular filesystem"],
  ],
  [
    "an unwritable parent (skipped as root: root may write anywhere)",
    () => join(dir, "read-only", "x.yaml"),
    ["is not writable", "permissions"],
    isRoot,
  ],
];

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: snapshotCluster });
    let admin: string;
    beforeAll(() => {
      admin = cluster().kubeconfigFor("admin");
    });

    for (const [what, output, texts, skip] of CASES) {
      test.skipIf(Boolean(skip))(
        `-o ${what}: exit 2 naming --output and the value, no request at all`,
        async () => {
          const value = output();
          const before = cluster().log.entries.length;
          const r = await runSnapshot(admin, ["-n", NS, "--image", AGENT_IMAGE, "-o", value]);
          expect(r.code, r.stderr).toBe(2);
          expect(r.stderr).toContain(`[INVALID_REQUEST] invalid --output ${JSON.stringify(value)}`);
          for (const text of texts) expect(r.stderr).toContain(text);
          expect(r.stdout).toBe("");
          expect(requestsSince(cluster(), before)).toEqual([]);
        },
        TEST_MS,
      );
    }

    test(
      "nothing was written through a link or into the directory",
      () => {
        expect(readFileSync(join(dir, "real.yaml"), "utf8")).toBe("keep\n");
        expect(() => readFileSync(join(dir, "nowhere.yaml"))).toThrow();
      },
      TEST_MS,
    );
  });
