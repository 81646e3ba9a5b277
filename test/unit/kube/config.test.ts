/** listContexts: every context of the kubeconfig, offline, in the file's order. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listContexts } from "../../../src/kube/config.ts";
import { thrown } from "../../support/reject.ts";

const dir = mkdtempSync(join(tmpdir(), "aicr-contexts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KUBECONFIG = `apiVersion: v1
kind: Config
current-context: beta
clusters:
- name: c-one
  cluster: { server: "https://one.example:6443" }
- name: c-two
  cluster: { server: "http://127.0.0.1:8001" }
users:
- name: u
  user: { token: abc }
contexts:
- name: zeta
  context: { cluster: c-two, user: u, namespace: gpu-operator }
- name: alpha
  context: { cluster: c-one, user: u }
- name: beta
  context: { cluster: c-gone, user: u }
`;

describe("listContexts", () => {
  test("every context in file order, with its server and namespace; the current context", () => {
    const path = join(dir, "config");
    writeFileSync(path, KUBECONFIG);
    const list = listContexts({ kubeconfig: path, env: {} });
    expect(list.contexts).toEqual([
      { name: "zeta", server: "http://127.0.0.1:8001", namespace: "gpu-operator" },
      { name: "alpha", server: "https://one.example:6443", namespace: undefined },
      { name: "beta", server: "", namespace: undefined },
    ]);
    expect(list.current).toBe("beta");
    expect(list.origin).toBe(`kubeconfig ${path}`);
  });

  test("KUBECONFIG is read when --kubeconfig is absent", () => {
    const path = join(dir, "env-config");
    writeFileSync(path, KUBECONFIG);
    expect(listContexts({ env: { KUBECONFIG: path } }).contexts.map((c) => c.name)).toEqual([
      "zeta",
      "alpha",
      "beta",
    ]);
  });

  test("a missing file is INVALID_REQUEST naming it", () => {
    const path = join(dir, "absent");
    const err = thrown(() => listContexts({ kubeconfig: path, env: {} }));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toContain(path);
  });

  test("a file with no contexts lists none", () => {
    const path = join(dir, "empty");
    writeFileSync(path, "apiVersion: v1\nkind: Config\n");
    expect(listContexts({ kubeconfig: path, env: {} }).contexts).toEqual([]);
  });
});
