import { describe, expect, test } from "bun:test";
import { compileGlob, ignoreMatcher } from "../../../src/diff/glob.ts";
import { thrown } from "../../support/reject.ts";

const matches = (pattern: string, path: string) => compileGlob(pattern).test(path);

describe("--ignore globs", () => {
  test("* stays within a segment, ** crosses them, the rest is literal", () => {
    expect(matches("K8s.image.*", "K8s.image.gpu-operator")).toBe(true);
    expect(matches("K8s.*.version", "K8s.server.version")).toBe(true);
    expect(matches("K8s.*", "K8s.server.version")).toBe(false);
    expect(matches("K8s.**", "K8s.server.version")).toBe(true);
    expect(matches("**.items.length", "NetworkTopology.group-0.items.length")).toBe(true);
    expect(
      matches("NetworkTopology.group-0.items[*].data.link", "NetworkTopology.group-0.items[12].data.link"),
    ).toBe(true);
    expect(matches("OS.sysctl./proc/sys/kernel/*", "OS.sysctl./proc/sys/kernel/osrelease")).toBe(true);
    expect(matches("K8s.server.version", "K8s.server.versions")).toBe(false);
    expect(matches("K8s.server.version", "K8sXserver.version")).toBe(false);
    expect(matches('K8s.node["context.node"]', 'K8s.node["context.node"]')).toBe(true);
  });

  test("several patterns: any one matches", () => {
    const ignored = ignoreMatcher(["K8s.image.**", "OS.release.VERSION_ID"]);
    expect(ignored("K8s.image.x")).toBe(true);
    expect(ignored("OS.release.VERSION_ID")).toBe(true);
    expect(ignored("OS.release.ID")).toBe(false);
    expect(ignoreMatcher([])("anything")).toBe(false);
  });

  test("an empty pattern is INVALID_REQUEST naming --ignore", () => {
    const err = thrown(() => compileGlob(" "));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toContain("--ignore");
  });
});

test("matching is linear: many ** over a long key end at once with the right answer", () => {
  const key = `K8s.x.${"a".repeat(60)}`;
  expect(compileGlob("**a**a**a**a**a**a**a**a**b").test(key)).toBe(false);
  expect(compileGlob("**a**a**a**a**a**a**a**a**").test(key)).toBe(true);
  expect(compileGlob("K8s.*.***").test(key)).toBe(true);
  expect(compileGlob("K8s.*").test(key)).toBe(false);
});
