import { expect, test } from "bun:test";
import { ElfError, readElf } from "../../src/image/_elf.ts";
import { thrown } from "../support/reject.ts";
import { fakeElf } from "./_elf.ts";

test("reads the machine, PT_INTERP, DT_NEEDED in order and DT_SONAME", () => {
  const elf = fakeElf({
    machine: "x86_64",
    interpreter: "/lib64/ld-linux-x86-64.so.2",
    needed: ["libc.so.6", "libm.so.6"],
    soname: "libfoo.so.1",
  });
  expect(readElf(elf)).toEqual({
    machine: "x86_64",
    interpreter: "/lib64/ld-linux-x86-64.so.2",
    needed: ["libc.so.6", "libm.so.6"],
    soname: "libfoo.so.1",
  });
});

test("a shared library has no interpreter; aarch64 is recognised", () => {
  const elf = readElf(
    fakeElf({ machine: "aarch64", needed: ["ld-linux-aarch64.so.1"], soname: "libc.so.6" }),
  );
  expect(elf).toEqual({
    machine: "aarch64",
    interpreter: undefined,
    needed: ["ld-linux-aarch64.so.1"],
    soname: "libc.so.6",
  });
});

test("reads the running bun executable (a glibc or musl linux build)", () => {
  if (process.platform !== "linux") return;
  const elf = readElf(new Uint8Array(require("node:fs").readFileSync(process.execPath)));
  expect(elf.machine).toBe(process.arch === "arm64" ? "aarch64" : "x86_64");
  expect(elf.interpreter).toMatch(/^\/lib.*\/ld-(linux|musl)/);
  expect(elf.needed.some((n) => /^libc\.so|^libc\.musl/.test(n))).toBe(true);
});

test("refuses what it cannot read, saying why", () => {
  const refusal = (bytes: Uint8Array): string => thrown(() => readElf(bytes), ElfError).message;
  expect(refusal(new TextEncoder().encode(`#!/bin/sh\necho hi\n${" ".repeat(64)}`))).toContain(
    "not an ELF file",
  );
  expect(refusal(new Uint8Array(10))).toContain("not an ELF file");
  const elf32 = fakeElf({ machine: "x86_64" });
  elf32[4] = 1;
  expect(refusal(elf32)).toContain("only ELF64 little-endian");
  expect(refusal(fakeElf({ machine: 40 }))).toContain("unsupported ELF machine 40");
  const truncated = fakeElf({ machine: "x86_64", needed: ["libc.so.6"] });
  expect(refusal(truncated.subarray(0, 100))).toContain("outside the file");
});
