/**
 * `aicr diff` with cm:// inputs: the ConfigMaps are read with the kubeconfig (GETs only, nothing
 * written); a bad file on the other side is refused before any request.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { resource } from "../cluster/resources.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { aicr, baseEnv, ROOT } from "../e2e/_aicr.ts";
import { useCluster } from "../support/cluster.ts";
import { requestsSince } from "../support/requests.ts";

const FIX = join(ROOT, "test/fixtures/diff");
const NS = "diff-inputs";
const TEST_MS = 60_000;

for (const backend of BACKENDS)
  describe(`[${backend}] aicr diff with cm:// inputs`, () => {
    const cluster = useCluster(backend, { controllers: false });
    const env = () => baseEnv({ KUBECONFIG: cluster().kubeconfigFor("admin") });

    let seeded = false;
    const seed = async () => {
      if (seeded) return;
      seeded = true;
      const store = cluster().store;
      await store.create(resource("namespaces"), {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: NS },
      });
      for (const [name, data] of [
        ["golden", { "snapshot.yaml": readFileSync(join(FIX, "baseline.yaml"), "utf8"), format: "yaml" }],
        ["today", { "snapshot.yaml": readFileSync(join(FIX, "target.yaml"), "utf8") }],
        ["other", { "notes.txt": "a", "more.txt": "b" }],
      ] as const)
        await store.create(resource("configmaps"), {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name, namespace: NS },
          data,
        });
    };

    test(
      "two ConfigMaps: read with GETs only, the report and CONFLICT with --fail-on-drift",
      async () => {
        await seed();
        const before = cluster().log.entries.length;
        const r = await aicr(
          [
            "diff",
            "-b",
            `cm://${NS}/golden`,
            "--target",
            `cm://${NS}/today`,
            "--fail-on-drift",
            "-o",
            "json",
          ],
          { env: env() },
        );
        expect(r.code).toBe(2);
        expect(r.stderr).toContain("[CONFLICT]");
        const doc = JSON.parse(r.stdout);
        expect(doc.baselineSource).toBe(`cm://${NS}/golden`);
        expect(doc.targetSource).toBe(`cm://${NS}/today`);
        expect(doc.summary).toEqual({ added: 3, removed: 1, modified: 5, total: 9 });
        const sent = requestsSince(cluster(), before);
        expect(sent.every((line) => line.startsWith("GET "))).toBe(true);
        expect(sent).toContain(`GET /api/v1/namespaces/${NS}/configmaps/golden`);
        expect(sent).toContain(`GET /api/v1/namespaces/${NS}/configmaps/today`);
      },
      TEST_MS,
    );

    test(
      "a file and a ConfigMap holding the same readings: no drift",
      async () => {
        await seed();
        const r = await aicr(
          ["diff", "-b", join(FIX, "metadata-only.yaml"), "--target", `cm://${NS}/golden`],
          {
            env: env(),
          },
        );
        expect(r.code).toBe(0);
        expect(r.stdout).toEndWith("no drift: 0 changes\n");
      },
      TEST_MS,
    );

    test(
      "a bad file is refused before any request; a missing ConfigMap is NOT_FOUND; one without a snapshot key exit 2",
      async () => {
        await seed();
        const before = cluster().log.entries.length;
        const bad = await aicr(["diff", "-b", `cm://${NS}/golden`, "--target", join(FIX, "broken.yaml")], {
          env: env(),
        });
        expect(bad.code).toBe(2);
        expect(bad.stderr).toContain("measurements[0].type");
        expect(requestsSince(cluster(), before)).toEqual([]);

        const missing = await aicr(["diff", "-b", `cm://${NS}/nope`, "--target", join(FIX, "target.yaml")], {
          env: env(),
        });
        expect(missing.code).toBe(3);
        expect(missing.stderr).toContain(`--baseline cm://${NS}/nope: ConfigMap nope not found`);

        const nokey = await aicr(["diff", "-b", join(FIX, "target.yaml"), "--target", `cm://${NS}/other`], {
          env: env(),
        });
        expect(nokey.code).toBe(2);
        expect(nokey.stderr).toContain("holds no snapshot");
      },
      TEST_MS,
    );
  });
