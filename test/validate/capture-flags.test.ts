/**
 * validate's capture flags on both backends: an existing ServiceAccount for the capture (no RBAC made
 * for it), placement and pull secrets on the capture agent and every validator pod, the report in a
 * ConfigMap that cleanup leaves, and bad values refused before the first request.
 */
import { describe, expect, test } from "bun:test";
import { resource } from "../cluster/resources.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { existingServiceAccount, freshNamespace } from "../snapshot/_harness.ts";
import { useCluster } from "../support/cluster.ts";
import { requestsSince } from "../support/requests.ts";
import { LONG, runId, SAMPLE_RECIPE, untilRunGone, validate, validationCluster } from "./_harness.ts";

type PodSpec = {
  serviceAccountName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: Record<string, string>[];
  imagePullSecrets?: { name: string }[];
};
type JobBody = { metadata: { name: string }; spec: { template: { spec: PodSpec } } };

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { hookMs: LONG, start: validationCluster });

    test(
      "--service-account-name <existing>: the capture runs as it and makes no RBAC; placement and pull secrets on every pod; -o cm:// kept",
      async () => {
        const ns = await freshNamespace(cluster(), "vflags");
        await existingServiceAccount(cluster(), ns, "ci-runner", "cluster-admin");
        const id = runId("f");
        const before = cluster().log.entries.length;
        const r = await validate(
          cluster(),
          [
            "-r",
            SAMPLE_RECIPE,
            "--run-id",
            id,
            "--service-account-name",
            "ci-runner",
            "--node-selector",
            "nvidia.com/gpu.present=true",
            "--toleration",
            "dedicated=ml:NoSchedule",
            "--image-pull-secret",
            "regcred",
            "-o",
            `cm://${ns}/validation-report`,
          ],
          { namespace: ns },
        );
        expect({ code: r.code, stderr: r.code === 0 ? "" : r.stderr }).toEqual({ code: 0, stderr: "" });
        expect(r.stdout).toBe("");
        const mine = cluster()
          .log.entries.slice(before)
          .filter((e) => e.user === "admin");
        const posts = mine.filter((e) => e.method === "POST" && e.status < 300);
        // RBAC and ServiceAccounts: the validators' own only (aicr-validator-<runID>), none for the capture.
        const rbac = posts
          .filter((e) => e.path.includes("rbac.authorization.k8s.io") || e.path.endsWith("/serviceaccounts"))
          .map((e) => (e.body as { metadata: { name: string } }).metadata.name);
        expect(rbac.length).toBe(5);
        expect(rbac.every((n) => n === `aicr-validator-${id}`)).toBe(true);
        // The ServiceAccount's rights were asked about by SubjectAccessReview.
        const sars = mine.filter((e) => e.path.endsWith("/subjectaccessreviews"));
        expect(JSON.stringify(sars.map((e) => e.body))).toContain(`system:serviceaccount:${ns}:ci-runner`);
        const jobs = posts
          .filter((e) => e.path === `/apis/batch/v1/namespaces/${ns}/jobs`)
          .map((e) => e.body as JobBody);
        const byName = Object.fromEntries(jobs.map((j) => [j.metadata.name, j.spec.template.spec]));
        expect(Object.keys(byName).sort()).toEqual(
          [
            `aicr-expected-resources-${id}`,
            `aicr-gpu-operator-version-${id}`,
            `aicr-operator-health-${id}`,
            `aicr-validate-${id}`,
          ].sort(),
        );
        expect(byName[`aicr-validate-${id}`]?.serviceAccountName).toBe("ci-runner");
        for (const [name, pod] of Object.entries(byName)) {
          expect({ name, sel: pod.nodeSelector }).toEqual({
            name,
            sel: { "nvidia.com/gpu.present": "true" },
          });
          expect({ name, pull: pod.imagePullSecrets }).toEqual({ name, pull: [{ name: "regcred" }] });
          expect({ name, tol: pod.tolerations }).toEqual({
            name,
            tol: [{ key: "dedicated", operator: "Equal", value: "ml", effect: "NoSchedule" }],
          });
        }
        await untilRunGone(cluster(), ns, id);
        // The report is the user's: cleanup left it, with the merged CTRF JSON under report.json.
        const cm = cluster().store.find(resource("configmaps"), ns, "validation-report") as
          | { data?: Record<string, string> }
          | undefined;
        const report = JSON.parse(cm?.data?.["report.json"] ?? "{}");
        expect(report.reportFormat).toBe("CTRF");
        expect(report.results.summary.failed).toBe(0);
        expect(report.results.tests.map((t: { name: string }) => t.name)).toContain("operator-health");
        expect(cluster().store.find(resource("serviceaccounts"), ns, "ci-runner")).toBeDefined();
      },
      LONG,
    );

    test(
      "bad values exit 2 before the first request: nothing read, nothing written",
      async () => {
        const bad: string[][] = [
          ["--toleration", "dedicated=ml:Sometimes"],
          ["--node-selector", "no-equals-sign"],
          ["--image-pull-secret", "Bad_Secret"],
          ["--job-name", "Bad_Prefix"],
          ["--service-account-name", "-bad"],
          ["-o", "cm://elsewhere/report"],
          ["-o", "cm://aicr-validation/report", "-t", "table"],
          ["--require-gpu=maybe"],
        ];
        for (const args of bad) {
          const before = cluster().log.entries.length;
          const r = await validate(cluster(), ["-r", SAMPLE_RECIPE, ...args]);
          expect({ args, code: r.code }).toEqual({ args, code: 2 });
          expect({ args, requests: requestsSince(cluster(), before) }).toEqual({ args, requests: [] });
        }
      },
      LONG,
    );
  });
