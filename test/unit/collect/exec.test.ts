import { expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "../../../src/collect/_exec.ts";
import { until } from "../../support/until.ts";

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test("runCommand kills the process when the caller aborts, not only stops waiting for it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "aicr-exec-"));
  try {
    const script = join(dir, "wedged");
    const pidFile = join(dir, "pid");
    writeFileSync(script, `#!/bin/sh\necho $$ > "${pidFile}"\nexec sleep 600\n`);
    chmodSync(script, 0o755);
    const controller = new AbortController();
    const run = runCommand(script, [], {
      env: { PATH: "/usr/bin:/bin" },
      signal: controller.signal,
      timeoutMs: 60_000,
    });
    await until(
      () => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"),
      "the command to start",
    );
    const pid = Number(readFileSync(pidFile, "utf8"));
    controller.abort(new Error("collector cancelled"));
    await expect(run).rejects.toThrow("collector cancelled");
    await until(() => !alive(pid), `process ${pid} to be killed`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
