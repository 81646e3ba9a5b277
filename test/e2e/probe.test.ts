/**
 * aicr probe (internal, hidden): what the conformance checks' pods run in aicr's own image, through the
 * compiled binary. This host has no /dev/nvidia*; the "present" cases give the binary a /dev of its own
 * holding device nodes, in a private mount namespace (as a container's /dev holds the nodes its
 * ResourceClaim brought), which needs root.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { until } from "../support/until.ts";
import { AICR, aicr, baseEnv, ensureBuilt } from "./_aicr.ts";

const isRoot = process.getuid?.() === 0;

/** `aicr <args>` with /dev replaced by a tmpfs holding the basic nodes and `extra` (name → "major minor"). */
async function withDevices(extra: Record<string, string>, args: string[]) {
  await ensureBuilt();
  const nodes = { null: "1 3", zero: "1 5", random: "1 8", urandom: "1 9", ...extra };
  const script = [
    "set -e",
    "mount -t tmpfs -o mode=755 tmpfs /dev",
    ...Object.entries(nodes).map(([n, mm]) => `mknod -m 666 /dev/${n} c ${mm}`),
    'exec "$@"',
  ].join("\n");
  const proc = Bun.spawn(
    ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", AICR, ...args],
    {
      env: baseEnv(),
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
    },
  );
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

describe("aicr probe devices", () => {
  test("no /dev/nvidia* here: exit 1 saying none is visible", async () => {
    const r = await aicr(["probe", "devices"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("no /dev/nvidia* device node is visible (expected at least one /dev/nvidia<N>)\n");
    expect(r.stderr).toContain("probe failed: no /dev/nvidia* device node is visible");
    expect(r.stderr).not.toContain("runID=");
  });

  test("--expect none with no /dev/nvidia*: exit 0 (the isolation probe's pass)", async () => {
    const r = await aicr(["probe", "devices", "--expect", "none"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("no /dev/nvidia* device node is visible: this container has no GPU access\n");
  });

  test.skipIf(!isRoot)("a GPU node in its /dev: exit 0 listing every nvidia entry", async () => {
    const r = await withDevices({ nvidia0: "195 0", nvidia1: "195 1", nvidiactl: "195 255" }, [
      "probe",
      "devices",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      [
        "/dev/nvidia0 (character device 195:0)",
        "/dev/nvidia1 (character device 195:1)",
        "/dev/nvidiactl (character device 195:255)",
        "2 GPU device nodes visible: /dev/nvidia0, /dev/nvidia1",
        "",
      ].join("\n"),
    );
  });

  test.skipIf(!isRoot)("--expect none with a GPU visible: exit 1 printing what it saw", async () => {
    const r = await withDevices({ nvidia3: "195 3", nvidiactl: "195 255" }, [
      "probe",
      "devices",
      "--expect",
      "none",
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      "/dev/nvidia3 (character device 195:3)\n/dev/nvidiactl (character device 195:255)\n",
    );
    expect(r.stdout).toContain(
      "2 /dev/nvidia* entries are visible to a container that holds no ResourceClaim",
    );
  });

  test.skipIf(!isRoot)("only control nodes, no /dev/nvidia<N>: exit 1", async () => {
    const r = await withDevices({ nvidiactl: "195 255", "nvidia-uvm": "510 0" }, ["probe", "devices"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("no GPU device node /dev/nvidia<N> is visible");
  });

  test("a wrong --expect or an argument: exit 2", async () => {
    const bad = await aicr(["probe", "devices", "--expect", "all"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid --expect "all": expected some or none');
    const extra = await aicr(["probe", "devices", "5"]);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain("aicr probe devices takes no argument");
  });
});

describe("aicr probe sleep", () => {
  test("sleeps, then exit 0", async () => {
    const started = performance.now();
    const r = await aicr(["probe", "sleep", "0.3"]);
    expect(r.code, r.stderr).toBe(0);
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
  });

  test("SIGTERM ends it early with exit 0 (a pod deleted mid-sleep)", async () => {
    await ensureBuilt();
    const proc = Bun.spawn([AICR, "probe", "sleep", "600"], {
      env: baseEnv(),
      stdout: "pipe",
      stderr: "pipe",
    });
    const stderr = new Response(proc.stderr).text();
    // SIGTERM only once main has its handler: the kernel shows it caught (bit 15-1 of SigCgt).
    await until(() => {
      const status = readFileSync(`/proc/${proc.pid}/status`, "utf8");
      const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(status)?.[1];
      return caught !== undefined && (BigInt(`0x${caught}`) & (1n << 14n)) !== 0n;
    }, "aicr probe sleep handling SIGTERM");
    const started = performance.now();
    proc.kill("SIGTERM");
    const code = await Promise.race([proc.exited, Bun.sleep(10_000).then(() => "still running")]);
    expect(code).toBe(0);
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(await stderr).toContain("sleep stopped after");
  });

  test.each([["abc"], ["1e3"], ["30s"], []])("aicr probe sleep %p: exit 2", async (...words) => {
    const r = await aicr(["probe", "sleep", ...words]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("is not a number of seconds");
  });

  test("--expect belongs to devices", async () => {
    const r = await aicr(["probe", "sleep", "1", "--expect", "none"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--expect belongs to aicr probe devices");
  });
});

describe("aicr probe is internal", () => {
  test("not in --help, not suggested; an unknown verb names the verbs", async () => {
    const help = await aicr(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).not.toMatch(/^ {2}probe\b/m);
    const near = await aicr(["prob"]);
    expect(near.code).toBe(2);
    expect(near.stderr).not.toContain("did you mean");
    const verb = await aicr(["probe", "gpus"]);
    expect(verb.code).toBe(2);
    expect(verb.stderr).toContain('unknown probe "gpus"');
    expect(verb.stderr).toContain("devices, sleep");
  });

  test("it takes no cluster: --kubeconfig is refused", async () => {
    const r = await aicr(["probe", "devices", "--kubeconfig", "/nonexistent"]);
    expect(r.code).toBe(2);
  });
});
