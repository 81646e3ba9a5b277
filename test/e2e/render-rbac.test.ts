import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { aicr, baseEnv } from "./_aicr.ts";

const RUN_ID = "20261129-101500-0123456789abcdef";
let cwd: string;
beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), "aicr-e2e-"));
});
afterEach(async () => {
  await rm(cwd, { recursive: true, force: true });
});

const yamlBody = (text: string) => parse(text.slice(text.indexOf("\n---\n") + 5)) as Record<string, any>;

describe("aicr render-rbac (compiled binary)", () => {
  test("writes the four files with the specified names, rules and modes", async () => {
    const r = await aicr(["render-rbac", "irsa-snapshotter", "-n", "gpu-operator", "--run-id", RUN_ID], {
      cwd,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    const dir = join(cwd, `snapshot-rbac-${RUN_ID}`);
    expect((await lstat(dir)).mode & 0o777).toBe(0o700);
    const files = (await readdir(dir)).sort();
    expect(files).toEqual([
      "01-role.yaml",
      "02-rolebinding.yaml",
      "03-clusterrole.yaml",
      "04-clusterrolebinding.yaml",
    ]);
    for (const f of files) expect((await lstat(join(dir, f))).mode & 0o777).toBe(0o600);

    const [role, binding, clusterRole, clusterBinding] = await Promise.all(
      files.map(async (f) => yamlBody(await readFile(join(dir, f), "utf8"))),
    );
    expect(role).toMatchObject({
      kind: "Role",
      metadata: { name: "aicr-agent-irsa-snapshotter-rbac", namespace: "gpu-operator" },
    });
    expect(role?.rules).toHaveLength(2);
    expect(binding?.subjects).toEqual([
      { kind: "ServiceAccount", name: "irsa-snapshotter", namespace: "gpu-operator" },
    ]);
    expect(clusterRole).toMatchObject({
      kind: "ClusterRole",
      metadata: { name: "aicr-agent-gpu-operator.irsa-snapshotter-rbac" },
    });
    expect(clusterRole?.rules).toHaveLength(6);
    expect(clusterBinding?.roleRef).toEqual({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "ClusterRole",
      name: "aicr-agent-gpu-operator.irsa-snapshotter-rbac",
    });

    const lines = r.stderr.trim().split("\n");
    expect(lines[0]).toBe(`aicr render-rbac: runID=${RUN_ID}`);
    expect(r.stderr).toContain(`snapshot-rbac-${RUN_ID}/`);
    for (const kn of [
      "Role/aicr-agent-irsa-snapshotter-rbac",
      "RoleBinding/aicr-agent-irsa-snapshotter-rbac",
      "ClusterRole/aicr-agent-gpu-operator.irsa-snapshotter-rbac",
      "ClusterRoleBinding/aicr-agent-gpu-operator.irsa-snapshotter-rbac",
    ]) {
      expect(r.stderr).toContain(kn);
    }
    expect(r.stderr).toContain(`kubectl apply -f snapshot-rbac-${RUN_ID}/`);
    expect(r.stderr).toContain(`kubectl delete -f snapshot-rbac-${RUN_ID}/`);
    expect(r.stderr).toContain("trade-off");
  });

  test("a dotted ServiceAccount name (valid in Kubernetes) is accepted; the object names stay valid", async () => {
    const r = await aicr(["render-rbac", "ci.gpu-runner", "-n", "gpu-operator", "--run-id", RUN_ID], { cwd });
    expect(r.code, r.stderr).toBe(0);
    const dir = join(cwd, `snapshot-rbac-${RUN_ID}`);
    const binding = yamlBody(await readFile(join(dir, "02-rolebinding.yaml"), "utf8"));
    expect(binding.metadata.name).toBe("aicr-agent-ci.gpu-runner-rbac");
    expect(binding.subjects).toEqual([
      { kind: "ServiceAccount", name: "ci.gpu-runner", namespace: "gpu-operator" },
    ]);
    const clusterRole = yamlBody(await readFile(join(dir, "03-clusterrole.yaml"), "utf8"));
    expect(clusterRole.metadata.name).toBe("aicr-agent-gpu-operator.ci.gpu-runner-rbac");
  });

  test("a second run writes a second directory", async () => {
    const a = await aicr(["render-rbac", "irsa-snapshotter", "-n", "gpu-operator"], { cwd });
    const b = await aicr(["render-rbac", "irsa-snapshotter", "-n", "gpu-operator"], { cwd });
    expect([a.code, b.code]).toEqual([0, 0]);
    const dirs = await readdir(cwd);
    expect(dirs).toHaveLength(2);
    for (const d of dirs) expect(d).toMatch(/^snapshot-rbac-[0-9]{8}-[0-9]{6}-[0-9a-f]{16}$/);
  });

  test("--discover-network adds exactly the 2 read-only discovery rules to the ClusterRole", async () => {
    const plainDir = join(cwd, "plain");
    const discDir = join(cwd, "disc");
    await Promise.all([mkdir(plainDir), mkdir(discDir)]);
    await aicr(["render-rbac", "sa", "-n", "ns", "--run-id", RUN_ID, "--dir", plainDir]);
    const r = await aicr([
      "render-rbac",
      "sa",
      "-n",
      "ns",
      "--run-id",
      RUN_ID,
      "--dir",
      discDir,
      "--discover-network",
    ]);
    expect(r.code).toBe(0);
    const read = async (d: string, f: string) =>
      yamlBody(await readFile(join(d, `snapshot-rbac-${RUN_ID}`, f), "utf8"));
    const plain = await read(plainDir, "03-clusterrole.yaml");
    const disc = await read(discDir, "03-clusterrole.yaml");
    expect(disc.rules.slice(0, 6)).toEqual(plain.rules);
    expect(disc.rules).toHaveLength(8);
    expect((await read(discDir, "01-role.yaml")).rules).toEqual((await read(plainDir, "01-role.yaml")).rules);
    const header = await readFile(join(discDir, `snapshot-rbac-${RUN_ID}`, "03-clusterrole.yaml"), "utf8");
    expect(header).toContain("READ-ONLY");
    expect(header).not.toContain("MUTATING");
    expect(r.stderr).not.toContain("MUTATING");
    expect(r.stderr).toContain("NicDevice and NicClusterPolicy");
  });

  test("-o json prints a machine-readable summary on stdout only", async () => {
    const r = await aicr(["render-rbac", "sa", "-n", "ns", "--run-id", RUN_ID, "-o", "json"], { cwd });
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({
      runId: RUN_ID,
      namespace: "ns",
      serviceAccount: "sa",
      discoverNetwork: false,
    });
    expect(summary.objects.map((o: { kind: string }) => o.kind)).toEqual([
      "Role",
      "RoleBinding",
      "ClusterRole",
      "ClusterRoleBinding",
    ]);
  });

  test("--log-json makes every stderr line a JSON object, the first one carrying the run ID", async () => {
    const r = await aicr(["render-rbac", "sa", "-n", "ns", "--run-id", RUN_ID, "--log-json"], { cwd });
    expect(r.code).toBe(0);
    const lines = r.stderr
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0].msg).toContain(RUN_ID);
    for (const l of lines) expect(typeof l.level).toBe("string");
    for (const l of lines) expect(l.runId).toBe(RUN_ID);
  });
});

