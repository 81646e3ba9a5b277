/** One validate run against the fake cluster: live capture + three validator Jobs, all on one run ID. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeClient } from "../../src/kube/client.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import {
  createdObjects,
  ctrf,
  LONG,
  NS,
  runId,
  SAMPLE_RECIPE,
  SNAPSHOT,
  untilRunGone,
  validate,
  validationCluster,
} from "./_harness.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { hookMs: LONG, start: validationCluster });

    test(
      "live capture and every validator object share the invocation's run ID; all checks pass; nothing is left",
      async () => {
        const id = runId("a");
        const r = await validate(cluster(), ["-r", SAMPLE_RECIPE, "--run-id", id]);
        expect({ code: r.code, stderr: r.code === 0 ? "" : r.stderr }).toEqual({ code: 0, stderr: "" });
        const report = ctrf(r);
        expect(
          report.tests.filter((t) => t.suite[0] === "deployment").map((t) => [t.name, t.status]),
        ).toEqual([
          ["operator-health", "passed"],
          ["expected-resources", "passed"],
          ["gpu-operator-version", "passed"],
        ]);
        expect(report.tests.find((t) => t.name === "gpu-operator-version")?.message).toBe(
          "deployed GPU Operator v25.10.1; Deployment.gpu-operator.version expects >= v24.6.0",
        );
        expect(r.stderr.match(/^validate run: runID=(.*)$/gm)).toEqual([`validate run: runID=${id}`]);
        expect(r.stderr).toContain(`[agent] aicr agent: runID=${id}`);
        const made = createdObjects(cluster()).filter((o) => o.labels["aicr.run/run-id"] === id);
        const names = made.map((o) => `${o.kind}/${o.name}`).sort();
        expect(names).toContain(`Job/aicr-validate-${id}`);
        for (const check of ["operator-health", "expected-resources", "gpu-operator-version"])
          expect(names).toContain(`Job/aicr-${check}-${id}`);
        for (const kind of ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"])
          expect(names).toContain(`${kind}/aicr-validator-${id}`);
        expect(names).toContain(`ConfigMap/aicr-snapshot-${id}`);
        expect(names).toContain(`ConfigMap/aicr-recipe-${id}`);
        const validation = made.filter((o) => o.labels["app.kubernetes.io/component"] === "validation");
        // the phase's CTRF report lives as long as the run
        expect(names).toContain(`ConfigMap/aicr-ctrf-${id}-deployment`);
        expect(validation.length).toBe(11);
        expect(made.every((o) => o.labels["aicr.run/invocation-id"])).toBe(true);
        await untilRunGone(cluster(), NS, id);
      },
      LONG,
    );

    test(
      "the validator ServiceAccount can do exactly its rules and cannot list secrets",
      async () => {
        const id = runId("b");
        const r = await validate(cluster(), [
          "-r",
          SAMPLE_RECIPE,
          "-s",
          SNAPSHOT,
          "--run-id",
          id,
          "--no-cleanup",
        ]);
        expect(r.code).toBe(0);
        expect(r.stderr).toContain(`kept (--no-cleanup): ClusterRole aicr-validator-${id}`);
        const admin = KubeClient.connect({ kubeconfig: cluster().kubeconfigFor("admin"), env: {} });
        const sa = `aicr-validator-${id}`;
        const subject = {
          user: `system:serviceaccount:${NS}:${sa}`,
          groups: ["system:serviceaccounts", `system:serviceaccounts:${NS}`, "system:authenticated"],
        };
        const can = async (
          verb: string,
          resource: string,
          o: { group?: string; namespace?: string; name?: string } = {},
        ) =>
          (
            await admin.review(
              { verb, resource, group: o.group ?? "", namespace: o.namespace, name: o.name },
              subject,
            )
          ).allowed;
        const allowed: [string, string, { group?: string; namespace?: string; name?: string }][] = [
          ["get", "nodes", {}],
          ["list", "nodes", {}],
          ["list", "pods", { namespace: "gpu-operator" }],
          ["get", "pods", { namespace: "kube-system" }],
          ["list", "clusterpolicies", { group: "nvidia.com" }],
          ["get", "configmaps", { namespace: NS, name: `aicr-snapshot-${id}` }],
          ["get", "configmaps", { namespace: NS, name: `aicr-recipe-${id}` }],
        ];
        const denied: typeof allowed = [
          ["list", "secrets", { namespace: NS }],
          ["get", "secrets", { namespace: "gpu-operator", name: "x" }],
          ["list", "configmaps", { namespace: NS }],
          ["get", "configmaps", { namespace: NS, name: "aicr-snapshot-someone-else" }],
          ["update", "configmaps", { namespace: NS, name: `aicr-recipe-${id}` }],
          ["create", "pods", { namespace: NS }],
          ["delete", "nodes", {}],
          ["patch", "clusterpolicies", { group: "nvidia.com" }],
          ["watch", "pods", {}],
          ["list", "jobs", { group: "batch", namespace: NS }],
        ];
        for (const [verb, res, o] of allowed)
          expect({ verb, res, o, ok: await can(verb, res, o) }).toEqual({ verb, res, o, ok: true });
        for (const [verb, res, o] of denied)
          expect({ verb, res, o, ok: await can(verb, res, o) }).toEqual({ verb, res, o, ok: false });
        // Deleting the anchor takes the whole run with it (the garbage collector follows the ownerReferences).
        await admin.delete({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", name: sa });
        await untilRunGone(cluster(), NS, id);
      },
      LONG,
    );

    test(
      "passed and skipped paths: no version constraint → skipped by the validator; --skip-check → never deployed",
      async () => {
        const dir = mkdtempSync(join(tmpdir(), "aicr-validate-"));
        const recipe = join(dir, "r.yaml");
        writeFileSync(
          recipe,
          "kind: RecipeMetadata\nspec:\n  validation:\n    deployment:\n      checks: [operator-health, expected-resources, gpu-operator-version]\n",
        );
        const id = runId("c");
        const r = await validate(cluster(), [
          "-r",
          recipe,
          "-s",
          SNAPSHOT,
          "--run-id",
          id,
          "--skip-check",
          "expected-resources",
        ]).finally(() => rmSync(dir, { recursive: true, force: true }));
        expect(r.code).toBe(0);
        const tests = ctrf(r).tests.map((t) => [t.name, t.status, t.message]);
        expect(tests).toEqual([
          ["operator-health", "passed", "ClusterPolicy ready; 7 operand pod(s) Running"],
          ["expected-resources", "skipped", "withheld by --skip-check"],
          [
            "gpu-operator-version",
            "skipped",
            "the recipe sets no Deployment.gpu-operator.version constraint",
          ],
        ]);
        const jobs = createdObjects(cluster()).filter(
          (o) => o.kind === "Job" && o.labels["aicr.run/run-id"] === id,
        );
        expect(jobs.map((j) => j.name).sort()).toEqual([
          `aicr-gpu-operator-version-${id}`,
          `aicr-operator-health-${id}`,
        ]);
        expect(
          jobs.every((j) => j.labels["aicr.run/phase"] === "deployment" && j.labels["aicr.run/validator"]),
        ).toBe(true);
        await untilRunGone(cluster(), NS, id);
      },
      LONG,
    );

    test(
      "a readiness failure deploys nothing: no mutating request reaches the apiserver",
      async () => {
        const dir = mkdtempSync(join(tmpdir(), "aicr-validate-"));
        const recipe = join(dir, "r.yaml");
        writeFileSync(
          recipe,
          'kind: RecipeMetadata\nspec:\n  constraints:\n    - {name: K8s.server.version, value: ">= 9.0"}\n  validation:\n    deployment:\n      checks: [operator-health]\n',
        );
        cluster().log.clear();
        const r = await validate(cluster(), ["-r", recipe, "-s", SNAPSHOT]).finally(() =>
          rmSync(dir, { recursive: true, force: true }),
        );
        expect(r.code).toBe(2);
        expect(r.stderr).toContain('K8s.server.version: expected >= 9.0, actual "v1.33.4-eks-3025e55"');
        // Still reported: the failed constraint as a failed test, the check that would have run skipped.
        const tests = JSON.parse(r.stdout).results.tests as {
          name: string;
          status: string;
          message?: string;
        }[];
        expect(tests.map((t) => [t.name, t.status, t.message])).toEqual([
          ["K8s.server.version", "failed", "expected >= 9.0, actual v1.33.4-eks-3025e55"],
          ["operator-health", "skipped", "not run: readiness failed"],
        ]);
        expect(
          cluster()
            .log.mutatingRequests()
            .map((e) => `${e.method} ${e.path}`),
        ).toEqual([]);
      },
      LONG,
    );
  });
