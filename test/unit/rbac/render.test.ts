import { describe, expect, test } from "bun:test";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { AicrError } from "../../../src/core/errors.ts";
import { dns1123SubdomainProblems } from "../../../src/core/names.ts";
import { renderAgentRbac, renderedClusterRoleName } from "../../../src/rbac/_render.ts";
import {
  CLUSTER_BASELINE_RULES,
  DISCOVER_NETWORK_RULES,
  isMutating,
  NAMESPACED_RULES,
} from "../../../src/rbac/rules.ts";
import { thrown } from "../../support/reject.ts";

const RUN_ID = "20260821-142233-9f3a1c0b7e2d4a55";
const GOLDEN = join(import.meta.dir, "../../fixtures/golden/render-rbac");
const base = { namespace: "gpu-operator", serviceAccount: "irsa-snapshotter", runId: RUN_ID };

const objectsOf = (content: string): Record<string, unknown>[] =>
  parseAllDocuments(content)
    .map((d) => d.toJS() as Record<string, unknown> | null)
    .filter((o): o is Record<string, unknown> => o !== null);

describe("rule catalog", () => {
  test("the Role has the reference's 2 rules and the ClusterRole baseline its 6 read-only rules", () => {
    expect(
      NAMESPACED_RULES.map(({ apiGroups, resources, verbs }) => ({ apiGroups, resources, verbs })),
    ).toEqual([
      { apiGroups: [""], resources: ["configmaps"], verbs: ["create", "get", "update", "patch"] },
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
    ]);
    expect(CLUSTER_BASELINE_RULES).toHaveLength(6);
    expect(CLUSTER_BASELINE_RULES.some(isMutating)).toBe(false);
  });

  test("the discover-network additions are 2 read-only rules: NicDevice and NicClusterPolicy", () => {
    expect(
      DISCOVER_NETWORK_RULES.map(({ apiGroups, resources, verbs }) => ({ apiGroups, resources, verbs })),
    ).toEqual([
      { apiGroups: ["configuration.net.nvidia.com"], resources: ["nicdevices"], verbs: ["get", "list"] },
      { apiGroups: ["mellanox.com"], resources: ["nicclusterpolicies"], verbs: ["get", "list"] },
    ]);
    expect(DISCOVER_NETWORK_RULES.some(isMutating)).toBe(false);
    const granted = JSON.stringify(DISCOVER_NETWORK_RULES.map(({ reason: _, ...rule }) => rule));
    for (const gone of ["pods/exec", "patch", "create", "delete", "customresourcedefinitions"])
      expect(granted).not.toContain(gone);
  });

  test("every rule says why the agent needs it", () => {
    for (const rule of [...NAMESPACED_RULES, ...CLUSTER_BASELINE_RULES, ...DISCOVER_NETWORK_RULES]) {
      expect(rule.reason.length).toBeGreaterThan(10);
    }
  });
});

