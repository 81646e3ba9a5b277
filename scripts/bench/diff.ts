/**
 * `aicr diff` on two large snapshots: `bun scripts/bench/diff.ts [readings] [runs]`.
 * Writes a baseline and a target of the given size (default 20 000 readings across the six
 * measurement types, a GPU-node-like share of items; 1 % of the readings changed, a few added and
 * removed, every version re-spelled with a `v`), then times `dist/aicr diff` on them with
 * scripts/bench/cold-start.ts (text report and -o json). Figures go into docs/performance.md by hand.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";

const readings = Number(process.argv[2] ?? 20_000);
const runs = process.argv[3] ?? "20";
const TYPES = ["K8s", "GPU", "OS", "SystemD", "NodeTopology", "NetworkTopology"];

type Doc = { apiVersion: string; kind: string; metadata: Record<string, string>; measurements: unknown[] };

function snapshot(changed: boolean): Doc {
  const perType = Math.ceil(readings / TYPES.length);
  const measurements = TYPES.map((type, t) => {
    const subtypes = [];
    for (let s = 0; s < 10; s++) {
      const data: Record<string, string | number> = {};
      for (let k = 0; k < perType / 10; k++) {
        const n = t * perType + s * 1000 + k;
        // 1 % of readings change; versions keep their value but gain a `v` (no drift).
        data[`key-${k}`] = changed && n % 100 === 0 ? `value-${n}-new` : `value-${n}`;
        if (k % 50 === 0) data[`version-${k}`] = changed ? `v1.${k}.${s}` : `1.${k}.${s}`;
      }
      if (changed && s === 0) data["added-key"] = "new";
      if (!changed && s === 1) data["removed-key"] = "old";
      const items =
        type === "NetworkTopology"
          ? Array.from({ length: 8 }, (_, i) => ({
              context: { "pci-address": `0000:${(i + 0x10).toString(16)}:00.0` },
              data: {
                "numa-node": i % 2,
                "firmware-version": changed && i === 3 ? "28.40.1000" : "28.39.1002",
              },
            }))
          : undefined;
      subtypes.push({ subtype: `sub-${s}`, data, ...(items ? { items } : {}) });
    }
    return { type, subtypes };
  });
  return {
    apiVersion: "aicr.run/v1",
    kind: "Snapshot",
    metadata: {
      timestamp: changed ? "2026-12-02T00:00:00Z" : "2026-12-01T00:00:00Z",
      version: "0.1.0",
      "source-node": "gpu-node-1",
      "run-id": changed ? "20261202-000000-0000000000000002" : "20261201-000000-0000000000000001",
    },
    measurements,
  };
}

const dir = mkdtempSync(join(tmpdir(), "aicr-bench-diff-"));
try {
  const a = join(dir, "baseline.yaml");
  const b = join(dir, "target.yaml");
  writeFileSync(a, stringify(snapshot(false)));
  writeFileSync(b, stringify(snapshot(true)));
  console.log(`${readings} readings per snapshot (${(Bun.file(a).size / 1024).toFixed(0)} KiB of YAML)`);
  const coldStart = join(import.meta.dir, "cold-start.ts");
  for (const extra of [[], ["-o", "json"]]) {
    const proc = Bun.spawn(
      [process.execPath, coldStart, runs, "--", "diff", "-b", a, "--target", b, ...extra],
      { stdout: "inherit", stderr: "inherit" },
    );
    if ((await proc.exited) !== 0) throw new Error("the cold-start benchmark failed");
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
