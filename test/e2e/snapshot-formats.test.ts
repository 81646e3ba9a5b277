/** `aicr snapshot --local` through the compiled binary: -t table, --template, --require-gpu, provider files. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { aicr, baseEnv, ROOT } from "./_aicr.ts";

const dir = mkdtempSync(join(tmpdir(), "aicr-formats-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIX = join(ROOT, "test/fixtures");
const cpuEnv = baseEnv({ AICR_HOST_ROOT: join(FIX, "hosts/cpu-node"), NODE_NAME: "cpu-node-1" });
const h100Env = baseEnv({
  AICR_HOST_ROOT: join(FIX, "hosts/h100-node"),
  PATH: `${join(FIX, "bin/h100")}:${process.env.PATH}`,
  NODE_NAME: "gpu-node-1",
});

describe("snapshot --local output forms", () => {
  test("-t table: FIELD/VALUE rows, one per reading path", async () => {
    const r = await aicr(["snapshot", "--local", "-t", "table"], { cwd: dir, env: h100Env });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^FIELD\s+VALUE$/);
    expect(r.stdout).toMatch(/^metadata\.source-node\s+gpu-node-1$/m);
    expect(r.stdout).toMatch(/^GPU\.smi\.gpu-count\s+8$/m);
  });

  test("-t table with a cm:// output: exit 2 before anything is collected", async () => {
    const r = await aicr(["snapshot", "--local", "-t", "table", "-o", "cm://ns/x"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("cm://");
    expect(r.stderr).not.toContain("collecting");
  });

  test("--template renders the snapshot with the provider readings merged in", async () => {
    const r = await aicr(
      [
        "snapshot",
        "--local",
        "--template",
        join(FIX, "templates/summary.tmpl"),
        "--gke-gpu-pools",
        join(FIX, "providers/gke-gpu-pools.json"),
      ],
      { cwd: dir, env: h100Env },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("node: gpu-node-1\ngpus: 8\n");
    expect(r.stdout).toContain("K8s: 1 subtype(s)");
    expect(r.stdout).toContain("gke driver: LATEST");
  });

  test("a broken template: exit 2 naming line and column, nothing collected", async () => {
    const r = await aicr(["snapshot", "--local", "--template", join(FIX, "templates/broken.tmpl")], {
      cwd: dir,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/line \d+, column \d+/);
    expect(r.stdout).toBe("");
  });

  test("--require-gpu on a CPU host: exit 3 naming the node, nothing delivered", async () => {
    const out = join(dir, "never.yaml");
    const r = await aicr(["snapshot", "--local", "--require-gpu", "-o", out], { cwd: dir, env: cpuEnv });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("NOT_FOUND");
    expect(r.stderr).toContain('"cpu-node-1"');
    expect(await Bun.file(out).exists()).toBe(false);
  });

  test("--require-gpu on the H100 host passes", async () => {
    const r = await aicr(["snapshot", "--local", "--require-gpu"], { cwd: dir, env: h100Env });
    expect(r.code, r.stderr).toBe(0);
  });

  test("provider files in local mode: each projected into its K8s reading", async () => {
    const r = await aicr(
      [
        "snapshot",
        "--local",
        "--oke-addons",
        join(FIX, "providers/oke-addons.json"),
        "--aks-gpu-pools",
        join(FIX, "providers/aks-gpu-pools.json"),
        "--gke-gpu-pools",
        join(FIX, "providers/gke-gpu-pools.json"),
      ],
      { cwd: dir, env: cpuEnv },
    );
    expect(r.code, r.stderr).toBe(0);
    const k8s = parseSnapshot(r.stdout, "stdout").measurements.find((m) => m.type === "K8s");
    const data = (name: string) => k8s?.subtypes.find((s) => s.subtype === name)?.data;
    expect(data("oke-addons")?.["nvidia-gpu-plugin"]).toBe("ACTIVE");
    expect(data("aks-gpu-pools")?.["gpu-driver"]).toBe("Install,None");
    expect(data("gke-gpu-pools")?.["gpu-driver-installation"]).toBe("LATEST");
  });

  test("oversized, directory or FIFO provider file: exit 2, nothing collected", async () => {
    const big = join(dir, "big.json");
    writeFileSync(big, `[${" ".repeat(1024 * 1024)}]`);
    const fifo = join(dir, "fifo.json");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    for (const [flag, path, says] of [
      ["--oke-addons", big, "above the 1 MiB limit"],
      ["--aks-gpu-pools", dir, "a directory"],
      ["--gke-gpu-pools", fifo, "a named pipe"],
    ] as const) {
      const r = await aicr(["snapshot", "--local", flag, path], { cwd: dir });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(flag);
      expect(r.stderr).toContain(says);
      expect(r.stderr).not.toContain("collecting");
    }
  });

  test("--os with an unknown family: exit 2", async () => {
    const r = await aicr(["snapshot", "--local", "--os", "windows"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--os");
  });
});
