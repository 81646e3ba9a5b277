import { afterEach, beforeEach, expect, test } from "bun:test";
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeNewDirectory } from "../../../src/core/files.ts";
import { rejection } from "../../support/reject.ts";

let parent: string;
beforeEach(async () => {
  parent = await mkdtemp(join(tmpdir(), "aicr-files-"));
});
afterEach(async () => {
  await rm(parent, { recursive: true, force: true });
});

const files = [
  { file: "a.yaml", content: "a: 1\n" },
  { file: "b.yaml", content: "b: 2\n" },
];

test("writes a new 0700 directory with 0600 files whatever the umask", async () => {
  const old = process.umask(0o000);
  try {
    const dir = await writeNewDirectory(parent, "out", { files });
    expect((await lstat(dir)).mode & 0o777).toBe(0o700);
    for (const f of files) {
      expect((await lstat(join(dir, f.file))).mode & 0o777).toBe(0o600);
      expect(await readFile(join(dir, f.file), "utf8")).toBe(f.content);
    }
  } finally {
    process.umask(old);
  }
});

test("an existing directory is a CONFLICT and nothing is written into it", async () => {
  await mkdir(join(parent, "out"));
  const err = await rejection(writeNewDirectory(parent, "out", { files }));
  expect(err.code).toBe("CONFLICT");
  expect(await readdir(join(parent, "out"))).toEqual([]);
});

test("a symlink at the target is never followed, even a dangling one", async () => {
  const elsewhere = join(parent, "elsewhere");
  await mkdir(elsewhere);
  await symlink(elsewhere, join(parent, "out"));
  await symlink(join(parent, "missing"), join(parent, "dangling"));
  for (const name of ["out", "dangling"]) {
    const err = await rejection(writeNewDirectory(parent, name, { files }));
    expect(err.code).toBe("CONFLICT");
    expect(err.message).toContain("symlink");
  }
  expect(await readdir(elsewhere)).toEqual([]);
  expect((await readdir(parent)).sort()).toEqual(["dangling", "elsewhere", "out"]);
});

test("a missing parent is INVALID_REQUEST naming the path", async () => {
  const err = await rejection(writeNewDirectory(join(parent, "nope"), "out", { files }));
  expect(err.code).toBe("INVALID_REQUEST");
  expect(err.message).toContain(join(parent, "nope"));
});

test("a failed write removes the partial directory", async () => {
  const err = await rejection(
    writeNewDirectory(parent, "out", { files: [files[0]!, { file: "../escape/x", content: "" }] }),
  );
  expect(err.code).toBe("INTERNAL");
  expect(await readdir(parent)).toEqual([]);
});
