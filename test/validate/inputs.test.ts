/** Inputs from ConfigMaps, and a check that runs out of time. */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { HANGING_TAG } from "../cluster/gpu-operator.ts";
import { resource } from "../cluster/resources.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { aicr, baseEnv } from "../e2e/_aicr.ts";
import { useCluster } from "../support/cluster.ts";
import {
  ctrf,
  LONG,
  NS,
  runId,
  SAMPLE_RECIPE,
  SNAPSHOT,
  untilRunGone,
  validate,
  validationCluster,
} from "./_harness.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { hookMs: LONG, start: validationCluster });

    test(
      "recipe and snapshot from cm:// inputs; the caller's ConfigMaps are read, never changed",
      async () => {
        const store = cluster().store;
        await store.create(resource("namespaces"), {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: "inputs" },
        });
        for (const [name, key, file] of [
          ["my-recipe", "recipe.yaml", SAMPLE_RECIPE],
          ["my-snapshot", "snapshot.yaml", SNAPSHOT],
        ] as const)
          await store.create(resource("configmaps"), {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name, namespace: "inputs" },
            data: { [key]: readFileSync(file, "utf8") },
          });
        const r = await validate(cluster(), [
          "-r",
          "cm://inputs/my-recipe",
          "-s",
          "cm://inputs/my-snapshot",
          "--no-cluster",
        ]);
        expect(r.code).toBe(0);
        expect(ctrf(r).summary).toMatchObject({ passed: 5, skipped: 3 });
        const missing = await validate(cluster(), [
          "-r",
          "cm://inputs/none",
          "-s",
          "cm://inputs/my-snapshot",
          "--no-cluster",
        ]);
        expect(missing.code).toBe(3);
        expect(missing.stderr).toContain("inputs/none");
        expect(
          store.find(resource("configmaps"), "inputs", "my-recipe")?.metadata.resourceVersion,
        ).toBeDefined();
      },
      LONG,
    );

    test(
      "a check that never finishes is reported other and the run exits 5 (TIMEOUT); its Job is cleaned up",
      async () => {
        const id = runId("9");
        const kubeconfig = cluster().kubeconfigFor("admin");
        const r = await aicr(
          [
            "validate",
            "-r",
            SAMPLE_RECIPE,
            "-s",
            SNAPSHOT,
            "-k",
            kubeconfig,
            "-n",
            NS,
            "--run-id",
            id,
            "--image",
            `validator:${HANGING_TAG}`,
            "--timeout",
            "2s",
            "--skip-check",
            "expected-resources",
            "--skip-check",
            "gpu-operator-version",
          ],
          { env: baseEnv() },
        );
        expect(r.code).toBe(5);
        const health = ctrf(r).tests.find((t) => t.name === "operator-health");
        expect(health?.status).toBe("other");
        expect(health?.message).toContain("timed out: check operator-health did not finish within 2s");
        await untilRunGone(cluster(), NS, id);
      },
      LONG,
    );
  });
