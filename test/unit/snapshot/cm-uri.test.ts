import { describe, expect, test } from "bun:test";
import { isConfigMapUri, parseConfigMapUri } from "../../../src/snapshot/cm-uri.ts";
import { thrown } from "../../support/reject.ts";

describe("parseConfigMapUri", () => {
  test.each([
    ["cm://gpu-operator/aicr-snapshot", "gpu-operator", "aicr-snapshot"],
    ["cm://default/snapshot.v1", "default", "snapshot.v1"],
    ["cm://a/b", "a", "b"],
    [`cm://${"n".repeat(63)}/${"x".repeat(253)}`, "n".repeat(63), "x".repeat(253)],
  ])("accepts %s", (uri, namespace, name) => {
    expect(parseConfigMapUri(uri)).toEqual({ namespace, name });
  });

  test.each([
    ["", 'does not start with "cm://"'],
    ["cm://", "has 0 '/'"],
    ["cm:///x", "the namespace is empty"],
    ["cm://ns/", "the name is empty"],
    ["cm://nsname", "has 0 '/'"],
    ["cm://a/b/c", "has 2 '/'"],
    ["configmap://ns/name", 'does not start with "cm://"'],
    ["CM://ns/name", 'does not start with "cm://"'],
    ["cm://NS/name", 'namespace "NS" is not a DNS-1123 label'],
    ["cm://ns/Name", 'name "Name" is not a DNS-1123 subdomain'],
    ["cm://my.ns/name", 'namespace "my.ns" is not a DNS-1123 label'],
    ["cm://-ns/name", 'namespace "-ns" is not a DNS-1123 label'],
    ["cm://ns/name-", 'name "name-" is not a DNS-1123 subdomain'],
    ["cm://ns/a..b", 'name "a..b" is not a DNS-1123 subdomain'],
    ["cm://ns/snap_shot", 'name "snap_shot" is not a DNS-1123 subdomain'],
    ["cm://ns /name", 'namespace "ns " is not a DNS-1123 label'],
    [`cm://${"n".repeat(64)}/x`, "longer than 63 characters"],
    [`cm://ns/${"x".repeat(254)}`, "longer than 253 characters"],
  ])("rejects %p", (uri, detail) => {
    const err = thrown(() => parseConfigMapUri(uri));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.exitCode).toBe(2);
    expect(err.message).toStartWith(`ConfigMap URI "${uri}" is invalid: `);
    expect(err.message).toContain(detail);
    expect(err.message).toEndWith("expected cm://<namespace>/<name>");
    expect(err.remedy).toContain("cm://");
  });

  test("isConfigMapUri only looks at the scheme", () => {
    expect(isConfigMapUri("cm://a/b")).toBe(true);
    expect(isConfigMapUri("cm://")).toBe(true);
    expect(isConfigMapUri("./cm://x")).toBe(false);
    expect(isConfigMapUri("snapshot.yaml")).toBe(false);
  });
});
