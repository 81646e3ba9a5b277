/** checkFileDestination: every reason a file destination cannot be written, found before the first request. */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkFileDestination, writeFileAtomic } from "../../../src/core/files.ts";
import { checkDestination, parseDestination } from "../../../src/snapshot/deliver.ts";
import { rejection, thrown } from "../../support/reject.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "aicr-dest-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** INVALID_REQUEST naming the flag and the value; returns message and remedy for the case's own text. */
function refused(path: string, flag = "--output"): { message: string; remedy: string } {
  const err = thrown(() => checkFileDestination(path, flag));
  expect(err.code).toBe("INVALID_REQUEST");
  expect(err.message).toContain(`invalid ${flag} ${JSON.stringify(path)}`);
  expect(err.context).toEqual({ field: flag, value: path });
  return { message: err.message, remedy: err.remedy ?? "" };
}

describe("checkFileDestination", () => {
  test("a new file in an existing writable directory passes", () => {
    expect(() => checkFileDestination(join(dir, "snap.yaml"), "--output")).not.toThrow();
  });

  test("an existing regular file passes (it is replaced atomically)", async () => {
    await writeFile(join(dir, "old.yaml"), "x");
    expect(() => checkFileDestination(join(dir, "old.yaml"), "--output")).not.toThrow();
  });

  test("a relative path is checked against the working directory", () => {
    expect(() => checkFileDestination("snap.yaml", "--output")).not.toThrow();
    expect(refused("no-such-dir-aicr/snap.yaml").remedy).toContain("create it first");
  });

  test("a missing parent: create it", () => {
    const r = refused(join(dir, "missing", "deeper", "x.yaml"));
    expect(r.message).toContain("does not exist");
    expect(r.remedy).toContain(`mkdir -p ${JSON.stringify(join(dir, "missing", "deeper"))}`);
  });

  test("a parent that is a file: not a directory", async () => {
    await writeFile(join(dir, "file"), "x");
    const r = refused(join(dir, "file", "x.yaml"));
    expect(r.message).toContain("is not a directory");
    expect(r.remedy).not.toContain("mkdir");
  });

  test("a directory: give a file name", async () => {
    await mkdir(join(dir, "out"));
    const r = refused(join(dir, "out"));
    expect(r.message).toContain("it is a directory");
    expect(r.remedy).toContain("file name");
    expect(refused(`${dir}/`).message).toContain("it is a directory");
  });

  test("a symlink to a file and a dangling symlink: never followed", async () => {
    await writeFile(join(dir, "real.yaml"), "keep");
    await symlink(join(dir, "real.yaml"), join(dir, "link.yaml"));
    await symlink(join(dir, "nowhere.yaml"), join(dir, "dangling.yaml"));
    for (const name of ["link.yaml", "dangling.yaml"]) {
      const r = refused(join(dir, name));
      expect(r.message).toContain("it is a symlink");
      expect(r.remedy).toContain("remove the link or choose another path");
    }
    expect(await readFile(join(dir, "real.yaml"), "utf8")).toBe("keep");
  });

  test("a special file (a device): not a regular file", () => {
    const r = refused("/dev/null");
    expect(r.message).toContain("a device, not a regular file");
  });

  test("/proc and /sys, even where the parent is missing: a regular filesystem, not 'create it'", () => {
    for (const path of ["/proc/x.yaml", "/proc/nope/x.yaml", "/sys/x.yaml", "/proc"]) {
      const r = refused(path);
      expect(r.message).toMatch(/under \/(proc|sys), a kernel pseudo-filesystem/);
      expect(r.remedy).toContain("regular filesystem");
      expect(r.remedy).not.toContain("create");
    }
  });

  test("a parent that is a link into /proc is caught by its real path", async () => {
    await symlink("/proc/self", join(dir, "p"));
    const r = refused(join(dir, "p", "x.yaml"));
    expect(r.message).toContain("resolves to");
    expect(r.message).toContain("under /proc");
    expect(r.remedy).toContain("regular filesystem");
  });

  test.skipIf(process.getuid?.() === 0)(
    "an unwritable parent: permissions (skipped as root: root may write anywhere)",
    async () => {
      const ro = join(dir, "ro");
      await mkdir(ro);
      chmodSync(ro, 0o555);
      try {
        const r = refused(join(ro, "x.yaml"));
        expect(r.message).toContain("is not writable");
        expect(r.remedy).toContain("permissions");
      } finally {
        chmodSync(ro, 0o755);
      }
    },
  );

  test("the flag named is the caller's (--junit)", async () => {
    await mkdir(join(dir, "out"));
    refused(join(dir, "out"), "--junit");
  });
});

describe("checkDestination (snapshot -o)", () => {
  test("stdout and cm:// are not files: nothing to check", () => {
    for (const o of [undefined, "-", "stdout", "cm://ns/snap"])
      expect(() => checkDestination(parseDestination(o))).not.toThrow();
  });

  test("a file destination is checked under --output", () => {
    const err = thrown(() => checkDestination(parseDestination(join(dir, "missing", "x.yaml"))));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.context).toMatchObject({ field: "--output" });
  });
});

describe("writeFileAtomic checks again at the write", () => {
  test("writes a new file and replaces a regular one", async () => {
    const path = join(dir, "x.yaml");
    await writeFileAtomic(path, "one\n", { flag: "--output" });
    await writeFileAtomic(path, "two\n", { flag: "--output" });
    expect(await readFile(path, "utf8")).toBe("two\n");
  });

  test("a parent removed since the pre-flight: the fitting remedy, nothing written", async () => {
    const err = await rejection(writeFileAtomic(join(dir, "gone", "x.yaml"), "x", { flag: "--output" }));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.remedy).toContain("create it first");
  });

  test("a symlink made since the pre-flight is refused; its target untouched", async () => {
    await writeFile(join(dir, "real.yaml"), "keep");
    await symlink(join(dir, "real.yaml"), join(dir, "link.yaml"));
    const err = await rejection(writeFileAtomic(join(dir, "link.yaml"), "x", { flag: "--output" }));
    expect(err.message).toContain("symlink");
    expect(await readFile(join(dir, "real.yaml"), "utf8")).toBe("keep");
  });
});
