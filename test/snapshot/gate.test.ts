/** The permission gate of the compiled binary: every refusal is reported at once, before anything is written. */
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeClient } from "../../src/kube/client.ts";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { until } from "../support/until.ts";
import {
  AGENT_IMAGE,
  existingServiceAccount,
  freshNamespace,
  lastSeq,
  put,
  runObjects,
  runSnapshot,
  snapshotCluster,
  TEST_MS,
  untilNoRunObjects,
  userWith,
  writes,
} from "./_harness.ts";

const img = ["--image", AGENT_IMAGE];
const RBAC = "rbac.authorization.k8s.io";

/** What every run needs in its namespace, whatever the mode (callerBaseChecks), plus the pod dry run. */
const BASE_RULES = [
  { apiGroups: [""], resources: ["serviceaccounts"], verbs: ["get"] },
  { apiGroups: ["batch"], resources: ["jobs"], verbs: ["create", "get", "list", "watch", "delete"] },
  { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch", "create"] },
  { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
  { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "delete"] },
  { apiGroups: [""], resources: ["events"], verbs: ["list", "watch"] },
];
const NS_RBAC_RULES = [
  { apiGroups: [""], resources: ["serviceaccounts"], verbs: ["create", "delete"] },
  { apiGroups: [RBAC], resources: ["roles", "rolebindings"], verbs: ["create", "delete"] },
];
const CLUSTER_RBAC_RULES = [
  { apiGroups: [RBAC], resources: ["clusterroles", "clusterrolebindings"], verbs: ["create", "delete"] },
];

/** The gate's list: one `  - ` bullet per missing permission. */
function missingLines(stderr: string): string[] {
  return stderr
    .split("\n")
    .filter((l) => /^ {2}- (the caller|agent ServiceAccount|the agent pod)/.test(l))
    .map((l) => l.slice("  - ".length));
}

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: snapshotCluster });
    let admin: string;
    beforeAll(() => {
      admin = cluster().kubeconfigFor("admin");
    });

    test(
      "a caller who may not read ServiceAccounts: exit 4, every base permission listed, nothing written",
      async () => {
        const ns = await freshNamespace(cluster(), "gate-none");
        cluster().addUser("nobody", []);
        const since = lastSeq(cluster());
        const r = await runSnapshot(cluster().kubeconfigFor("nobody"), ["-n", ns, ...img]);
        expect(r.code, r.stderr).toBe(4);
        expect(r.stderr).toContain("[UNAUTHORIZED]");
        const lines = missingLines(r.stderr);
        expect(lines).toContain(`the caller "nobody" cannot "get" serviceaccounts (namespace "${ns}")`);
        expect(lines).toContain(`the caller "nobody" cannot "create" jobs.batch (namespace "${ns}")`);
        expect(lines).toContain(`the caller "nobody" cannot "get" pods/log (namespace "${ns}")`);
        // Prefix mode is known without the ServiceAccount look-up: its checks are listed too.
        expect(lines).toContain(`the caller "nobody" cannot "create" clusterroles.${RBAC} (cluster-scoped)`);
        expect(lines).toContain(`the caller "nobody" cannot "delete" roles.${RBAC} (namespace "${ns}")`);
        expect(lines.length).toBeGreaterThan(13 + 10);
        expect(lines.every((l) => l.startsWith('the caller "nobody" cannot'))).toBe(true);
        expect(r.stderr).not.toContain("not evaluated");
        expect(r.stderr).not.toContain("your kubeconfig identity");
        expect(writes(cluster(), since)).toEqual([]);
      },
      TEST_MS,
    );

    test(
      'each line reads <who> cannot "<verb>" <resource>[/<sub>][.<group>] (<scope>), then the authorizer\'s reason when it gave one',
      async () => {
        const ns = await freshNamespace(cluster(), "gate-reason");
        const user = "dangling";
        cluster().addUser(user, []);
        // A RoleBinding whose Role does not exist: RBAC denies, and says why in the review's reason.
        await put(cluster(), "rolebindings", {
          apiVersion: `${RBAC}/v1`,
          kind: "RoleBinding",
          metadata: { name: user, namespace: ns },
          roleRef: { apiGroup: RBAC, kind: "Role", name: "gone" },
          subjects: [{ kind: "User", apiGroup: RBAC, name: user }],
        });
        const reason = 'RBAC: role.rbac.authorization.k8s.io "gone" not found';
        const setup = KubeClient.connect({ kubeconfig: admin, env: {} });
        try {
          const asked = { verb: "get", group: "", resource: "serviceaccounts", namespace: ns };
          await until(
            async () => (await setup.review(asked, { user, groups: [] })).reason === reason,
            "the dangling binding seen by the authorizer",
          );
        } finally {
          setup.close();
        }
        const r = await runSnapshot(cluster().kubeconfigFor(user), ["-n", ns, ...img]);
        expect(r.code, r.stderr).toBe(4);
        const lines = missingLines(r.stderr);
        expect(lines).toContain(
          `the caller "${user}" cannot "get" serviceaccounts (namespace "${ns}"): ${reason}`,
        );
        expect(lines).toContain(`the caller "${user}" cannot "get" pods/log (namespace "${ns}"): ${reason}`);
        // A cluster-scoped request never reads a RoleBinding: no reason, the scope said as the original says it.
        expect(lines).toContain(`the caller "${user}" cannot "create" clusterroles.${RBAC} (cluster-scoped)`);
      },
      TEST_MS,
    );

    test(
      "--service-account-name and no ServiceAccount reads: the base permissions listed, the mode-dependent ones said to be unchecked",
      async () => {
        const ns = await freshNamespace(cluster(), "gate-none-sa");
        cluster().addUser("nobody-sa", []);
        const since = lastSeq(cluster());
        const r = await runSnapshot(cluster().kubeconfigFor("nobody-sa"), [
          "-n",
          ns,
          ...img,
          "--service-account-name",
          "wi",
        ]);
        expect(r.code, r.stderr).toBe(4);
        const lines = missingLines(r.stderr);
        expect(lines).toContain(`the caller "nobody-sa" cannot "get" serviceaccounts (namespace "${ns}")`);
        expect(lines.length).toBe(13);
        expect(r.stderr).toContain("cannot be checked and are not listed");
        expect(writes(cluster(), since)).toEqual([]);
      },
      TEST_MS,
    );

    test(
      "prefix mode without RBAC rights: one line per missing create/delete on the five kinds, exit 4, nothing written",
      async () => {
        const ns = await freshNamespace(cluster(), "gate-norbac");
        const kc = await userWith(cluster(), "base-only", ns, BASE_RULES);
        const since = lastSeq(cluster());
        const r = await runSnapshot(kc, ["-n", ns, ...img]);
        expect(r.code, r.stderr).toBe(4);
        const lines = missingLines(r.stderr);
        for (const verb of ["create", "delete"]) {
          expect(lines).toContain(
            `the caller "base-only" cannot "${verb}" serviceaccounts (namespace "${ns}")`,
          );
          expect(lines).toContain(
            `the caller "base-only" cannot "${verb}" roles.${RBAC} (namespace "${ns}")`,
          );
          expect(lines).toContain(
            `the caller "base-only" cannot "${verb}" rolebindings.${RBAC} (namespace "${ns}")`,
          );
          expect(lines).toContain(
            `the caller "base-only" cannot "${verb}" clusterroles.${RBAC} (cluster-scoped)`,
          );
          expect(lines).toContain(
            `the caller "base-only" cannot "${verb}" clusterrolebindings.${RBAC} (cluster-scoped)`,
          );
        }
        expect(r.stderr).toContain("--service-account-name <existing>");
        expect(writes(cluster(), since)).toEqual([]);
      },
      TEST_MS,
    );

    test(
      "escalation predicted: a caller who may create ClusterRoles but does not hold nodes get/list is refused up front",
      async () => {
        const ns = await freshNamespace(cluster(), "gate-escalate");
        // Everything the run needs in the namespace (the Role's rules included), RBAC create/delete, but no nodes.
        const kc = await userWith(
          cluster(),
          "rbac-writer",
          ns,
          [
            ...BASE_RULES,
            ...NS_RBAC_RULES,
            { apiGroups: [""], resources: ["configmaps"], verbs: ["create", "update", "patch"] },
          ],
          CLUSTER_RBAC_RULES,
        );
        const since = lastSeq(cluster());
        const r = await runSnapshot(kc, ["-n", ns, ...img]);
        expect(r.code, r.stderr).toBe(4);
        const lines = missingLines(r.stderr);
        for (const verb of ["get", "list"])
          expect(lines).toContain(
            `the caller "rbac-writer" cannot "${verb}" nodes (cluster-scoped), which the run's ClusterRole grants: creating it would be refused as privilege escalation`,
          );
        expect(lines.some((l) => l.includes("the run's Role would be refused"))).toBe(false);
        expect(lines.some((l) => l.includes('cannot "create"'))).toBe(false);
        expect(writes(cluster(), since)).toEqual([]);
        expect(runObjects(cluster(), ns)).toEqual([]);
      },
      TEST_MS,
    );

    test(
      "admission predicted: a restricted namespace rejects the privileged agent pod before anything is created",
      async () => {
        const ns = await freshNamespace(cluster(), "gate-restricted", {
          "pod-security.kubernetes.io/enforce": "restricted",
        });
        const since = lastSeq(cluster());
        const r = await runSnapshot(admin, ["-n", ns, ...img]);
        expect(r.code, r.stderr).toBe(4);
        const lines = missingLines(r.stderr);
        expect(lines.length).toBe(1);
        expect(lines[0]).toContain(`the agent pod would be rejected by admission in namespace "${ns}"`);
        expect(lines[0]).toContain("restricted");
        const dryRuns = cluster().log.entries.filter((e) => e.seq > since && e.query.dryRun === "All");
        expect(dryRuns.map((e) => `${e.method} ${e.path}`)).toEqual([`POST /api/v1/namespaces/${ns}/pods`]);
        expect(writes(cluster(), since)).toEqual([]);
      },
      TEST_MS,
    );

    test(
      "admission predicted: the same restricted namespace admits the agent with --privileged=false",
      async () => {
        const ns = await freshNamespace(cluster(), "gate-unprivileged", {
          "pod-security.kubernetes.io/enforce": "restricted",
        });
        const r = await runSnapshot(admin, ["-n", ns, ...img, "--privileged=false"]);
        expect(r.code, r.stderr).toBe(0);
        expect(parseSnapshot(r.stdout, "stdout").metadata["source-node"]).toBe("gpu-node-1");
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "admission not predicted when the namespace does not exist yet: said, and the run goes on",
      async () => {
        const ns = "gate-created-by-run";
        const r = await runSnapshot(admin, ["-n", ns, ...img]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toContain(`admission was not predicted: namespace ${ns} does not exist yet`);
      },
      TEST_MS,
    );

    test(
      "exact mode: an existing ServiceAccount lacking the agent's rules gets one line per rule, exit 4, nothing written",
      async () => {
        const ns = await freshNamespace(cluster(), "gate-sa");
        await existingServiceAccount(cluster(), ns, "bare");
        const since = lastSeq(cluster());
        const r = await runSnapshot(admin, ["-n", ns, ...img, "--service-account-name", "bare"]);
        expect(r.code, r.stderr).toBe(4);
        const lines = missingLines(r.stderr);
        const who = `agent ServiceAccount "system:serviceaccount:${ns}:bare" cannot`;
        expect(lines).toContain(`${who} "create" configmaps (namespace "${ns}")`);
        expect(lines).toContain(`${who} "get" nodes (cluster-scoped)`);
        expect(lines).toContain(`${who} "list" clusterpolicies.nvidia.com (cluster-scoped)`);
        expect(lines.every((l) => l.startsWith(who))).toBe(true);
        expect(r.stderr).toContain(`aicr render-rbac bare --namespace ${ns}`);
        expect(writes(cluster(), since)).toEqual([]);
      },
      TEST_MS,
    );

    test(
      "exact mode when SubjectAccessReview is forbidden: one WARN with the remedy, then the run goes on",
      async () => {
        const ns = await freshNamespace(cluster(), "gate-nosar");
        await existingServiceAccount(cluster(), ns, "wi", "cluster-admin");
        const kc = await userWith(
          cluster(),
          "no-sar",
          ns,
          [{ apiGroups: ["", "batch"], resources: ["*"], verbs: ["*"] }],
          [{ apiGroups: [""], resources: ["nodes"], verbs: ["list"] }],
        );
        const r = await runSnapshot(kc, ["-n", ns, ...img, "--service-account-name", "wi"]);
        expect(r.code, r.stderr).toBe(0);
        const warns = r.stderr
          .split("\n")
          .filter((l) => l.includes("could not verify the agent ServiceAccount"));
        expect(warns.length).toBe(1);
        expect(r.stderr).toContain("subjectaccessreviews.authorization.k8s.io");
        expect(parseSnapshot(r.stdout, "stdout").metadata["run-id"]).toBeDefined();
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "an unreachable apiserver: exit 6 with a hint, nothing else",
      async () => {
        const dir = mkdtempSync(join(tmpdir(), "aicr-unreach-"));
        try {
          const kc = join(dir, "kubeconfig");
          writeFileSync(
            kc,
            [
              "apiVersion: v1",
              "kind: Config",
              "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:1', insecure-skip-tls-verify: true}}]",
              "users: [{name: u, user: {token: t}}]",
              "contexts: [{name: x, context: {cluster: c, user: u}}]",
              "current-context: x",
            ].join("\n"),
          );
          const r = await runSnapshot(kc, ["-n", "anywhere", ...img]);
          expect(r.code, r.stderr).toBe(6);
          expect(r.stderr).toContain("[SERVICE_UNAVAILABLE]");
          expect(r.stderr).toContain("remedy:");
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
      TEST_MS,
    );

    test(
      "a caller allowed everything cluster-wide is settled by one wildcard review, not one per permission",
      async () => {
        const ns = await freshNamespace(cluster(), "gate-admin");
        const since = lastSeq(cluster());
        const r = await runSnapshot(admin, ["-n", ns, ...img]);
        expect(r.code, r.stderr).toBe(0);
        const reviews = cluster().log.entries.filter(
          (e) => e.seq > since && e.user === "admin" && e.path.endsWith("/selfsubjectaccessreviews"),
        );
        const asked = reviews.map(
          (e) => (e.body as { spec: { resourceAttributes: unknown } }).spec.resourceAttributes,
        );
        expect(asked).toContainEqual({ verb: "*", group: "*", resource: "*" });
        // The wildcard, plus the admission prediction's own "may create pods".
        expect(reviews.length).toBeLessThanOrEqual(2);
      },
      TEST_MS,
    );

    test(
      "a caller who may not create pods: admission is not predicted, said so, and the run goes on",
      async () => {
        const ns = await freshNamespace(cluster(), "gate-nopods");
        const kc = await userWith(
          cluster(),
          "no-pod-create",
          ns,
          [
            {
              apiGroups: ["batch"],
              resources: ["jobs"],
              verbs: ["create", "get", "list", "watch", "delete"],
            },
            {
              apiGroups: [""],
              resources: ["configmaps"],
              verbs: ["create", "get", "list", "update", "patch", "delete"],
            },
            { apiGroups: [""], resources: ["serviceaccounts"], verbs: ["get", "create", "delete"] },
            { apiGroups: [RBAC], resources: ["roles", "rolebindings"], verbs: ["create", "delete"] },
          ],
          [{ apiGroups: ["*"], resources: ["*"], verbs: ["get", "list", "watch"] }, ...CLUSTER_RBAC_RULES],
        );
        const r = await runSnapshot(kc, ["-n", ns, ...img]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toContain("admission was not predicted: the caller may not create pods");
        expect(parseSnapshot(r.stdout, "stdout").metadata["source-node"]).toBe("gpu-node-1");
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );
  });
