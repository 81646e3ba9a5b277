import { afterAll, expect, test } from "bun:test";
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { archiveStatOf } from "../../src/image/sign/options.ts";
import { rewriteFile } from "../../src/image/sign/rewrite.ts";
import { rejection } from "../support/reject.ts";

const dir = mkdtempSync(join(tmpdir(), "aicr-rewrite-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const enc = (s: string) => new TextEncoder().encode(s);

test("the new content replaces the old, with the original's permission bits and no temp file left", async () => {
  const path = join(dir, "a.tar");
  writeFileSync(path, "old");
  chmodSync(path, 0o640);
  await rewriteFile(path, enc("new content"), archiveStatOf(path));
  expect(readFileSync(path, "utf8")).toBe("new content");
  expect(statSync(path).mode & 0o777).toBe(0o640);
  expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
});

test("a file changed, removed or replaced by a symlink since it was read is left alone (CONFLICT)", async () => {
  const path = join(dir, "b.tar");
  writeFileSync(path, "read once");
  let before = archiveStatOf(path);
  writeFileSync(path, "written by someone else");
  expect((await rejection(rewriteFile(path, enc("signed"), before))).code).toBe("CONFLICT");
  expect(readFileSync(path, "utf8")).toBe("written by someone else");

  before = archiveStatOf(path);
  utimesSync(path, new Date(1000), new Date(1000)); // same size, touched
  expect((await rejection(rewriteFile(path, enc("signed"), before))).message).toContain("was changed");

  before = archiveStatOf(path);
  unlinkSync(path);
  symlinkSync(join(dir, "elsewhere"), path);
  expect((await rejection(rewriteFile(path, enc("signed"), before))).message).toContain(
    "replaced by a symlink",
  );
  unlinkSync(path);
  expect((await rejection(rewriteFile(path, enc("signed"), before))).message).toContain("was removed");
  expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
});

test("archiveStatOf refuses a symlink and what is not a regular file, naming it", () => {
  const target = join(dir, "c.tar");
  writeFileSync(target, "x");
  const link = join(dir, "c-link.tar");
  symlinkSync(target, link);
  expect(() => archiveStatOf(link)).toThrow("a symlink; aicr image sign rewrites the archive");
  expect(() => archiveStatOf(dir)).toThrow("a directory, not a regular file");
  expect(() => archiveStatOf(join(dir, "none.tar"))).toThrow("no such file");
});
