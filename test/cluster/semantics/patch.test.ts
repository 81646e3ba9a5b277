import { describe, expect, test } from "bun:test";
import { thrown } from "../../support/reject.ts";
import {
  ApplyConflictError,
  jsonMergePatch,
  serverSideApply,
  strategicMergePatch,
  trackUpdate,
} from "./patch.ts";

describe("jsonMergePatch (RFC 7386 appendix A)", () => {
  test.each([
    [{ a: "b" }, { a: "c" }, { a: "c" }],
    [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
    [{ a: "b" }, { a: null }, {}],
    [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
    [{ a: ["b"] }, { a: "c" }, { a: "c" }],
    [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
    [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
    [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
    [
      ["a", "b"],
      ["c", "d"],
      ["c", "d"],
    ],
    [{ a: "b" }, ["c"], ["c"]],
    [{ a: "foo" }, null, null],
    [{ a: "foo" }, "bar", "bar"],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: "b", c: null }, { a: "b" }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])("%j + %j", (target, patch, want) => {
    expect(jsonMergePatch(target, patch)).toEqual(want);
  });

  test("does not mutate its inputs", () => {
    const t = { a: { b: 1 } };
    jsonMergePatch(t, { a: { b: 2 } });
    expect(t).toEqual({ a: { b: 1 } });
  });
});

describe("strategicMergePatch", () => {
  const pod = {
    metadata: { labels: { a: "1", b: "2" } as Record<string, string>, finalizers: ["x"] },
    spec: {
      containers: [
        { name: "c1", image: "i1", env: [{ name: "A", value: "1" }] },
        { name: "c2", image: "i2" },
      ],
      tolerations: [{ key: "k", operator: "Exists" }],
    },
  };

  test("labels merged, null deletes", () => {
    const out = strategicMergePatch(pod, { metadata: { labels: { b: null, c: "3" } } }) as typeof pod;
    expect(out.metadata.labels).toEqual({ a: "1", c: "3" });
  });

  test("containers merged by name, env by name", () => {
    const out = strategicMergePatch(pod, {
      spec: {
        containers: [
          { name: "c1", env: [{ name: "B", value: "2" }] },
          { name: "c3", image: "i3" },
        ],
      },
    }) as typeof pod;
    expect(out.spec.containers.map((c) => c.name)).toEqual(["c1", "c2", "c3"]);
    expect(out.spec.containers[0]).toEqual({
      name: "c1",
      image: "i1",
      env: [
        { name: "A", value: "1" },
        { name: "B", value: "2" },
      ],
    });
  });

  test("$patch: delete removes a keyed item, $patch: replace replaces a map", () => {
    const out = strategicMergePatch(pod, {
      metadata: { labels: { $patch: "replace", z: "9" } },
      spec: { containers: [{ name: "c2", $patch: "delete" }] },
    }) as typeof pod;
    expect(out.metadata.labels).toEqual({ z: "9" });
    expect(out.spec.containers.map((c) => c.name)).toEqual(["c1"]);
  });

  test("lists without a merge key are replaced; finalizers are unioned", () => {
    const out = strategicMergePatch(pod, {
      metadata: { finalizers: ["y", "x"] },
      spec: { tolerations: [{ key: "other", operator: "Exists" }] },
    }) as typeof pod;
    expect(out.spec.tolerations).toEqual([{ key: "other", operator: "Exists" }]);
    expect(out.metadata.finalizers).toEqual(["x", "y"]);
    const removed = strategicMergePatch(pod, {
      metadata: { "$deleteFromPrimitiveList/finalizers": ["x"] },
    }) as typeof pod;
    expect(removed.metadata.finalizers).toEqual([]);
  });
});

describe("serverSideApply", () => {
  const cm = (data: Record<string, string>, labels?: Record<string, string>) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "c", namespace: "ns", ...(labels ? { labels } : {}) },
    data,
  });
  const now = "2026-01-01T00:00:00Z";
  type Any = any;

  test("create records the manager's fields", () => {
    const out = serverSideApply(undefined, cm({ a: "1" }, { app: "x" }), { fieldManager: "m1", now }) as Any;
    expect(out.data).toEqual({ a: "1" });
    expect(out.metadata.managedFields).toEqual([
      {
        manager: "m1",
        operation: "Apply",
        apiVersion: "v1",
        time: now,
        fieldsType: "FieldsV1",
        fieldsV1: { "f:data": { "f:a": {} }, "f:metadata": { "f:labels": { "f:app": {} } } },
      },
    ]);
  });

  test("a second manager changing a field conflicts with the real message", () => {
    const live = serverSideApply(undefined, cm({ a: "1", b: "2" }), { fieldManager: "m1", now });
    const c = thrown(
      () => serverSideApply(live, cm({ a: "other" }), { fieldManager: "m2", now }),
      ApplyConflictError,
    );
    expect(c.message).toBe('Apply failed with 1 conflict: conflict with "m1": .data.a');
    expect(c.code).toBe(409);
    expect(c.causes).toEqual([
      { type: "FieldManagerConflict", message: 'conflict with "m1"', field: ".data.a" },
    ]);
  });

  test("two conflicts", () => {
    const live = serverSideApply(undefined, cm({ a: "1", b: "2" }), { fieldManager: "m1", now });
    expect(() => serverSideApply(live, cm({ a: "x", b: "y" }), { fieldManager: "m2", now })).toThrow(
      'Apply failed with 2 conflicts: conflicts with "m1":\n- .data.a\n- .data.b',
    );
  });

  test("same value is shared, no conflict; force takes ownership", () => {
    const live = serverSideApply(undefined, cm({ a: "1", b: "2" }), { fieldManager: "m1", now });
    const shared = serverSideApply(live, cm({ a: "1" }), { fieldManager: "m2", now }) as Any;
    expect(shared.metadata.managedFields.map((e: Any) => e.manager)).toEqual(["m1", "m2"]);
    const forced = serverSideApply(shared, cm({ b: "new" }), { fieldManager: "m2", force: true, now }) as Any;
    expect(forced.data).toEqual({ a: "1", b: "new" }); // a is still owned by m1, so it stays
    const m1 = forced.metadata.managedFields.find((e: Any) => e.manager === "m1");
    expect(m1.fieldsV1).toEqual({ "f:data": { "f:a": {} } });
  });

  test("a field the manager stops applying is removed", () => {
    const live = serverSideApply(undefined, cm({ a: "1", b: "2" }), { fieldManager: "m1", now });
    const out = serverSideApply(live, cm({ a: "1" }), { fieldManager: "m1", now }) as Any;
    expect(out.data).toEqual({ a: "1" });
  });

  test("an Update manager is printed with its apiVersion and time", () => {
    const created = trackUpdate(undefined, cm({ a: "1" }), "kubectl-edit", now);
    expect(() => serverSideApply(created, cm({ a: "2" }), { fieldManager: "m1", now })).toThrow(
      `Apply failed with 1 conflict: conflict with "kubectl-edit" using v1 at ${now}: .data.a`,
    );
  });
});

describe("serverSideApply on an untracked object", () => {
  test("existing fields belong to before-first-apply", () => {
    const live = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", namespace: "ns" },
      data: { a: "1" },
    };
    const applied = { ...live, data: { a: "2" } };
    expect(() => serverSideApply(live, applied, { fieldManager: "aicr" })).toThrow(
      'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a',
    );
    const forced = serverSideApply(live, applied, { fieldManager: "aicr", force: true }) as { data: object };
    expect(forced.data).toEqual({ a: "2" });
  });
});
