import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { aicr, baseEnv, ROOT } from "./_aicr.ts";

test("--version prints the package version first, then revision, build date and Bun; exits 0", async () => {
  const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string };
  const r = await aicr(["--version"]);
  expect(r.code).toBe(0);
  // The version first (scripts read the first word), then the revision, the build date and Bun.
  expect(r.stdout.split(" ")[0]).toBe(pkg.version);
  expect(r.stdout).toMatch(
    /^\S+ \(revision [0-9a-f]{12}, built \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, bun \d+\.\d+\.\d+\)\n$/,
  );
});

test("--help lists the working commands and the global flags, without colour in a pipe", async () => {
  const r = await aicr(["--help"]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("render-rbac");
  for (const flag of ["--kubeconfig", "--context", "--namespace", "--debug", "--log-json", "--run-id"]) {
    expect(r.stdout).toContain(flag);
  }
  expect(r.stdout).not.toContain("\x1b[");
});

test("a command's --help shows its own flags and the shared ones it takes: render-rbac has no cluster flags", async () => {
  const r = await aicr(["render-rbac", "--help"]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("--discover-network");
  expect(r.stdout).toContain("--namespace");
  expect(r.stdout).toContain("SERVICE-ACCOUNT");
  expect(r.stdout).toContain("Examples:");
  expect(r.stdout).not.toContain("--kubeconfig");
  expect(r.stdout).not.toContain("--context");
  const flag = await aicr(["render-rbac", "sa", "-n", "ns", "--kubeconfig", "kc"]);
  expect(flag.code).toBe(2);
  expect(flag.stderr).toContain('unknown flag "--kubeconfig"');
});

test("help wraps to $COLUMNS (80 without it): no line wider, no trailing spaces, each default said once", async () => {
  for (const [columns, width] of [
    ["60", 60],
    [undefined, 80],
    ["120", 120],
  ] as const) {
    const r = await aicr(["snapshot", "--help"], { env: baseEnv(columns ? { COLUMNS: columns } : {}) });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    for (const line of lines) {
      expect(line.length).toBeLessThanOrEqual(width);
      expect(line).not.toMatch(/\s$/);
    }
    expect(r.stdout).not.toMatch(/\(default\)\s+\(Default/i);
    expect(r.stdout).toMatch(/^\s+--no-privileged\s+\S/m);
    expect(r.stdout).toContain("Examples:");
  }
});

test("validate --help: its own -n default, and --no-fail-on-error described", async () => {
  const r = await aicr(["validate", "--help"], { env: baseEnv({ COLUMNS: "200" }) });
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/--namespace <namespace>\s+.*aicr-validation/);
  expect(r.stdout).toMatch(/^\s+--no-fail-on-error\s+\S/m);
});

test("the root help ends with the exit codes", async () => {
  const r = await aicr(["--help"]);
  const table = r.stdout.slice(r.stdout.indexOf("Exit codes:"));
  expect(table).toMatch(/^ {2}0 {2}success$/m);
  for (const code of [
    "INVALID_REQUEST",
    "NOT_FOUND",
    "UNAUTHORIZED",
    "SERVICE_UNAVAILABLE",
    "RATE_LIMIT_EXCEEDED",
    "CANCELED",
  ])
    expect(table).toContain(code);
});

test("an unknown command exits 2 and lists the real ones", async () => {
  const r = await aicr(["snapshots"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('unknown command "snapshots"');
  expect(r.stderr).toContain("render-rbac");
  expect(r.stdout).toBe("");
});

test("an unknown flag is an error, not silently ignored", async () => {
  const r = await aicr(["render-rbac", "sa", "--discover-netwrok"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('unknown flag "--discover-netwrok"');
});

test("a missing positional argument exits 2 with the usage hint", async () => {
  const r = await aicr(["render-rbac"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("SERVICE-ACCOUNT");
});

describe("errors end with a remedy line, without the HTTP client's own text", () => {
  let server: ReturnType<typeof Bun.serve>;
  let dir: string;
  beforeAll(async () => {
    // An apiserver that has no such ConfigMap: every request is a 404 Status.
    server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () =>
        Response.json(
          {
            kind: "Status",
            apiVersion: "v1",
            status: "Failure",
            reason: "NotFound",
            code: 404,
            message: 'configmaps "nope" not found',
          },
          { status: 404 },
        ),
    });
    dir = await mkdtemp(join(tmpdir(), "aicr-remedy-"));
  });
  afterAll(async () => {
    server.stop(true);
    await rm(dir, { recursive: true, force: true });
  });
  const kubeconfig = async (url: string): Promise<string> => {
    const path = join(dir, `kc-${Bun.hash(url)}`);
    await writeFile(
      path,
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${url}"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
    );
    return path;
  };
  const recipe = join(ROOT, "examples/recipe.yaml");

  test("validate -s cm://demo/nope: NOT_FOUND with a remedy", async () => {
    const kc = await kubeconfig(`http://127.0.0.1:${server.port}`);
    const r = await aicr(["validate", "-r", recipe, "-s", "cm://demo/nope", "--no-cluster"], {
      env: baseEnv({ KUBECONFIG: kc }),
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("cm://demo/nope");
    expect(r.stderr.trimEnd().split("\n").at(-1)).toMatch(/^\s+remedy: \S/);
  });

  test("an unreachable server: the errno in words, a remedy, no client text", async () => {
    const kc = await kubeconfig("https://127.0.0.1:1");
    const r = await aicr(["validate", "-r", recipe, "-s", "cm://demo/nope", "--no-cluster"], {
      env: baseEnv({ KUBECONFIG: kc }),
    });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain("cannot reach the Kubernetes API server");
    expect(r.stderr).not.toContain("Is the computer able to access the url?");
    expect(r.stderr.trimEnd().split("\n").at(-1)).toMatch(/^\s+remedy: \S/);
  });
});

describe("exit 6 and 7 carry the original's code strings (SERVICE_UNAVAILABLE, RATE_LIMIT_EXCEEDED)", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "aicr-codes-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const recipe = join(ROOT, "examples/recipe.yaml");

  for (const [status, exit, code] of [
    [503, 6, "SERVICE_UNAVAILABLE"],
    [429, 7, "RATE_LIMIT_EXCEEDED"],
  ] as const) {
    test(`an apiserver answering ${status}: exit ${exit}, [${code}] in text, "code": "${code}" in JSON`, async () => {
      const server = Bun.serve({
        port: 0,
        hostname: "127.0.0.1",
        fetch: () =>
          Response.json(
            { kind: "Status", apiVersion: "v1", status: "Failure", code: status, message: "injected" },
            { status, headers: { "retry-after": "0" } },
          ),
      });
      try {
        const kc = join(dir, `kc-${status}`);
        await writeFile(
          kc,
          `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:${server.port}"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
        );
        const args = ["validate", "-r", recipe, "-s", "cm://demo/snap", "--no-cluster"];
        const text = await aicr(args, { env: baseEnv({ KUBECONFIG: kc }) });
        expect(text.code).toBe(exit);
        expect(text.stderr).toContain(`[${code}]`);
        const json = await aicr([...args, "--log-json"], { env: baseEnv({ KUBECONFIG: kc }) });
        expect(json.code).toBe(exit);
        const last = JSON.parse(json.stderr.trimEnd().split("\n").at(-1) ?? "{}") as { code?: string };
        expect(last.code).toBe(code);
      } finally {
        server.stop(true);
      }
    });
  }
});
