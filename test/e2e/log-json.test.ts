/**
 * `--log-json` from the compiled binary: every stderr line of a run is one JSON object carrying the
 * run's ID, and the final error line keeps its code and remedy as fields of their own.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeKubeconfig } from "../cluster/kubeconfig.ts";
import { aicr, baseEnv } from "./_aicr.ts";

const TEST_MS = 30_000;
let dir: string;
let kubeconfig: string;

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "aicr-log-json-"));
  kubeconfig = writeKubeconfig(dir, "kubeconfig", `https://127.0.0.1:${await closedPort()}`, undefined, "u", {
    token: "t",
  });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("--log-json", () => {
  test(
    "aicr snapshot against no cluster: every line JSON with one runId; the last carries code and remedy apart",
    async () => {
      const r = await aicr(["snapshot", "--log-json"], { env: baseEnv({ KUBECONFIG: kubeconfig }) });
      expect(r.code).toBe(6);
      expect(r.stdout).toBe("");
      const lines = r.stderr.trimEnd().split("\n");
      expect(lines.length).toBeGreaterThanOrEqual(2);
      const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      const runId = records[0]?.runId;
      expect(runId).toMatch(/^\d{8}-\d{6}-[0-9a-f]{16}$/);
      expect(String(records[0]?.msg)).toContain(`runID=${runId}`);
      for (const record of records) expect(record.runId).toBe(runId);
      const last = records.at(-1) as Record<string, unknown>;
      expect(last.level).toBe("error");
      expect(last.code).toBe("SERVICE_UNAVAILABLE");
      expect(typeof last.remedy).toBe("string");
      expect(String(last.remedy)).toContain("server address");
      expect(String(last.msg)).toContain("cannot reach the Kubernetes API server");
      expect(String(last.msg)).not.toContain(String(last.remedy));
      expect(String(last.msg)).not.toContain("remedy");
      expect(String(last.msg)).not.toContain("[SERVICE_UNAVAILABLE]");
    },
    TEST_MS,
  );

  test(
    "text mode is unchanged: [CODE] message, the remedy on its own line, no runId field",
    async () => {
      const r = await aicr(["snapshot"], { env: baseEnv({ KUBECONFIG: kubeconfig }) });
      expect(r.code).toBe(6);
      const lines = r.stderr.trimEnd().split("\n");
      expect(lines[0]).toMatch(/^snapshot agent run: runID=\d{8}-\d{6}-[0-9a-f]{16}$/);
      expect(r.stderr).not.toContain("runId=");
      expect(r.stderr).toMatch(/\nERROR \[SERVICE_UNAVAILABLE\] .*cannot reach the Kubernetes API server/);
      expect(lines.at(-1)).toMatch(/^ {2}remedy: .*server address/);
    },
    TEST_MS,
  );

  test(
    "an error before any run (a bad flag) is still one JSON line with its code and remedy",
    async () => {
      const r = await aicr(["snapshot", "--log-json", "--run-id", "NOT A RUN ID"]);
      expect(r.code).toBe(2);
      const records = r.stderr
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const last = records.at(-1) as Record<string, unknown>;
      expect(last).toMatchObject({ level: "error", code: "INVALID_REQUEST" });
      expect(String(last.msg)).not.toContain("[INVALID_REQUEST]");
      expect(last).not.toHaveProperty("runId");
    },
    TEST_MS,
  );
});
