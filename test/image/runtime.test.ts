/**
 * scripts/image/runtime.ts as a program: `closure` (the runtime layer's entries from a package's
 * files) and `check` (a binary against the declared set), given files this test writes.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TarEntry, writeTar } from "../../src/image/_tar.ts";
import { fakeElf } from "./_elf.ts";

const SCRIPT = join(import.meta.dir, "../../scripts/image/runtime.ts");
const dir = mkdtempSync(join(tmpdir(), "aicr-runtime-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function script(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = Bun.spawnSync([process.execPath, SCRIPT, ...args], { stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** A file of these bytes in the scratch directory. */
function write(data: Uint8Array): string {
  const file = join(dir, `f${files++}`);
  writeFileSync(file, data);
  return file;
}

type Listed =
  | { type: "file" | "dir"; path: string; mode: number }
  | { type: "symlink"; path: string; target: string };

/** The closure's entries (file data left out); a refusal throws its stderr line. */
function runtimeEntries(members: TarEntry[], arch: "amd64" | "arm64"): Listed[] {
  const r = script(["closure", arch, write(writeTar(members))]);
  if (r.code !== 0) throw new Error(r.stderr.trim());
  return JSON.parse(r.stdout);
}

/** The check's outcome: exit 0 and silent, or its stderr line thrown. */
function checkBinaryNeeds(binary: Uint8Array, arch: "amd64" | "arm64", name: string): void {
  const r = script(["check", arch, write(binary), name]);
  if (r.code !== 0 || r.stderr !== "") throw new Error(r.stderr.trim() || `exit ${r.code}`);
}

const lib = (path: string, needed: string[], machine: "x86_64" | "aarch64" = "x86_64"): TarEntry => ({
  path,
  type: "file",
  mode: 0o644,
  data: fakeElf({ machine, needed, soname: path.split("/").pop() }),
});
const link = (path: string, target: string): TarEntry => ({ path, type: "symlink", target });

const AMD = "lib/x86_64-linux-gnu";
const amd64Package = (): TarEntry[] => [
  lib(`${AMD}/ld-linux-x86-64.so.2`, []),
  lib(`${AMD}/libc.so.6`, ["ld-linux-x86-64.so.2"]),
  lib(`${AMD}/libm.so.6`, ["libc.so.6", "ld-linux-x86-64.so.2"]),
  lib(`${AMD}/libdl.so.2`, ["libc.so.6"]),
  lib(`${AMD}/libpthread.so.0`, ["libc.so.6"]),
  lib(`${AMD}/libnss_files.so.2`, ["libc.so.6"]),
  link("lib64/ld-linux-x86-64.so.2", `/${AMD}/ld-linux-x86-64.so.2`),
];

test("the closure of the declared set: loader symlink and target, the four libraries, /tmp; nothing else", () => {
  const entries = runtimeEntries(amd64Package(), "amd64");
  expect(entries.map((e) => (e.type === "symlink" ? `${e.path} -> ${e.target}` : e.path)).sort()).toEqual([
    `${AMD}/ld-linux-x86-64.so.2`,
    `${AMD}/libc.so.6`,
    `${AMD}/libdl.so.2`,
    `${AMD}/libm.so.6`,
    `${AMD}/libpthread.so.0`,
    `lib64/ld-linux-x86-64.so.2 -> /${AMD}/ld-linux-x86-64.so.2`,
    "tmp",
  ]);
  expect(entries.find((e) => e.path === "tmp")).toEqual({ type: "dir", path: "tmp", mode: 0o1777 });
});

test("follows a relative loader symlink (arm64) and a library's own DT_NEEDED", () => {
  const ARM = "lib/aarch64-linux-gnu";
  const arm = (p: string, n: string[]) => lib(p, n, "aarch64");
  const entries = runtimeEntries(
    [
      arm(`${ARM}/ld-linux-aarch64.so.1`, []),
      arm(`${ARM}/libc.so.6`, ["ld-linux-aarch64.so.1"]),
      arm(`${ARM}/libm.so.6`, ["libc.so.6", "libextra.so.1"]),
      arm(`${ARM}/libextra.so.1`, []),
      arm(`${ARM}/libdl.so.2`, []),
      arm(`${ARM}/libpthread.so.0`, []),
      link("lib/ld-linux-aarch64.so.1", "aarch64-linux-gnu/ld-linux-aarch64.so.1"),
    ],
    "arm64",
  );
  expect(entries.map((e) => e.path)).toContain(`${ARM}/libextra.so.1`);
  expect(entries.map((e) => e.path)).toContain("lib/ld-linux-aarch64.so.1");
  expect(entries.map((e) => e.path)).toContain(`${ARM}/ld-linux-aarch64.so.1`);
});

