/**
 * The fleet's --node-timeout and the logging flags as the one reading of argv gives them, through the
 * compiled binary: a refusal is exit 2 before the first request reaches the cluster, and
 * `--log-json=true` shapes that refusal as `--log-json` does.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { useCluster } from "../support/cluster.ts";
import { requestsSince } from "../support/requests.ts";
import { aicr, baseEnv } from "./_aicr.ts";

describe("aicr snapshot --node-timeout (fake cluster)", () => {
  const cluster = useCluster("fake", { controllers: false });
  let env: Record<string, string>;
  beforeAll(() => {
    env = baseEnv({ KUBECONFIG: cluster().kubeconfigFor("admin") });
  });

  for (const [what, args, text] of [
    ["without --all-nodes", ["--node-timeout", "1m"], "--node-timeout applies only to a fleet run"],
    [
      "a value that is not a duration",
      ["--all-nodes", "--node-timeout", "5 minutes"],
      'invalid --node-timeout "5 minutes": expected a duration such as 5m, 90s or 1h30m',
    ],
    [
      "a negative duration",
      ["--all-nodes", "--node-timeout", "-1m"],
      'invalid --node-timeout "-1m": expected a duration such as 5m, 90s or 1h30m',
    ],
    [
      "zero",
      ["--all-nodes", "--node-timeout=0s"],
      'invalid --node-timeout "0s": expected a duration greater than zero',
    ],
    ["no value", ["--all-nodes", "--node-timeout"], "flag --node-timeout needs a value"],
  ] as const)
    test(`${what}: exit 2, nothing sent`, async () => {
      const before = cluster().log.entries.length;
      const r = await aicr(["snapshot", "-n", "fleet-flags", ...args], { env });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain("[INVALID_REQUEST]");
      expect(r.stderr).toContain(text);
      expect(r.stdout).toBe("");
      expect(requestsSince(cluster(), before)).toEqual([]);
    });

  test("--log-json=true makes the refusal one JSON line, as --log-json does", async () => {
    const before = cluster().log.entries.length;
    const r = await aicr(["snapshot", "-n", "fleet-flags", "--log-json=true", "--node-timeout", "1m"], {
      env,
    });
    expect(r.code, r.stderr).toBe(2);
    const last = JSON.parse(r.stderr.trim().split("\n").at(-1) ?? "");
    expect(last).toMatchObject({ level: "error", code: "INVALID_REQUEST" });
    expect(String(last.msg)).toBe("--node-timeout applies only to a fleet run");
    expect(requestsSince(cluster(), before)).toEqual([]);
  });
});

test("an unknown flag after --log-json=true: the refusal is JSON too", async () => {
  const r = await aicr(["version", "--log-json=true", "--bogus"]);
  expect(r.code).toBe(2);
  const last = JSON.parse(r.stderr.trim().split("\n").at(-1) ?? "");
  expect(last).toMatchObject({ level: "error", code: "INVALID_REQUEST" });
  expect(String(last.msg)).toContain('unknown flag "--bogus" for "aicr version"');
});
