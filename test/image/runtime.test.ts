import { expect, test } from "bun:test";
import { checkBinaryNeeds, runtimeEntries } from "../../scripts/image/runtime.ts";
import type { TarMember } from "../../src/image/_tar.ts";
import { fakeElf } from "./_elf.ts";

const lib = (path: string, needed: string[], machine: "x86_64" | "aarch64" = "x86_64"): TarMember => ({
  path,
  type: "file",
  mode: 0o644,
  target: "",
  data: fakeElf({ machine, needed, soname: path.split("/").pop() }),
});
const link = (path: string, target: string): TarMember => ({
  path,
  type: "symlink",
  mode: 0o777,
  target,
  data: new Uint8Array(),
});

const AMD = "lib/x86_64-linux-gnu";
const amd64Package = (): TarMember[] => [
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
