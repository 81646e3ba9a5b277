/** resolveNamespace: -n, then AICR_NAMESPACE, then the kubeconfig context's namespace (offline), then default. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveNamespace } from "../../../src/commands/_args.ts";

const dir = mkdtempSync(join(tmpdir(), "aicr-ns-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

const KC = file(
  "two.kubeconfig",
  [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: c",
    "  cluster:",
    "    server: https://127.0.0.1:1",
    "contexts:",
    "- name: demo",
    "  context:",
    "    cluster: c",
    "    namespace: demo",
    "- name: other",
    "  context:",
    "    cluster: c",
    "    namespace: other",
    "- name: bare",
    "  context:",
    "    cluster: c",
    "current-context: demo",
    "",
  ].join("\n"),
);

describe("resolveNamespace", () => {
  test("-n wins, then AICR_NAMESPACE, then the current context's namespace", () => {
    expect(resolveNamespace("flag", { KUBECONFIG: KC, AICR_NAMESPACE: "env" })).toBe("flag");
    expect(resolveNamespace(undefined, { KUBECONFIG: KC, AICR_NAMESPACE: "env" })).toBe("env");
    expect(resolveNamespace(undefined, { KUBECONFIG: KC })).toBe("demo");
    expect(resolveNamespace("", { KUBECONFIG: KC })).toBe("demo");
  });

  test("--kubeconfig and --context choose the file and the context", () => {
    const env = { KUBECONFIG: "/nonexistent/kubeconfig" };
    expect(resolveNamespace(undefined, env, { kubeconfig: KC })).toBe("demo");
    expect(resolveNamespace(undefined, env, { kubeconfig: KC, context: "other" })).toBe("other");
    expect(resolveNamespace(undefined, env, { kubeconfig: KC, context: "bare" })).toBe("default");
  });

  test("no kubeconfig, an unreadable one, or an unknown context: default (the connection reports it)", () => {
    expect(resolveNamespace(undefined, { KUBECONFIG: join(dir, "missing") })).toBe("default");
    expect(resolveNamespace(undefined, { KUBECONFIG: file("broken", ": : not yaml [") })).toBe("default");
    expect(resolveNamespace(undefined, { KUBECONFIG: KC }, { context: "nope" })).toBe("default");
    expect(resolveNamespace(undefined, { HOME: join(dir, "no-home") })).toBe("default");
  });
});
