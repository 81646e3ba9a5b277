/** The snapshot flags added for issue 16: presentation, provider files, --cluster-config, --os. */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { resolveOs, resolvePresentation } from "../../../src/commands/_node.ts";
import { resolveSnapshotOptions, type SnapshotFlags } from "../../../src/commands/_snapshot-flags.ts";
import { parseDestination } from "../../../src/snapshot/deliver.ts";
import { thrown } from "../../support/reject.ts";

const FIXTURES = join(import.meta.dir, "../../fixtures");
const flags = (extra: Partial<SnapshotFlags> = {}): SnapshotFlags => ({
  namespace: "gpu-operator",
  imagePullSecrets: [],
  nodeSelectors: [],
  tolerations: [],
  ...extra,
});

describe("resolvePresentation", () => {
  const stdout = parseDestination(undefined);
  const cm = parseDestination("cm://gpu-operator/snap");

  test("yaml, json, table; anything else refused", () => {
    expect(resolvePresentation({}, stdout).presentation).toEqual({ kind: "yaml" });
    expect(resolvePresentation({ format: "table" }, stdout)).toMatchObject({
      format: "yaml",
      presentation: { kind: "table" },
    });
    expect(resolvePresentation({ format: "json" }, stdout).format).toBe("json");
    expect(thrown(() => resolvePresentation({ format: "xml" }, stdout)).code).toBe("INVALID_REQUEST");
  });

  test("table, --template and provider files are refused with a cm:// output", () => {
    const template = join(FIXTURES, "templates/summary.tmpl");
    const oke = join(FIXTURES, "providers/oke-addons.json");
    for (const f of [{ format: "table" }, { template }, { okeAddons: oke }]) {
      const err = thrown(() => resolvePresentation(f, cm));
      expect(err.code).toBe("INVALID_REQUEST");
      expect(err.message).toContain("cm://");
    }
  });

  test("--template needs -t yaml; it is parsed here", () => {
    const template = join(FIXTURES, "templates/summary.tmpl");
    expect(thrown(() => resolvePresentation({ format: "json", template }, stdout)).message).toContain(
      "--template",
    );
    expect(resolvePresentation({ template }, stdout).presentation.kind).toBe("template");
    const broken = join(FIXTURES, "templates/broken.tmpl");
    expect(thrown(() => resolvePresentation({ template: broken }, stdout)).message).toMatch(
      /line \d+, column \d+/,
    );
  });

  test("provider files are projected in flag order", () => {
    const r = resolvePresentation(
      {
        gkeGpuPools: join(FIXTURES, "providers/gke-gpu-pools.json"),
        okeAddons: join(FIXTURES, "providers/oke-addons.json"),
      },
      stdout,
    );
    expect(r.providerReadings.map((s) => s.subtype)).toEqual(["oke-addons", "gke-gpu-pools"]);
  });
});

describe("resolveSnapshotOptions (remote mode)", () => {
  test("--cluster-config is refused with a remedy naming --local", () => {
    const err = thrown(() => resolveSnapshotOptions(flags({ clusterConfig: "cc.yaml" }), {}));
    expect(err.code).toBe("INVALID_REQUEST");
    expect((err as { remedy?: string }).remedy).toContain("--local");
  });

  test("provider readings and a table presentation ride along; yaml leaves presentation out", () => {
    const o = resolveSnapshotOptions(
      flags({ format: "table", aksGpuPools: join(FIXTURES, "providers/aks-gpu-pools.json") }),
      {},
    );
    expect(o.presentation).toEqual({ kind: "table" });
    expect(o.providerReadings?.[0]?.subtype).toBe("aks-gpu-pools");
    expect(resolveSnapshotOptions(flags(), {}).presentation).toBeUndefined();
  });
});

describe("--os", () => {
  test("a known family, else INVALID_REQUEST", () => {
    expect(resolveOs("talos")).toBe("talos");
    expect(resolveOs(undefined)).toBeUndefined();
    expect(thrown(() => resolveOs("windows")).code).toBe("INVALID_REQUEST");
  });
});
