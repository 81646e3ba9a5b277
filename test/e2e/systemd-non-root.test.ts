/**
 * The agent's image runs as uid 65534 unless its pod says runAsUser: 0. With the host's /run/systemd
 * mounted, such an agent cannot read systemd (systemd's private socket admits root only), and its one
 * warning says so and how to fix it — found on the real node with an operator's own Job.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AICR, baseEnv, ensureBuilt } from "./_aicr.ts";

const IS_ROOT = process.getuid?.() === 0;
let hostRoot: string;

beforeAll(async () => {
  await ensureBuilt();
  hostRoot = mkdtempSync(join(tmpdir(), "aicr-non-root-"));
  chmodSync(hostRoot, 0o755);
  mkdirSync(join(hostRoot, "run/systemd"), { recursive: true });
  // Only its presence matters: a non-root process is refused before it would connect.
  writeFileSync(join(hostRoot, "run/systemd/private"), "");
});
afterAll(() => rmSync(hostRoot, { recursive: true, force: true }));

function snapshotAs(uid: number | undefined) {
  const argv = [AICR, "snapshot", "--local", "-t", "json"];
  const asUser =
    uid === undefined ? argv : ["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", ...argv];
  const env = baseEnv({ AICR_HOST_ROOT: hostRoot, HOME: "/tmp" });
  const r = Bun.spawnSync(asUser, { env, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

describe.skipIf(!IS_ROOT)("SystemD as a non-root agent (setpriv needs root)", () => {
  test("uid 65534 beside a mounted /run/systemd: SystemD empty, one warning naming the uid and runAsUser: 0", () => {
    const r = snapshotAs(65534);
    expect(r.code, r.stderr).toBe(0);
    const systemd = JSON.parse(r.stdout).measurements.find((m: { type: string }) => m.type === "SystemD");
    expect(systemd?.subtypes ?? []).toEqual([]);
    const warns = r.stderr.split("\n").filter((l) => l.includes("systemd is not reachable over D-Bus"));
    expect(warns).toHaveLength(1);
    expect(warns[0]).toContain("runs as uid 65534");
    expect(warns[0]).toContain("runAsUser: 0");
  });

  test("as root the same host gets the plain warning (the socket is not systemd's), without the uid hint", () => {
    const r = snapshotAs(undefined);
    expect(r.code, r.stderr).toBe(0);
    const warns = r.stderr.split("\n").filter((l) => l.includes("systemd is not reachable over D-Bus"));
    expect(warns).toHaveLength(1);
    expect(warns[0]).not.toContain("runAsUser");
  });
});
