/**
 * Flag values through the compiled binary (issue 25, items 8 and 10): each refusal is exit 2 with
 * what failed, the value, the expected form and the remedy — and nothing sent to the apiserver.
 *
 * - `--config` keys named like JavaScript built-ins are unknown keys at every level (they crashed
 *   with a TypeError, or read as a group), and so are resource names like `constructor`;
 * - an empty value (`-n ""`, `--namespace=`, `-k ""`, `--context ""`) is refused, never the default;
 * - words after `--` are arguments: a command that takes none refuses them;
 * - a boolean is true/false, 1/0, yes/no, whether the command reads it or not;
 * - `render-rbac --dir /proc` is bad input (exit 2), not a failure in the cluster (exit 8);
 * - `--run-id` must name a UTC date and time that exist.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestCluster, type TestCluster } from "../cluster/testbed.ts";
import { requestsSince } from "../support/requests.ts";
import { aicr, baseEnv, type Result, ROOT } from "./_aicr.ts";

let cluster: TestCluster;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  cluster = await startTestCluster("fake", { controllers: false });
  kubeconfig = cluster.kubeconfigFor("admin");
  dir = mkdtempSync(join(tmpdir(), "aicr-flag-values-"));
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The binary against the fake cluster (KUBECONFIG set): its result and the requests it sent. */
async function run(args: string[], env: Record<string, string> = {}): Promise<Result & { sent: string[] }> {
  const before = cluster.log.entries.length;
  const r = await aicr(args, { cwd: dir, env: baseEnv({ KUBECONFIG: kubeconfig, ...env }) });
  return { ...r, sent: requestsSince(cluster, before) };
}

/** Exit 2, INVALID_REQUEST with a remedy, no crash, and nothing sent. */
function refused(r: Result & { sent: string[] }, ...messages: string[]): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toContain("[INVALID_REQUEST]");
  expect(r.stderr).toContain("remedy:");
  expect(r.stderr).not.toContain("TypeError");
  for (const m of messages) expect(r.stderr).toContain(m);
  expect(r.sent).toEqual([]);
}

const BUILT_INS = ["__proto__", "constructor", "toString", "hasOwnProperty"];

describe("--config keys named like JavaScript built-ins (item 8)", () => {
  const config = (command: string, body: string) => {
    const file = join(dir, `config-${command}-${Bun.hash(body).toString(16)}.yaml`);
    writeFileSync(file, `apiVersion: aicr.run/v1\nkind: AICRConfig\nspec:\n  ${command}:\n${body}`);
    return file;
  };

  for (const command of ["snapshot", "validate"])
    for (const key of BUILT_INS)
      test(`aicr ${command}: ${key} in the section, under agent (and input) is an unknown key, whatever its value`, async () => {
        for (const value of ["x", "{a: b}", "null", "[a]"]) {
          const groups = command === "validate" ? ["agent", "input"] : ["agent"];
          const body = [`    ${key}: ${value}`, ...groups.map((g) => `    ${g}: {${key}: ${value}}`)].join(
            "\n",
          );
          const r = await run([command, "--config", config(command, `${body}\n`)]);
          refused(r, `spec.${command}.${key}: unknown key for "aicr ${command}"`);
          expect(r.stderr).toContain(`spec.${command}.agent.${key}: unknown key for "aicr ${command}"`);
          if (command === "validate")
            expect(r.stderr).toContain(
              `spec.validate.input.${key}: unknown key (input takes recipe, snapshot)`,
            );
        }
      }, 30_000);

  test("a built-in as a resource name (--requests/--limits, or the config's map) is refused by name", async () => {
    for (const args of [
      ["--requests", "constructor=1"],
      ["--limits", "cpu=1,toString=2"],
      ["--requests", "hasOwnProperty=3,valueOf=4"],
    ]) {
      const r = await run(["snapshot", ...args]);
      refused(r, "a name without a domain must be cpu, memory, ephemeral-storage or hugepages-<size>");
    }
    const file = config("snapshot", "    requests: {hasOwnProperty: 1}\n    limits: {constructor: 2}\n");
    refused(await run(["snapshot", "--config", file]), "a name without a domain");
  });

  test("flag names like built-ins on argv are unknown flags on every command", async () => {
    for (const command of [
      ["snapshot"],
      ["validate"],
      ["diff"],
      ["render-rbac", "sa"],
      ["runs", "list"],
      ["runs", "delete"],
      ["cleanup-legacy"],
      ["image", "push"],
      ["image", "save"],
      ["image", "list"],
      ["image", "verify"],
      ["version"],
    ])
      for (const flag of [
        "--__proto__",
        "--constructor",
        "--toString=1",
        "--hasOwnProperty",
        "--no-toString",
      ])
        refused(await run([...command, flag]), `unknown flag ${JSON.stringify(flag)}`);
  }, 60_000);
});

