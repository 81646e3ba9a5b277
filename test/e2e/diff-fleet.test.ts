/**
 * `aicr diff --fleet` from the compiled binary: eight nodes' snapshots with seeded drift (a kernel on
 * two nodes, a sysctl on one, a driver on three, a module missing on one) and node-specific readings
 * that differ everywhere; a directory and the same fleet as one multi-document file. No cluster.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { aicr, baseEnv, ROOT } from "./_aicr.ts";

const FIX = join(ROOT, "test/fixtures/fleet");
const NODES = join(FIX, "nodes");
const STREAM = join(FIX, "all-nodes.yaml");
const GOLDEN = join(FIX, "golden.yaml");
const ALL = Array.from({ length: 8 }, (_, i) => `gpu-node-0${i + 1}`);
const except = (...names: string[]) => ALL.filter((n) => !names.includes(n));

/** The seeded drift, exactly: path → groups (majority first). */
const SEEDED = [
  {
    path: "GPU.smi.driver",
    groups: [
      { value: "570.124.06", count: 5, nodes: except("gpu-node-02", "gpu-node-04", "gpu-node-07") },
      { value: "570.133.20", count: 3, nodes: ["gpu-node-02", "gpu-node-04", "gpu-node-07"] },
    ],
  },
  {
    path: "OS.kmod.nvidia_peermem",
    groups: [
      { value: true, count: 7, nodes: except("gpu-node-08") },
      { value: null, count: 1, nodes: ["gpu-node-08"] },
    ],
  },
  {
    path: "OS.sysctl./proc/sys/kernel/osrelease",
    groups: [
      { value: "6.8.0-1017-nvidia", count: 6, nodes: except("gpu-node-03", "gpu-node-06") },
      { value: "6.8.0-1020-nvidia", count: 2, nodes: ["gpu-node-03", "gpu-node-06"] },
    ],
  },
  {
    path: "OS.sysctl./proc/sys/vm/swappiness",
    groups: [
      { value: "60", count: 7, nodes: except("gpu-node-05") },
      { value: "10", count: 1, nodes: ["gpu-node-05"] },
    ],
  },
];

const TEXT_LINES = [
  "GPU",
  "  GPU.smi.driver: 570.124.06 on 5 of 8 nodes; 570.133.20 on 3: gpu-node-02, gpu-node-04, gpu-node-07",
  "OS",
  "  OS.kmod.nvidia_peermem: true on 7 of 8 nodes; <absent> on 1: gpu-node-08",
  "  OS.sysctl./proc/sys/kernel/osrelease: 6.8.0-1017-nvidia on 6 of 8 nodes; 6.8.0-1020-nvidia on 2: gpu-node-03, gpu-node-06",
  "  OS.sysctl./proc/sys/vm/swappiness: 60 on 7 of 8 nodes; 10 on 1: gpu-node-05",
  "",
  "4 readings drift across 8 nodes: 7 nodes differ from the majority (19 node-specific readings not compared)",
  "",
].join("\n");