describe("renderAgentRbac", () => {
  for (const discoverNetwork of [false, true]) {
    const variant = discoverNetwork ? "discover-network" : "default";
    test(`${variant}: files match the golden copies byte for byte`, async () => {
      const rendered = renderAgentRbac({ ...base, discoverNetwork });
      const dir = join(GOLDEN, variant);
      if (process.env.UPDATE_GOLDEN === "1") {
        await mkdir(dir, { recursive: true });
        for (const f of rendered.files) await writeFile(join(dir, f.file), f.content);
      }
      for (const f of rendered.files) expect(f.content).toBe(await readFile(join(dir, f.file), "utf8"));
    });
  }

  test("names, subjects, labels and rules are as specified; no run-ID label", () => {
    const { files, directory } = renderAgentRbac({ ...base, discoverNetwork: false });
    expect(directory).toBe(`snapshot-rbac-${RUN_ID}`);
    expect(files.map((f) => f.file)).toEqual([
      "01-role.yaml",
      "02-rolebinding.yaml",
      "03-clusterrole.yaml",
      "04-clusterrolebinding.yaml",
    ]);
    const [role, binding, clusterRole, clusterBinding] = files.map(
      (f) => objectsOf(f.content)[0] as Record<string, any>,
    );
    expect(role?.kind).toBe("Role");
    expect(role?.metadata).toEqual({
      name: "aicr-agent-irsa-snapshotter-rbac",
      namespace: "gpu-operator",
      labels: {
        "app.kubernetes.io/name": "aicr",
        "app.kubernetes.io/managed-by": "aicr",
        "app.kubernetes.io/component": "agent-rbac",
      },
    });
    expect(role?.rules).toHaveLength(2);
    expect(binding?.roleRef).toEqual({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "Role",
      name: "aicr-agent-irsa-snapshotter-rbac",
    });
    expect(binding?.subjects).toEqual([
      { kind: "ServiceAccount", name: "irsa-snapshotter", namespace: "gpu-operator" },
    ]);
    expect(clusterRole?.metadata.name).toBe("aicr-agent-gpu-operator.irsa-snapshotter-rbac");
    expect(clusterRole?.metadata.namespace).toBeUndefined();
    expect(clusterRole?.rules).toHaveLength(6);
    expect(clusterBinding?.roleRef.kind).toBe("ClusterRole");
    expect(clusterBinding?.subjects[0].name).toBe("irsa-snapshotter");
    for (const f of files) expect(f.content).not.toContain("aicr.run/run-id");
  });

  test("--discover-network adds exactly the 2 read rules to the ClusterRole and nothing to the Role", () => {
    const plain = renderAgentRbac({ ...base, discoverNetwork: false }).files;
    const disc = renderAgentRbac({ ...base, discoverNetwork: true }).files;
    const rules = (files: typeof plain, i: number) =>
      (objectsOf(files[i]?.content ?? "")[0] as { rules: unknown[] }).rules;
    expect(rules(disc, 0)).toEqual(rules(plain, 0));
    const added = rules(disc, 2).slice(rules(plain, 2).length);
    expect(rules(disc, 2).slice(0, 6)).toEqual(rules(plain, 2));
    expect(added).toEqual(
      DISCOVER_NETWORK_RULES.map(({ apiGroups, resources, verbs }) => ({ apiGroups, resources, verbs })),
    );
  });

  test("headers say READ-ONLY or name every mutating rule, and how to apply and remove", () => {
    const plain = renderAgentRbac({ ...base, discoverNetwork: false }).files;
    const disc = renderAgentRbac({ ...base, discoverNetwork: true }).files;
    expect(plain[2]?.content).toContain("READ-ONLY");
    expect(plain[2]?.content).not.toContain("MUTATING");
    expect(plain[0]?.content).toContain("MUTATING: create,get,update,patch configmaps");
    // With --discover-network the ClusterRole still only reads, and says what the flag added.
    expect(disc[2]?.content).toContain("READ-ONLY");
    expect(disc[2]?.content).not.toContain("MUTATING");
    expect(disc[2]?.content).toContain(
      "--discover-network adds 2 read-only rules (nicdevices, nicclusterpolicies)",
    );
    expect(disc[3]?.content).not.toContain("MUTATING");
    for (const f of [...plain, ...disc]) {
      expect(f.content.startsWith("# ")).toBe(true);
      expect(f.content).toContain(`kubectl apply -f snapshot-rbac-${RUN_ID}/`);
      expect(f.content).toContain(`kubectl delete -f snapshot-rbac-${RUN_ID}/`);
      expect(f.content).toContain("NOTHING HAS BEEN APPLIED");
    }
  });

  test("is deterministic: same input, same bytes", () => {
    const a = renderAgentRbac({ ...base, discoverNetwork: true });
    const b = renderAgentRbac({ ...base, discoverNetwork: true });
    expect(a).toEqual(b);
  });

  test("the cluster-scoped name is injective across namespace/name splits", () => {
    expect(renderedClusterRoleName("a-b", "c")).not.toBe(renderedClusterRoleName("a", "b-c"));
  });

  const bad: [string, Partial<typeof base>][] = [
    ["upper-case service account", { serviceAccount: "IRSA" }],
    ["underscore", { serviceAccount: "irsa_snapshotter" }],
    ["leading dash", { serviceAccount: "-irsa" }],
    ["empty part between dots", { serviceAccount: "irsa..snapshotter" }],
    ["empty service account", { serviceAccount: "" }],
    ["254-character service account", { serviceAccount: "a".repeat(254) }],
    ["dot in namespace (namespaces are DNS-1123 labels)", { namespace: "gpu.operator" }],
    ["bad namespace", { namespace: "GPU_operator" }],
    ["empty namespace", { namespace: "" }],
    ["path traversal", { serviceAccount: "../../etc" }],
  ];
  for (const [what, override] of bad) {
    test(`rejects ${what} with INVALID_REQUEST naming the value`, () => {
      const input = { ...base, discoverNetwork: false, ...override };
      const value = override.serviceAccount ?? override.namespace ?? "";
      expect(() => renderAgentRbac(input)).toThrow(AicrError);
      const err = thrown(() => renderAgentRbac(input));
      expect(err.code).toBe("INVALID_REQUEST");
      expect(err.message).toContain(JSON.stringify(value));
      expect(err.remedy).toContain("DNS-1123");
    });
  }

  test("a dotted ServiceAccount name (Kubernetes allows it) renders, with valid and distinct object names", () => {
    const dotted = renderAgentRbac({ ...base, serviceAccount: "ci.gpu-runner", discoverNetwork: false });
    expect(dotted.roleName).toBe("aicr-agent-ci.gpu-runner-rbac");
    expect(dotted.clusterRoleName).toBe(`aicr-agent-${base.namespace}.ci.gpu-runner-rbac`);
    for (const name of [dotted.roleName, dotted.clusterRoleName])
      expect(dns1123SubdomainProblems(name)).toEqual([]);
    const subjects = dotted.files.map((f) => f.content).join("\n");
    expect(subjects).toContain("name: ci.gpu-runner");
  });
});
