/** Overlapping runs in one namespace: snapshot + validate, and two validates. No shared object, each its own results. */
import { describe, expect, test } from "bun:test";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { aicr, baseEnv } from "../e2e/_aicr.ts";
import { useCluster } from "../support/cluster.ts";
import {
  createdObjects,
  ctrf,
  IMAGE,
  LONG,
  NS,
  runId,
  SAMPLE_RECIPE,
  untilRunGone,
  validate,
  validationCluster,
} from "./_harness.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { hookMs: LONG, start: validationCluster });

    /** Names created under each run ID; no name may appear under two. */
    function namesByRun(ids: string[]): Map<string, string[]> {
      const made = createdObjects(cluster());
      return new Map(
        ids.map((id) => [
          id,
          made.filter((o) => o.labels["aicr.run/run-id"] === id).map((o) => `${o.kind}/${o.name}`),
        ]),
      );
    }

    function expectDisjoint(byRun: Map<string, string[]>): void {
      const owner = new Map<string, string>();
      for (const [id, names] of byRun)
        for (const n of names) {
          expect({ name: n, alsoIn: owner.get(n) }).toEqual({ name: n, alsoIn: undefined });
          owner.set(n, id);
        }
    }

    test(
      "a snapshot and a validate overlapping in one namespace: no shared object, each its own result, all cleaned",
      async () => {
        const [s, v] = [runId("f"), runId("f")];
        const kubeconfig = cluster().kubeconfigFor("admin");
        const [snap, val] = await Promise.all([
          aicr(["snapshot", "-k", kubeconfig, "-n", NS, "--image", IMAGE, "--run-id", s], { env: baseEnv() }),
          validate(cluster(), ["-r", SAMPLE_RECIPE, "--run-id", v]),
        ]);
        expect({ code: snap.code, err: snap.code ? snap.stderr : "" }).toEqual({ code: 0, err: "" });
        expect({ code: val.code, err: val.code ? val.stderr : "" }).toEqual({ code: 0, err: "" });
        expect(parseSnapshot(snap.stdout, "snapshot").metadata["run-id"]).toBe(s);
        expect(ctrf(val).summary).toMatchObject({ failed: 0, other: 0 });
        const byRun = namesByRun([s, v]);
        expect(byRun.get(s)?.length).toBeGreaterThan(0);
        expect(byRun.get(v)?.some((n) => n === `Job/aicr-validate-${v}`)).toBe(true);
        expectDisjoint(byRun);
        await untilRunGone(cluster(), NS, s);
        await untilRunGone(cluster(), NS, v);
      },
      LONG,
    );

    test(
      "two validates overlapping: each deploys and cleans only its own objects, each reports its own checks",
      async () => {
        const [a, b] = [runId("a0"), runId("b0")];
        const [ra, rb] = await Promise.all([
          validate(cluster(), ["-r", SAMPLE_RECIPE, "--run-id", a]),
          validate(cluster(), ["-r", SAMPLE_RECIPE, "--run-id", b]),
        ]);
        for (const r of [ra, rb]) {
          expect({ code: r.code, err: r.code ? r.stderr : "" }).toEqual({ code: 0, err: "" });
          expect(ctrf(r).tests.filter((t) => t.status === "passed").length).toBe(8);
        }
        expect(ra.stderr).toContain(`runID=${a}`);
        expect(ra.stderr).not.toContain(b);
        expect(rb.stderr).not.toContain(a);
        const byRun = namesByRun([a, b]);
        expect(byRun.get(a)?.length).toBe(byRun.get(b)?.length);
        expectDisjoint(byRun);
        await untilRunGone(cluster(), NS, a);
        await untilRunGone(cluster(), NS, b);
      },
      LONG,
    );
  });
