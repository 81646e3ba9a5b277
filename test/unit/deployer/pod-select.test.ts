import { describe, expect, test } from "bun:test";
import { ownedByJob, pickOwnedPod } from "../../../src/deployer/pod-select.ts";
import type { Json, V1Pod } from "../../../src/kube/types.ts";

type Pod = Json<V1Pod>;

const JOB = "job-uid-a";
const OTHER = "job-uid-b";

function pod(
  name: string,
  o: {
    created?: string;
    owner?: string;
    kind?: string;
    controller?: boolean;
    phase?: string;
    deleting?: boolean;
    labels?: Record<string, string>;
  } = {},
): Pod & { metadata: { name: string; labels?: Record<string, string> } } {
  return {
    metadata: {
      name,
      creationTimestamp: o.created ?? "2026-11-29T12:00:00Z",
      ...(o.deleting ? { deletionTimestamp: "2026-11-29T12:05:00Z" } : {}),
      ...(o.labels ? { labels: o.labels } : {}),
      ownerReferences:
        o.owner === undefined
          ? []
          : [
              {
                apiVersion: "batch/v1",
                kind: o.kind ?? "Job",
                name: "agent",
                uid: o.owner,
                ...(o.controller === undefined ? {} : { controller: o.controller }),
              },
            ],
    },
    status: { phase: o.phase ?? "Running" },
  };
}

describe("ownedByJob", () => {
  const rows: [string, Pod, string, boolean][] = [
    ["matching controller reference", pod("p", { owner: JOB, controller: true }), JOB, true],
    ["another Job's UID", pod("p", { owner: OTHER, controller: true }), JOB, false],
    ["a non-controller reference", pod("p", { owner: JOB, controller: false }), JOB, false],
    ["controller unset", pod("p", { owner: JOB }), JOB, false],
    [
      "kind ReplicaSet with the UID",
      pod("p", { owner: JOB, kind: "ReplicaSet", controller: true }),
      JOB,
      false,
    ],
    ["no owner references", pod("p"), JOB, false],
    [
      "a forged controller-uid label only",
      pod("p", { labels: { "batch.kubernetes.io/controller-uid": JOB } }),
      JOB,
      false,
    ],
    ["an empty Job UID never matches", pod("p", { owner: "", controller: true }), "", false],
  ];
  for (const [name, p, uid, want] of rows) test(name, () => expect(ownedByJob(p, uid)).toBe(want));
});

describe("pickOwnedPod", () => {
  const at = (s: number) => `2026-11-29T12:00:${String(s).padStart(2, "0")}Z`;

  test("a younger pod of another Job carrying the run's labels is rejected", () => {
    const mine = pod("mine", { owner: JOB, controller: true, created: at(1) });
    const impostor = pod("impostor", { owner: OTHER, controller: true, created: at(9) });
    expect(pickOwnedPod([impostor, mine], JOB)?.metadata.name).toBe("mine");
  });

  test("the youngest owned pod wins", () => {
    const old = pod("old", { owner: JOB, controller: true, created: at(1) });
    const young = pod("young", { owner: JOB, controller: true, created: at(5) });
    expect(pickOwnedPod([young, old], JOB)?.metadata.name).toBe("young");
    expect(pickOwnedPod([old, young], JOB)?.metadata.name).toBe("young");
  });

  test("only unowned pods → none", () => {
    expect(pickOwnedPod([pod("x", { owner: OTHER, controller: true }), pod("y")], JOB)).toBeUndefined();
  });

  test("pods being deleted are skipped", () => {
    const deleting = pod("deleting", { owner: JOB, controller: true, created: at(9), deleting: true });
    const live = pod("live", { owner: JOB, controller: true, created: at(1) });
    expect(pickOwnedPod([deleting, live], JOB)?.metadata.name).toBe("live");
  });

  test("Failed pods are skipped unless asked for (the log of a failed run)", () => {
    const failed = pod("failed", { owner: JOB, controller: true, created: at(9), phase: "Failed" });
    expect(pickOwnedPod([failed], JOB)).toBeUndefined();
    expect(pickOwnedPod([failed], JOB, { includeFailed: true })?.metadata.name).toBe("failed");
  });

  test("no pods, or no Job UID yet → none (never a label-only fallback)", () => {
    expect(pickOwnedPod([], JOB)).toBeUndefined();
    expect(pickOwnedPod([pod("p", { owner: JOB, controller: true })], "")).toBeUndefined();
  });
});
