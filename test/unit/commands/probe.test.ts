import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  devicesOutcome,
  isGpuNode,
  MAX_SLEEP_SECONDS,
  parseSleepSeconds,
  readNvidiaEntries,
} from "../../../src/commands/probe.ts";
import { AicrError } from "../../../src/core/errors.ts";

const cdev = (name: string, minor = 0) => ({ name, kind: `character device 195:${minor}` });

describe("isGpuNode", () => {
  test("only /dev/nvidia<N> is a GPU", () => {
    expect(["nvidia0", "nvidia7", "nvidia10"].every(isGpuNode)).toBe(true);
    expect(
      ["nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-caps", "nvidia", "nvidia0x"].some(isGpuNode),
    ).toBe(false);
  });
});

describe("devicesOutcome --expect some", () => {
  test("a GPU node: ok, every entry listed in numeric order, the GPUs summed up last", () => {
    const out = devicesOutcome([cdev("nvidiactl", 255), cdev("nvidia10", 10), cdev("nvidia2", 2)], "some");
    expect(out.ok).toBe(true);
    expect(out.lines).toEqual([
      "/dev/nvidia2 (character device 195:2)",
      "/dev/nvidia10 (character device 195:10)",
      "/dev/nvidiactl (character device 195:255)",
      "2 GPU device nodes visible: /dev/nvidia2, /dev/nvidia10",
    ]);
  });

  test("nothing: not ok, says what was expected", () => {
    const out = devicesOutcome([], "some");
    expect(out.ok).toBe(false);
    expect(out.lines).toEqual([
      "no /dev/nvidia* device node is visible (expected at least one /dev/nvidia<N>)",
    ]);
  });

  test("control nodes without a GPU node: not ok, the entries listed", () => {
    const out = devicesOutcome([cdev("nvidiactl", 255), cdev("nvidia-uvm")], "some");
    expect(out.ok).toBe(false);
    expect(out.lines.slice(0, 2)).toEqual([
      "/dev/nvidia-uvm (character device 195:0)",
      "/dev/nvidiactl (character device 195:255)",
    ]);
    expect(out.lines.at(-1)).toContain("no GPU device node /dev/nvidia<N> is visible");
  });
});

describe("devicesOutcome --expect none (the isolation probe)", () => {
  test("nothing visible: ok", () => {
    const out = devicesOutcome([], "none");
    expect(out).toEqual({
      ok: true,
      lines: ["no /dev/nvidia* device node is visible: this container has no GPU access"],
    });
  });

  test("any /dev/nvidia* entry fails it, a control node alone too; what it saw is printed", () => {
    const gpu = devicesOutcome([cdev("nvidia0"), cdev("nvidiactl", 255)], "none");
    expect(gpu.ok).toBe(false);
    expect(gpu.lines).toEqual([
      "/dev/nvidia0 (character device 195:0)",
      "/dev/nvidiactl (character device 195:255)",
      "2 /dev/nvidia* entries are visible to a container that holds no ResourceClaim (expected none)",
    ]);
    const ctl = devicesOutcome([cdev("nvidiactl", 255)], "none");
    expect(ctl.ok).toBe(false);
    expect(ctl.lines.at(-1)).toBe(
      "1 /dev/nvidia* entry is visible to a container that holds no ResourceClaim (expected none)",
    );
  });
});

describe("parseSleepSeconds", () => {
  test("whole and decimal seconds, surrounding blanks ignored", () => {
    expect(parseSleepSeconds("0")).toBe(0);
    expect(parseSleepSeconds("30")).toBe(30);
    expect(parseSleepSeconds(" 1.5 ")).toBe(1.5);
    expect(parseSleepSeconds(String(MAX_SLEEP_SECONDS))).toBe(MAX_SLEEP_SECONDS);
  });

  test.each([undefined, "", "-1", "1e3", "30s", "abc", "Infinity", String(MAX_SLEEP_SECONDS + 1), "0x10"])(
    "%p is refused (INVALID_REQUEST, exit 2)",
    (text) => {
      let err: unknown;
      try {
        parseSleepSeconds(text);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AicrError);
      expect((err as AicrError).code).toBe("INVALID_REQUEST");
      expect((err as AicrError).message).toContain("is not a number of seconds");
    },
  );
});

describe("readNvidiaEntries", () => {
  test("only nvidia* names, with their kind; an unreadable directory is none", () => {
    const dir = mkdtempSync(join(tmpdir(), "aicr-probe-"));
    try {
      writeFileSync(join(dir, "nvidia0"), "");
      writeFileSync(join(dir, "null"), "");
      mkdirSync(join(dir, "nvidia-caps"));
      const got = readNvidiaEntries(dir).sort((a, b) => a.name.localeCompare(b.name));
      expect(got).toEqual([
        { name: "nvidia-caps", kind: "directory" },
        { name: "nvidia0", kind: "file" },
      ]);
      expect(readNvidiaEntries(join(dir, "absent"))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("character devices carry their major:minor (/dev/null is 1:3)", () => {
    const dir = mkdtempSync(join(tmpdir(), "aicr-probe-"));
    try {
      const made = Bun.spawnSync(["mknod", join(dir, "nvidia3"), "c", "1", "3"]);
      if (made.exitCode !== 0) return; // not root: nothing to check here
      expect(readNvidiaEntries(dir)).toEqual([{ name: "nvidia3", kind: "character device 1:3" }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