describe("empty values are refused, never the default (item 10)", () => {
  const cases: [string[], string][] = [
    [["runs", "list", "-n", ""], '-n ""'],
    [["runs", "list", "--namespace="], '--namespace ""'],
    [["runs", "list", "-k", ""], '-k ""'],
    [["runs", "list", "--kubeconfig="], '--kubeconfig ""'],
    [["runs", "list", "--context", ""], '--context ""'],
    [["snapshot", "-n", ""], '-n ""'],
    [["snapshot", "--context", ""], '--context ""'],
    [["snapshot", "-k", ""], '-k ""'],
    [["validate", "-r", join(ROOT, "examples/recipe.yaml"), "-n", ""], '-n ""'],
    [["cleanup-legacy", "--dry-run", "-n", ""], '-n ""'],
    [["cleanup-legacy", "--dry-run", "-n", "a,,b"], '-n "a,,b": an empty item in the comma list'],
    [["runs", "delete", "--dry-run", "-A", "--context="], '--context ""'],
    [["diff", "-b", "cm://a/b", "--target", "cm://a/c", "-k", ""], '-k ""'],
  ];
  for (const [args, shown] of cases)
    test(`aicr ${args.join(" ")}: exit 2, nothing sent`, async () => {
      const r = await run(args);
      refused(r, `invalid ${shown}`);
      if (!shown.includes("comma")) expect(r.stderr).toMatch(/leave (-\S|--\S+) out for its default/);
    });

  test("an empty string in --config is refused by its path", async () => {
    const file = join(dir, "empty.yaml");
    writeFileSync(
      file,
      'apiVersion: aicr.run/v1\nkind: AICRConfig\nspec:\n  snapshot:\n    agent: {namespace: ""}\n',
    );
    refused(
      await run(["snapshot", "--config", file]),
      "spec.snapshot.agent.namespace: an empty string is no value",
    );
  });
});

describe("-- ends the flags (item 10)", () => {
  test("flags after -- are words: a command that takes none refuses them, naming --", async () => {
    for (const args of [
      ["runs", "list", "--", "-n", "other"],
      ["snapshot", "--", "--namespace", "x"],
      ["cleanup-legacy", "--", "--yes"],
      ["runs", "list", "--", "--help"],
    ]) {
      const r = await run(args);
      refused(
        r,
        `after "--" for "aicr ${args[0] === "runs" ? "runs list" : args[0]}"`,
        '"--" ends the flags',
      );
    }
  });

  test("a word after -- is an argument (one starting with a dash included)", async () => {
    const r = await run([
      "render-rbac",
      "-n",
      "ns",
      "--run-id",
      "20261129-101500-0123456789abcdef",
      "--",
      "sa",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(dir)).toContain("snapshot-rbac-20261129-101500-0123456789abcdef");
    refused(await run(["render-rbac", "--", "-n"]), 'invalid service account "-n"');
  });
});

describe("booleans take only the documented spellings (item 10)", () => {
  test("--x=<anything else> is refused naming the flag, read by the command or not", async () => {
    for (const [args, flag] of [
      [["snapshot", "--local", "--privileged=maybe"], "--privileged"],
      [["snapshot", "--local", "--overwrite=on"], "--overwrite"],
      [["version", "--debug=maybe"], "--debug"],
      [["version", "--debug="], "--debug"],
      [["runs", "list", "--log-json=TRUE"], "--log-json"],
      [["--debug=maybe", "version"], "--debug"],
      [["validate", "-r", "x", "--no-cluster=2"], "--no-cluster"],
    ] as [string[], string][]) {
      const r = await run(args);
      refused(r, `invalid ${flag} "`, "expected true or false (also 1/0, yes/no)");
      expect(r.stdout).toBe("");
    }
  });

  test("true/false, 1/0 and yes/no are accepted", async () => {
    for (const v of ["true", "false", "1", "0", "yes", "no"]) {
      const r = await run(["version", `--log-json=${v}`]);
      expect(r.code, r.stderr).toBe(0);
    }
  });
});

describe("render-rbac --dir and --run-id (item 10)", () => {
  test("--dir under /proc or /sys, missing, or a file: exit 2 with the value, nothing written", async () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    for (const [value, why] of [
      ["/proc", "it is under /proc, a kernel pseudo-filesystem"],
      ["/proc/self", "it is under /proc"],
      ["/sys", "it is under /sys"],
      [join(dir, "missing"), "no such directory"],
      [file, "it is not a directory"],
    ]) {
      const r = await run(["render-rbac", "sa", "-n", "ns", "--dir", value as string]);
      refused(r, `invalid --dir ${JSON.stringify(value)}: ${why}`);
    }
  });

  test("--run-id (and AICR_RUN_ID) must name a UTC date and time that exist", async () => {
    for (const id of [
      "99999999-999999-0123456789abcdef",
      "20261301-000000-0123456789abcdef",
      "20260230-000000-0123456789abcdef",
      "20260101-246000-0123456789abcdef",
    ]) {
      refused(
        await run(["render-rbac", "sa", "--run-id", id]),
        `invalid run ID from --run-id: "${id}"`,
        "is no UTC date",
      );
      refused(await run(["runs", "list", "--run-id", id]), "is no UTC date");
      refused(
        await run(["render-rbac", "sa"], { AICR_RUN_ID: id }),
        `invalid run ID from AICR_RUN_ID: "${id}"`,
      );
    }
    expect(readdirSync(dir).filter((f) => f.includes("99999999"))).toEqual([]);
  });
});
