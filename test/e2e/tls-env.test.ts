/**
 * TLS verification of the apiserver is the kubeconfig's to decide, never the environment's:
 * NODE_TLS_REJECT_UNAUTHORIZED=0 (common in CI for unrelated tools) does not let aicr send its
 * token to a server it could not verify. kubectl ignores that variable too.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestCluster, type TestCluster } from "../cluster/testbed.ts";
import { aicr, baseEnv } from "./_aicr.ts";

let cluster: TestCluster;
let dir: string;
let trusted: string;
let untrusted: string;

beforeAll(async () => {
  cluster = await startTestCluster("fake", { https: true });
  dir = mkdtempSync(join(tmpdir(), "aicr-tls-env-"));
  trusted = cluster.kubeconfigFor("admin");
  // The same kubeconfig without its CA: the fake's self-made certificate is then untrusted.
  untrusted = join(dir, "untrusted.kubeconfig");
  writeFileSync(
    untrusted,
    readFileSync(trusted, "utf8").replace(/^\s*certificate-authority-data:.*\n/m, ""),
    { mode: 0o600 },
  );
}, 60_000);
afterAll(async () => {
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
});

const runsList = (kubeconfig: string, env: Record<string, string> = {}) =>
  aicr(["runs", "list", "-n", "default"], { env: baseEnv({ KUBECONFIG: kubeconfig, ...env }) });

test("the kubeconfig's CA verifies the server: runs list answers", async () => {
  const r = await runsList(trusted, { NODE_TLS_REJECT_UNAUTHORIZED: "0" });
  expect(r.code, r.stderr).toBe(0);
});

test("an untrusted certificate is refused with or without NODE_TLS_REJECT_UNAUTHORIZED=0: exit 6, no request", async () => {
  expect(readFileSync(untrusted, "utf8")).not.toContain("certificate-authority");
  const before = cluster.log.entries.length;
  for (const env of [{}, { NODE_TLS_REJECT_UNAUTHORIZED: "0" }] as Record<string, string>[]) {
    const r = await runsList(untrusted, env);
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain("[SERVICE_UNAVAILABLE]");
    // one WARN names the override, so nobody believes it took effect
    const warned = r.stderr.split("\n").filter((l) => l.includes("NODE_TLS_REJECT_UNAUTHORIZED"));
    expect(warned.length).toBe("NODE_TLS_REJECT_UNAUTHORIZED" in env ? 1 : 0);
  }
  // The handshake failed, so no request (and no token) reached the server.
  expect(cluster.log.entries.length).toBe(before);
});