// A kubeconfig pointing nowhere: a fleet diff never reads or uses it.
let dir: string;
let env: Record<string, string>;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "aicr-diff-fleet-"));
  const kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, "this is not a kubeconfig: [");
  env = baseEnv({ KUBECONFIG: kubeconfig });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("aicr diff --fleet", () => {
  test("a directory: exactly the seeded readings, with counts and nodes; nothing node-specific; exit 0", async () => {
    const r = await aicr(["diff", "--fleet", NODES], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`fleet:    ${NODES} (8 nodes)\n\n${TEXT_LINES}`);
    for (const quiet of [
      "hostname",
      "uuid",
      "boot_id",
      "pci-address",
      "node-guid",
      "nearest-gpus",
      "NodeTopology",
      "provider-id",
      "internal-dns",
      "kubelet-version",
      "file-nr",
    ])
      expect(r.stdout).not.toContain(quiet);
    expect(r.stderr).toBe("");
  });

  test("the same fleet as one multi-document file reads the same", async () => {
    const r = await aicr(["diff", "--fleet", STREAM], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`fleet:    ${STREAM} (8 nodes)\n\n${TEXT_LINES}`);
  });

  test("-o json and -o yaml: the same document, every group's nodes in full", async () => {
    const json = await aicr(["diff", "--fleet", NODES, "-o", "json"], { env });
    const yaml = await aicr(["diff", "--fleet", NODES, "-o", "yaml"], { env });
    expect(json.code).toBe(0);
    expect(yaml.code).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(parseYaml(yaml.stdout)).toEqual(doc);
    expect(doc).toEqual({
      source: NODES,
      nodes: ALL,
      drift: SEEDED,
      summary: { readings: 4, nodes: 8, differing: 7, nodeSpecific: 19, ignored: 0 },
    });
  });

  test("--fail-on-drift: the full report, then CONFLICT, exit 2; without drift exit 0", async () => {
    const r = await aicr(["diff", "--fleet", NODES, "--fail-on-drift"], { env });
    expect(r.code).toBe(2);
    expect(r.stdout).toEndWith(TEXT_LINES);
    expect(r.stderr).toContain("[CONFLICT]");
    expect(r.stderr).toContain("remedy:");

    const ignored = await aicr(
      ["diff", "--fleet", NODES, "--fail-on-drift", "--ignore", "GPU.**", "--ignore=OS.*.*"],
      { env },
    );
    expect(ignored.code).toBe(0);
    expect(ignored.stdout).toContain("no drift: 8 nodes agree on every compared reading");
    expect(
      JSON.parse((await aicr(["diff", "--fleet", NODES, "--ignore", "GPU.**", "-o", "json"], { env })).stdout)
        .summary.ignored,
    ).toBe(5);
  });

  test("--baseline <node>: its value first, the nodes that differ from it", async () => {
    const r = await aicr(["diff", "--fleet", NODES, "--baseline", "gpu-node-02", "-o", "json"], { env });
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.baseline).toBe("gpu-node-02");
    const driver = doc.drift.find((d: { path: string }) => d.path === "GPU.smi.driver");
    expect(driver.groups).toEqual([
      { value: "570.133.20", count: 3, nodes: ["gpu-node-02", "gpu-node-04", "gpu-node-07"], baseline: true },
      { value: "570.124.06", count: 5, nodes: except("gpu-node-02", "gpu-node-04", "gpu-node-07") },
    ]);
    // Nodes off the baseline in at least one reading: the driver's five already include the others.
    expect(doc.summary.differing).toBe(5);

    const text = await aicr(["diff", "--fleet", NODES, "-b", "gpu-node-02"], { env });
    expect(text.stdout).toContain("baseline: gpu-node-02\n");
    expect(text.stdout).toContain(
      "  GPU.smi.driver: 570.133.20 (baseline) on 3 of 8 nodes: gpu-node-02, gpu-node-04, gpu-node-07; 570.124.06 on 5: gpu-node-01, gpu-node-03, gpu-node-05 +2 more\n",
    );
    expect(text.stdout).toContain(
      "4 readings drift across 8 nodes: 5 nodes differ from the baseline gpu-node-02",
    );
  });

  test("--baseline <file>: a snapshot outside the fleet; a node that matches it everywhere is no drift", async () => {
    const r = await aicr(["diff", "--fleet", STREAM, "--baseline", GOLDEN, "-o", "json"], { env });
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.baseline).toBe(GOLDEN);
    expect(doc.drift.map((d: { path: string }) => d.path)).toEqual(SEEDED.map((s) => s.path));
    expect(doc.drift[0].groups[0]).toEqual({
      value: "570.133.20",
      count: 3,
      nodes: ["gpu-node-02", "gpu-node-04", "gpu-node-07"],
      baseline: true,
    });

    // One node alone, compared with itself: nothing differs.
    const one = join(dir, "one");
    mkdirSync(one);
    copyFileSync(join(NODES, "gpu-node-01.yaml"), join(one, "gpu-node-01.yaml"));
    const self = await aicr(["diff", "--fleet", one, "-b", "gpu-node-01", "--fail-on-drift"], { env });
    expect(self.code).toBe(0);
    expect(self.stdout).toContain("no drift: 1 node matches the baseline gpu-node-01");
  });

  test("bad input is INVALID_REQUEST, exit 2, nothing on stdout", async () => {
    const empty = join(dir, "empty");
    mkdirSync(empty);
    const dup = join(dir, "dup");
    mkdirSync(dup);
    copyFileSync(join(NODES, "gpu-node-01.yaml"), join(dup, "a.yaml"));
    copyFileSync(join(NODES, "gpu-node-01.yaml"), join(dup, "b.yaml"));
    const broken = join(dir, "broken");
    mkdirSync(broken);
    copyFileSync(join(NODES, "gpu-node-01.yaml"), join(broken, "gpu-node-01.yaml"));
    copyFileSync(join(ROOT, "test/fixtures/diff/broken.yaml"), join(broken, "gpu-node-02.yaml"));

    const cases: [string[], string][] = [
      [["--fleet", empty], "holds no snapshot"],
      [["--fleet", join(dir, "nope")], "no such file or directory"],
      [
        ["--fleet", dup],
        `node "gpu-node-01" appears twice in --fleet: ${join(dup, "a.yaml")} and ${join(dup, "b.yaml")}`,
      ],
      [["--fleet", broken], `Snapshot "${join(broken, "gpu-node-02.yaml")}" does not match`],
      [["--fleet", NODES, "--target", GOLDEN], "--fleet and --target cannot be used together"],
      [["--fleet", NODES, "-b", "gpu-node-99"], '--baseline "gpu-node-99" is neither a node of the fleet'],
      [["--fleet", NODES, "-b", "cm://ops/golden"], "invalid --baseline"],
      [["--fleet", NODES, "-o", "table"], "invalid --output"],
      [["--fleet", NODES, "--ignore="], "invalid --ignore"],
      [["--fleet="], 'invalid --fleet "": an empty value'],
    ];
    for (const [args, message] of cases) {
      const r = await aicr(["diff", ...args], { env });
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toContain(message);
      expect(r.stderr).toContain("remedy:");
      expect(r.stdout).toBe("");
    }
  });
});
