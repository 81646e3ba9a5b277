import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { aicr, baseEnv, ROOT } from "./_aicr.ts";

let cwd: string;
beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), "aicr-snap-"));
});
afterEach(async () => {
  await rm(cwd, { recursive: true, force: true });
});

const subtype = (doc: ReturnType<typeof parseSnapshot>, type: string, name: string) =>
  doc.measurements.find((m) => m.type === type)?.subtypes.find((s) => s.subtype === name)?.data;

describe("aicr snapshot --local (compiled binary, this machine)", () => {
  test("prints a valid snapshot of this host with OS readings populated and no GPU", async () => {
    const r = await aicr(["snapshot", "--local"], { cwd });
    expect(r.code).toBe(0);
    const doc = parseSnapshot(r.stdout, "stdout");
    expect(doc.kind).toBe("Snapshot");
    expect(doc.apiVersion).toBe("aicr.run/v1");
    expect(doc.metadata.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    for (const name of ["release", "grub", "sysctl"]) {
      expect(Object.keys(subtype(doc, "OS", name) ?? {}).length).toBeGreaterThan(0);
    }
    // Some sandboxed kernels (this CI VM among them) have no /proc/modules: then kmod is absent, not empty.
    const kmod = subtype(doc, "OS", "kmod");
    if (existsSync("/proc/modules")) expect(Object.keys(kmod ?? {}).length).toBeGreaterThan(0);
    else expect(kmod).toBeUndefined();
    expect(subtype(doc, "OS", "sysctl")?.["/proc/sys/kernel/osrelease"]).toBeDefined();
    expect(subtype(doc, "GPU", "smi")?.["gpu-count"]).toBe(0);
    expect(doc.measurements.some((m) => m.type === "SystemD")).toBe(true);
    expect(doc.measurements.some((m) => m.type === "K8s")).toBe(false);
    expect(r.stderr).toContain("no cluster read");
  });

  test("-t json prints the same document as JSON", async () => {
    const r = await aicr(["snapshot", "--local", "-t", "json"], { cwd });
    expect(r.code).toBe(0);
    const doc = parseSnapshot(r.stdout, "stdout");
    expect(JSON.parse(r.stdout).kind).toBe("Snapshot");
    expect(subtype(doc, "GPU", "smi")?.["gpu-count"]).toBe(0);
  });

  test("an 8×H100 node (fixture host root and recorded nvidia-smi) reads back through the binary", async () => {
    const env = baseEnv({
      AICR_HOST_ROOT: join(ROOT, "test/fixtures/hosts/h100-node"),
      PATH: `${join(ROOT, "test/fixtures/bin/h100")}:${process.env.PATH}`,
      NODE_NAME: "gpu-node-1",
    });
    const r = await aicr(["snapshot", "--local"], { cwd, env });
    expect(r.code).toBe(0);
    const doc = parseSnapshot(r.stdout, "stdout");
    expect(doc.metadata["source-node"]).toBe("gpu-node-1");
    expect(subtype(doc, "GPU", "smi")?.["gpu-count"]).toBe(8);
    expect(subtype(doc, "GPU", "hardware")?.["gpu-count"]).toBe(8);
    expect(subtype(doc, "OS", "release")?.ID).toBe("ubuntu");
  });

  test("-o <file> writes the file and nothing on stdout", async () => {
    const out = join(cwd, "snap.yaml");
    const r = await aicr(["snapshot", "--local", "-o", out], { cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    expect(parseSnapshot(await readFile(out, "utf8"), out).kind).toBe("Snapshot");
  });

  test("-o refuses a symlink or a directory, writing nothing", async () => {
    await mkdir(join(cwd, "dir"));
    await symlink("/etc/hostname-should-not-change", join(cwd, "link"));
    for (const target of ["link", "dir"]) {
      const r = await aicr(["snapshot", "--local", "-o", join(cwd, target)], { cwd });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`invalid --output ${JSON.stringify(join(cwd, target))}`);
    }
    expect((await readdir(cwd)).sort()).toEqual(["dir", "link"]);
  });
});

const CLUSTER_TEST_MS = 60_000;

for (const backend of BACKENDS)
  describe(`[${backend}] aicr snapshot --local next to a running cluster`, () => {
    const cluster = useCluster(backend, { controllers: false });

    test(
      "KUBECONFIG set but no flag: this host only, no K8s measurement, and it says no cluster was read",
      async () => {
        const env = baseEnv({ KUBECONFIG: cluster().kubeconfigFor("admin") });
        const r = await aicr(["snapshot", "--local"], { cwd, env });
        expect(r.code, r.stderr).toBe(0);
        const doc = parseSnapshot(r.stdout, "stdout");
        expect(doc.measurements.some((m) => m.type === "K8s")).toBe(false);
        expect(r.stderr).toContain("no cluster read");
        expect(r.stderr).not.toContain(cluster().url);
      },
      CLUSTER_TEST_MS,
    );

    test(
      "--kubeconfig <that file>: the K8s readings, and the server it read is named",
      async () => {
        const kc = cluster().kubeconfigFor("admin");
        const r = await aicr(["snapshot", "--local", "--kubeconfig", kc], { cwd });
        expect(r.code, r.stderr).toBe(0);
        const doc = parseSnapshot(r.stdout, "stdout");
        expect(doc.measurements.some((m) => m.type === "K8s")).toBe(true);
        expect(r.stderr).toContain(`reading cluster ${cluster().url}`);
        expect(r.stderr).not.toContain("no cluster read");
      },
      CLUSTER_TEST_MS,
    );
  });

describe("aicr snapshot bad input: exit 2 before anything is collected", () => {
  const uris = [
    "cm://",
    "cm:///x",
    "cm://ns/",
    "cm://nsname",
    "cm://a/b/c",
    "cm://NS/name",
    "cm://ns/Bad_Name",
  ];
  for (const uri of uris) {
    test(`-o ${uri}`, async () => {
      const r = await aicr(["snapshot", "--local", "-o", uri], { cwd });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`"${uri}"`);
      expect(r.stderr).toContain("cm://<namespace>/<name>");
      expect(r.stderr).not.toContain("collecting");
      expect(r.stdout).toBe("");
    });
  }

  for (const [what, output, cause] of [
    ["a missing parent", "missing/x.yaml", "does not exist"],
    ["a file under /proc", "/proc/x.yaml", "under /proc"],
  ] as const)
    test(`-o ${what}: refused before collecting`, async () => {
      const r = await aicr(["snapshot", "--local", "-o", output], { cwd });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`[INVALID_REQUEST] invalid --output ${JSON.stringify(output)}: `);
      expect(r.stderr).toContain(cause);
      expect(r.stderr).not.toContain("collecting");
      expect(r.stdout).toBe("");
    });

  test("an unknown format", async () => {
    const r = await aicr(["snapshot", "--local", "-t", "xml"], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('"xml"');
    expect(r.stderr).not.toContain("collecting");
  });

  test("without --local and without a kubeconfig, it names the missing file and the remedy", async () => {
    const r = await aicr(["snapshot"], { cwd, env: baseEnv({ HOME: cwd }) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`kubeconfig "${join(cwd, ".kube/config")}" does not exist`);
    expect(r.stderr).toContain("--kubeconfig");
  });
});