describe("render-rbac never contacts a cluster", () => {
  let server: Server;
  let connections = 0;
  beforeEach(async () => {
    connections = 0;
    server = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test("with KUBECONFIG pointing at a missing file", async () => {
    const r = await aicr(["render-rbac", "sa", "-n", "ns"], {
      cwd,
      env: baseEnv({ KUBECONFIG: join(cwd, "missing") }),
    });
    expect(r.code).toBe(0);
  });

  test("with KUBECONFIG pointing at a live server: zero connections (--kubeconfig is not a render-rbac flag)", async () => {
    const port = (server.address() as { port: number }).port;
    const kubeconfig = join(cwd, "kubeconfig");
    await Bun.write(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
    );
    const r = await aicr(["render-rbac", "sa", "-n", "ns"], {
      cwd,
      env: baseEnv({ KUBECONFIG: kubeconfig }),
    });
    expect(r.code).toBe(0);
    // A probe connection proves the server was reachable, so zero from aicr means aicr never tried.
    await new Promise<void>((resolve) => {
      const probe = Bun.connect({
        hostname: "127.0.0.1",
        port,
        socket: { data() {}, close: () => resolve(), open: (s) => void s.end() },
      });
      void probe;
    });
    expect(connections).toBe(1);
  });
});

describe("render-rbac bad input: exit 2, nothing written", () => {
  const cases: [string, string[]][] = [
    ["upper-case service account", ["render-rbac", "IRSA", "-n", "ns"]],
    ["service account with underscore", ["render-rbac", "irsa_sa", "-n", "ns"]],
    ["namespace that is not a DNS-1123 label", ["render-rbac", "sa", "-n", "GPU.Operator"]],
    ["254-character service account", ["render-rbac", "a".repeat(254), "-n", "ns"]],
    ["dotted namespace (namespaces are labels)", ["render-rbac", "sa", "-n", "gpu.operator"]],
    ["malformed --run-id", ["render-rbac", "sa", "-n", "ns", "--run-id", "build-42"]],
    ["bad -o value", ["render-rbac", "sa", "-n", "ns", "-o", "yaml"]],
  ];
  for (const [what, args] of cases) {
    test(what, async () => {
      const r = await aicr(args, { cwd });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("[INVALID_REQUEST]");
      expect(r.stderr).toContain("remedy:");
      expect(await readdir(cwd)).toEqual([]);
    });
  }

  test("a malformed AICR_RUN_ID is rejected before anything else", async () => {
    const r = await aicr(["render-rbac", "sa", "-n", "ns"], {
      cwd,
      env: baseEnv({ AICR_RUN_ID: "not-a-run-id" }),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("AICR_RUN_ID");
    expect(r.stderr).not.toContain("runID=");
    expect(await readdir(cwd)).toEqual([]);
  });

  test("an existing directory is CONFLICT (exit 2) and is left untouched", async () => {
    const dir = join(cwd, `snapshot-rbac-${RUN_ID}`);
    await mkdir(dir);
    const r = await aicr(["render-rbac", "sa", "-n", "ns", "--run-id", RUN_ID], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("[CONFLICT]");
    expect(await readdir(dir)).toEqual([]);
  });

  test("a symlink at the target path is not followed", async () => {
    const victim = join(cwd, "victim");
    await mkdir(victim);
    await symlink(victim, join(cwd, `snapshot-rbac-${RUN_ID}`));
    const r = await aicr(["render-rbac", "sa", "-n", "ns", "--run-id", RUN_ID], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("symlink");
    expect(await readdir(victim)).toEqual([]);
  });
});