test("refuses a package that lacks a needed library or holds another machine's", () => {
  const missing = amd64Package().filter((m) => !m.path.endsWith("libdl.so.2"));
  expect(() => runtimeEntries(missing, "amd64")).toThrow(`libc6 (amd64) has no ${AMD}/libdl.so.2`);
  const wrong = amd64Package().map((m) => (m.path.endsWith("libm.so.6") ? lib(m.path, [], "aarch64") : m));
  expect(() => runtimeEntries(wrong, "amd64")).toThrow("is for aarch64");
});

test("a binary must need exactly the declared set", () => {
  const needs = ["libc.so.6", "ld-linux-x86-64.so.2", "libpthread.so.0", "libdl.so.2", "libm.so.6"];
  const binary = (needed: string[], interpreter = "/lib64/ld-linux-x86-64.so.2") =>
    fakeElf({ machine: "x86_64", interpreter, needed });
  expect(() => checkBinaryNeeds(binary(needs), "amd64", "aicr")).not.toThrow();
  expect(() => checkBinaryNeeds(binary([...needs, "libstdc++.so.6"]), "amd64", "aicr")).toThrow(
    "update DECLARED_LIBS",
  );
  expect(() => checkBinaryNeeds(binary(needs, "/lib/ld-musl-x86_64.so.1"), "amd64", "aicr")).toThrow(
    "PT_INTERP",
  );
  expect(() => checkBinaryNeeds(binary(needs), "arm64", "aicr")).toThrow("machine x86_64");
});

const CONTROL = `Package: libc6
Source: glibc
Version: 2.36-9+deb12u14
Architecture: amd64
Maintainer: GNU Libc Maintainers <debian-glibc@lists.debian.org>
Installed-Size: 13001
Depends: libgcc-s1
Recommends: libidn2-0 (>= 2.0.5~)
Replaces: libc6-amd64
Section: libs
Priority: optional
Multi-Arch: same
Homepage: https://www.gnu.org/software/libc/libc.html
Description: GNU C Library: Shared libraries
 Contains the standard libraries that are used by nearly all programs on
 the system.
`;

const md5 = (data: Uint8Array): string => new Bun.CryptoHasher("md5").update(data).digest("hex");
const text = (s: string): string => write(new TextEncoder().encode(s));

/** The status.d files for the fake package's closure (or the stderr line thrown). */
function dpkgFiles(control: string, md5sums: string): { path: string; mode: number; data: string }[] {
  const r = script(["dpkg", "amd64", write(writeTar(amd64Package())), text(control), text(md5sums)]);
  if (r.code !== 0) throw new Error(r.stderr.trim());
  return JSON.parse(r.stdout);
}

const md5sumsOf = (entries: TarEntry[]): string =>
  entries.map((e) => (e.type === "file" ? `${md5(e.data)}  ${e.path}\n` : "")).join("");

test("var/lib/dpkg/status.d/libc6: the control stanza as dpkg writes it installed (Status, dpkg's field order)", () => {
  const [status, sums] = dpkgFiles(CONTROL, md5sumsOf(amd64Package()));
  expect(status).toMatchObject({ path: "var/lib/dpkg/status.d/libc6", mode: 0o644 });
  expect(status!.data).toBe(`Package: libc6
Status: install ok installed
Priority: optional
Section: libs
Installed-Size: 13001
Maintainer: GNU Libc Maintainers <debian-glibc@lists.debian.org>
Architecture: amd64
Multi-Arch: same
Source: glibc
Version: 2.36-9+deb12u14
Replaces: libc6-amd64
Depends: libgcc-s1
Recommends: libidn2-0 (>= 2.0.5~)
Description: GNU C Library: Shared libraries
 Contains the standard libraries that are used by nearly all programs on
 the system.
Homepage: https://www.gnu.org/software/libc/libc.html
`);
  // only the files the layer ships (libnss_files is in the package, not in the layer), in the package's order
  expect(sums).toMatchObject({ path: "var/lib/dpkg/status.d/libc6.md5sums", mode: 0o644 });
  expect(sums!.data).toBe(
    md5sumsOf(amd64Package().filter((e) => !e.path.endsWith("libnss_files.so.2") && e.type === "file")),
  );
});

test("refuses a control file with a Status or without a Version, and md5sums that disagree with the files", () => {
  const sums = md5sumsOf(amd64Package());
  expect(() => dpkgFiles(`${CONTROL}Status: install ok installed\n`, sums)).toThrow("has a Status field");
  expect(() => dpkgFiles(CONTROL.replace(/^Version: .*\n/m, ""), sums)).toThrow("has no Version");
  const wrong = sums.replace(/^[0-9a-f]{32}(?= {2}lib\/x86_64-linux-gnu\/libm\.so\.6)/m, "0".repeat(32));
  expect(() => dpkgFiles(CONTROL, wrong)).toThrow(
    `${AMD}/libm.so.6: the package's md5sums say ${"0".repeat(32)}`,
  );
  const missing = sums.replace(/^.*libdl\.so\.2\n/m, "");
  expect(() => dpkgFiles(CONTROL, missing)).toThrow(`do not list ${AMD}/libdl.so.2`);
});
