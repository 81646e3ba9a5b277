import { describe, expect, test } from "bun:test";
import { planReceipt, tally } from "../../../src/legacy/_apply.ts";
import { buildPlan } from "../../../src/legacy/_plan.ts";
import { describeScope, entryLine, toJson } from "../../../src/legacy/report.ts";
import { legacySet, observation } from "./_observed.ts";

describe("report", () => {
  const plan = buildPlan(observation(legacySet("gpu-operator")), { force: false, includeConfigMaps: false });
  const receipt = planReceipt(plan);

  test("a plan's receipt marks deletes planned and guarded objects kept", () => {
    expect(tally(receipt)).toEqual({
      planned: 6,
      deleted: 0,
      alreadyGone: 0,
      changed: 0,
      failed: 0,
      notAttempted: 0,
      kept: 1,
    });
  });

  test("the JSON document carries kind, namespace, name, uid, action, reason and outcome per object", () => {
    const doc = toJson(receipt, { runId: "r", dryRun: true, stage: "plan" }) as {
      kind: string;
      objects: Record<string, unknown>[];
    };
    expect(doc.kind).toBe("LegacyCleanupPlan");
    const cm = doc.objects.find((o) => o.kind === "ConfigMap");
    expect(Object.keys(cm ?? {}).sort()).toEqual([
      "action",
      "kind",
      "name",
      "namespace",
      "outcome",
      "reason",
      "resourceVersion",
      "uid",
    ]);
    expect(cm?.outcome).toBe("kept");
    const crb = doc.objects.find((o) => o.kind === "ClusterRoleBinding");
    expect(crb && "namespace" in crb).toBe(false);
  });

  test("a text line says what happens, to which object, and why", () => {
    const first = receipt.entries[0];
    if (!first) throw new Error("empty plan");
    expect(entryLine(first)).toBe("delete   Job gpu-operator/aicr: legacy Job, finished; its pods go too");
  });

  test("a name or an apiserver error holding terminal escapes is shown escaped, on one line", () => {
    const first = receipt.entries[0];
    if (!first) throw new Error("empty plan");
    const line = entryLine({
      ...first,
      name: "aicr\x1b]0;pwned\x07\x1b[2J",
      outcome: "failed",
      error: "denied\n\x1b]0;pwned\x07\x1b[2J",
    });
    expect(line).toBe(
      "failed   Job gpu-operator/aicr\\u001b]0;pwned\\u0007\\u001b[2J: legacy Job, finished; its pods go too (denied\\n\\u001b]0;pwned\\u0007\\u001b[2J)",
    );
    expect(describeScope({ allNamespaces: false, namespaces: ["a\u202e"] })).toBe("namespace(s) a\\u202e");
  });
});
