import { describe, expect, test } from "bun:test";
import { planRun } from "../../../src/runs/_plan.ts";
import { ageText, groupRuns, jobStateOf, type Listed, runIdTime } from "../../../src/runs/_summary.ts";

const ID = "20260102-030405-0123456789abcdef";
const labels = (component: string, id = ID) => ({
  "app.kubernetes.io/name": "aicr",
  "app.kubernetes.io/component": component,
  "aicr.run/run-id": id,
});
const obj = (
  kind: string,
  name: string,
  extra: Partial<Listed> & { ns?: string; owner?: string; uid: string; component?: string },
): Listed => ({
  apiVersion: "v1",
  kind,
  metadata: {
    name,
    uid: extra.uid,
    ...(extra.ns ? { namespace: extra.ns } : {}),
    labels: labels(extra.component ?? "snapshot-agent"),
    ...(extra.owner ? { ownerReferences: [{ uid: extra.owner }] } : {}),
  },
  ...(extra.status ? { status: extra.status } : {}),
});

describe("runs summary (pure)", () => {
  test("the run ID's time; another shape has none", () => {
    expect(runIdTime(ID)).toBe("2026-01-02T03:04:05.000Z");
    expect(runIdTime("not-a-run")).toBeUndefined();
  });

  test("Job state from its conditions", () => {
    expect(jobStateOf(obj("Job", "j", { uid: "1" }))).toBe("active");
    expect(
      jobStateOf(
        obj("Job", "j", { uid: "1", status: { conditions: [{ type: "Complete", status: "True" }] } }),
      ),
    ).toBe("complete");
    expect(
      jobStateOf(obj("Job", "j", { uid: "1", status: { conditions: [{ type: "Failed", status: "True" }] } })),
    ).toBe("failed");
  });

  test("age: the largest two units", () => {
    const now = new Date("2026-01-03T04:05:06Z");
    expect(ageText("2026-01-02T03:04:05Z", now)).toBe("1d1h");
    expect(ageText("2026-01-03T04:05:00Z", now)).toBe("6s");
    expect(ageText(undefined, now)).toBe("?");
  });

  test("grouped by run ID; validate wins over its capture's snapshot agent; only roots are deleted", () => {
    const runs = groupRuns([
      obj("ClusterRole", `aicr-validator-${ID}`, { uid: "a", component: "validation" }),
      obj("ClusterRole", `aicr-node-reader-${ID}`, { uid: "b" }),
      obj("Job", `aicr-${ID}`, { uid: "c", ns: "x", owner: "b" }),
      obj("Pod", `aicr-${ID}-p`, { uid: "d", ns: "x", owner: "c", status: { phase: "Running" } }),
      obj("ConfigMap", `aicr-recipe-${ID}`, { uid: "e", ns: "x", component: "validation" }),
    ]);
    expect(runs).toHaveLength(1);
    const run = runs[0]!;
    expect(run.command).toBe("validate");
    expect(run.namespace).toBe("x");
    expect(run.job).toBe("active");
    expect(run.podLive).toBe(true);
    expect(run.anchors.sort()).toEqual([`aicr-node-reader-${ID}`, `aicr-validator-${ID}`]);
    const plan = planRun(run);
    expect(
      plan.rows
        .filter((r) => r.action === "delete")
        .map((r) => r.uid)
        .sort(),
    ).toEqual(["a", "b", "e"]);
  });
});
