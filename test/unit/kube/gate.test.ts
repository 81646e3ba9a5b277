/**
 * passGate against the fake apiserver: each distinct question asked once whichever part asks it,
 * every gap in one refusal, the escalation prediction over every API group and subresource, the
 * wildcard shortcut, the later part, the non-required checks, and the cancel signal.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { AicrError } from "../../../src/core/errors.ts";
import type { Logger } from "../../../src/core/log.ts";
import { KubeClient, type KubeObject } from "../../../src/kube/client.ts";
import {
  escalateAndBind,
  expandRules,
  type GateOptions,
  type GateSpec,
  type Need,
  passGate,
} from "../../../src/kube/gate.ts";
import type { AccessCheck } from "../../../src/kube/reviews.ts";
import { resource } from "../../cluster/resources.ts";
import { CLUSTER_HOOK_MS, startTestCluster, type TestCluster } from "../../cluster/testbed.ts";

const TEST_MS = 20_000;
const SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
const SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
const RBAC = "rbac.authorization.k8s.io";
/** Open: a privileged pod is admitted. */
const NS = "gate-open";
/** Pod Security "restricted": a privileged pod is rejected. */
const RESTRICTED = "gate-restricted";
const GET_PODS: AccessCheck = { verb: "get", group: "", resource: "pods", namespace: NS };
const DELETE_PODS: AccessCheck = { verb: "delete", group: "", resource: "pods", namespace: NS };

const refusal: GateOptions["refusal"] = {
  message: (lines) => `missing ${lines.length}:\n${lines.join("\n")}`,
  remedy: "the default remedy",
};

const pod = (namespace: string, privileged: boolean): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { generateName: "probe-", namespace },
  spec: {
    containers: [{ name: "c", image: "busybox", securityContext: { privileged } }],
  },
});

let cluster: TestCluster;
const clients: KubeClient[] = [];
const connect = (user: string): KubeClient => {
  const client = KubeClient.connect({ kubeconfig: cluster.kubeconfigFor(user), env: {} });
  clients.push(client);
  return client;
};
const reviews = (path: string, user: string) =>
  cluster.log.entries.filter((e) => e.path === path && e.user === user);
const attributes = (user: string) =>
  reviews(SSAR, user).map(
    (e) => (e.body as { spec: { resourceAttributes: unknown } }).spec.resourceAttributes,
  );
const refused = (p: Promise<unknown>): Promise<AicrError> =>
  p.then(
    () => {
      throw new Error("the gate passed");
    },
    (err: unknown) => err as AicrError,
  );

/** Binds `user` to a Role in `namespace` or (without one) a ClusterRole granting `rules`. */
async function grant(user: string, rules: object[], namespace?: string): Promise<void> {
  const name = `${user}-${namespace ?? "cluster"}`;
  const [role, binding, kind] = namespace
    ? ["roles", "rolebindings", "Role"]
    : ["clusterroles", "clusterrolebindings", "ClusterRole"];
  await cluster.store.create(resource(role), { metadata: { name, namespace }, rules });
  await cluster.store.create(resource(binding), {
    metadata: { name, namespace },
    roleRef: { apiGroup: RBAC, kind, name },
    subjects: [{ kind: "User", name: user, apiGroup: RBAC }],
  });
}

beforeAll(async () => {
  cluster = await startTestCluster("fake", { controllers: false });
  await cluster.store.create(resource("namespaces"), { metadata: { name: NS } });
  await cluster.store.create(resource("namespaces"), {
    metadata: { name: RESTRICTED, labels: { "pod-security.kubernetes.io/enforce": "restricted" } },
  });
  // "limited": reads and creates pods in both namespaces, may ask SubjectAccessReviews, nothing else.
  cluster.addUser("limited", []);
  for (const ns of [NS, RESTRICTED])
    await grant("limited", [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "create"] }], ns);
  await grant("limited", [
    { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
  ]);
  // "escalator": holds none of the rules, but may escalate and bind ClusterRoles.
  cluster.addUser("escalator", []);
  await grant("escalator", [{ apiGroups: [RBAC], resources: ["clusterroles"], verbs: ["escalate", "bind"] }]);
  // "holder": holds exactly what the test ClusterRole grants, pods/exec included.
  cluster.addUser("holder", []);
  await grant("holder", [
    { apiGroups: ["", "apps"], resources: ["nodes", "daemonsets", "pods/exec"], verbs: ["list", "create"] },
  ]);
}, CLUSTER_HOOK_MS);

afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

afterAll(async () => {
  await cluster?.stop();
}, CLUSTER_HOOK_MS);

describe("expandRules", () => {
  test("every API group × resource × verb, subresources split, each once", () => {
    const checks = expandRules(
      [
        { apiGroups: ["", "apps"], resources: ["pods", "pods/exec"], verbs: ["get"] },
        { apiGroups: [""], resources: ["pods"], verbs: ["get"] },
      ],
      "ns",
    );
    expect(
      checks.map((c) => `${c.verb} ${c.group}/${c.resource}/${c.subresource ?? ""} ${c.namespace}`),
    ).toEqual(["get /pods/ ns", "get /pods/exec ns", "get apps/pods/ ns", "get apps/pods/exec ns"]);
  });

  test("escalate and bind on the grant's own kind, in its namespace", () => {
    expect(escalateAndBind({ kind: "Role", namespace: "ns" })).toEqual([
      { verb: "escalate", group: RBAC, resource: "roles", namespace: "ns" },
      { verb: "bind", group: RBAC, resource: "roles", namespace: "ns" },
    ]);
    expect(
      escalateAndBind({ kind: "ClusterRole" }).map((c) => `${c.verb} ${c.resource} ${c.namespace}`),
    ).toEqual(["escalate clusterroles undefined", "bind clusterroles undefined"]);
  });
});

describe("passGate", () => {
  test(
    "identical checks are asked once, whichever part asks them (access, a grant, a later part, a dry run)",
    async () => {
      cluster.log.clear();
      const spec: GateSpec = {
        access: [GET_PODS, { ...GET_PODS }, DELETE_PODS, { ...DELETE_PODS, hint: "h" }],
        grants: [
          {
            kind: "Role",
            namespace: NS,
            rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "create"] }],
            grantedBy: "the test Role",
          },
        ],
        dryRuns: [{ object: pod(NS, false), what: "the probe pod" }],
        later: {
          needs: [GET_PODS],
          part: Promise.resolve({
            access: [GET_PODS, { verb: "create", group: "", resource: "pods", namespace: NS }],
          }),
          unchecked: "unchecked",
        },
      };
      const err = await refused(passGate(connect("limited"), spec, { refusal }));
      expect(err.message).toBe(
        `missing 1:\nthe caller (your kubeconfig identity) cannot "delete" pods (namespace "${NS}")`,
      );
      // get, delete, create pods; escalate and bind roles: five questions, five requests.
      const asked = attributes("limited").map((a) => JSON.stringify(a));
      expect(asked.length).toBe(5);
      expect(new Set(asked).size).toBe(5);
      expect(err.remedy).toBe("h");
    },
    TEST_MS,
  );

  test(
    "every gap at once: the caller's access, an escalation, a subject's rules and an admission rejection",
    async () => {
      cluster.log.clear();
      const agent = `system:serviceaccount:${RESTRICTED}:agent`;
      const spec: GateSpec = {
        access: [{ ...DELETE_PODS, hint: "may delete pods" }, GET_PODS],
        grants: [
          {
            kind: "ClusterRole",
            rules: [{ apiGroups: [""], resources: ["nodes"], verbs: ["list"] }],
            grantedBy: "the test ClusterRole",
            hint: "hold what you grant",
          },
        ],
        subjects: [
          {
            subject: { user: agent, groups: ["system:serviceaccounts", "system:authenticated"] },
            checks: [{ verb: "get", group: "", resource: "configmaps", namespace: RESTRICTED }],
            who: `agent "${agent}"`,
            hint: "grant the agent",
            unverifiable: { message: "not verified", fields: {} },
          },
        ],
        dryRuns: [{ object: pod(RESTRICTED, true), what: "the probe pod" }],
      };
      const err = await refused(
        passGate(connect("limited"), spec, {
          refusal: { ...refusal, context: (lines) => ({ count: lines.length }) },
          nameCaller: true,
        }),
      );
      expect(err).toBeInstanceOf(AicrError);
      expect(err.code).toBe("UNAUTHORIZED");
      const lines = err.message.split("\n").slice(1);
      expect(lines.slice(0, 3)).toEqual([
        `the caller "limited" cannot "delete" pods (namespace "${NS}")`,
        `the caller "limited" cannot "list" nodes (cluster-scoped), which the test ClusterRole grants: creating it would be refused as privilege escalation`,
        `agent "${agent}" cannot "get" configmaps (namespace "${RESTRICTED}")`,
      ]);
      expect(lines[3]).toStartWith(
        `the probe pod would be rejected by admission in namespace "${RESTRICTED}": `,
      );
      expect(lines.length).toBe(4);
      expect(err.message.startsWith("missing 4:")).toBe(true);
      expect(err.remedy).toBe("may delete pods; hold what you grant; grant the agent");
      expect(err.context).toEqual({ count: 4 });
      expect(reviews(SAR, "limited").length).toBe(1);
      // Nothing was written: the only POSTs are reviews and the dry run.
      const writes = cluster.log
        .mutatingRequests()
        .filter((e) => !e.path.includes("accessreviews") && !e.path.endsWith("selfsubjectreviews"));
      expect(writes.map((e) => `${e.method} ${e.path} ${e.query.dryRun}`)).toEqual([
        `POST /api/v1/namespaces/${RESTRICTED}/pods All`,
      ]);
    },
    TEST_MS,
  );

  test(
    "the escalation prediction asks every API group and subresource a rule grants",
    async () => {
      const rules = [
        {
          apiGroups: ["", "apps"],
          resources: ["nodes", "daemonsets", "pods/exec"],
          verbs: ["list", "create"],
        },
      ];
      const spec: GateSpec = { grants: [{ kind: "ClusterRole", rules, grantedBy: "the test ClusterRole" }] };
      cluster.log.clear();
      const err = await refused(passGate(connect("limited"), spec, { refusal }));
      const lines = err.message.split("\n").slice(1);
      // 2 groups × 3 resources × 2 verbs, none held.
      expect(lines.length).toBe(12);
      expect(lines).toContain(
        `the caller (your kubeconfig identity) cannot "create" pods/exec.apps (cluster-scoped), which the test ClusterRole grants: creating it would be refused as privilege escalation`,
      );
      expect(lines).toContain(
        `the caller (your kubeconfig identity) cannot "list" daemonsets (cluster-scoped), which the test ClusterRole grants: creating it would be refused as privilege escalation`,
      );
      expect(attributes("limited")).toContainEqual({
        verb: "create",
        group: "",
        resource: "pods",
        subresource: "exec",
      });
      expect(attributes("limited").length).toBe(12 + 2);

      // Holding every one of them, or escalate and bind on the kind, passes.
      expect((await passGate(connect("holder"), spec, { refusal })).holdsEverything).toBe(false);
      await passGate(connect("escalator"), spec, { refusal });
      // escalate without bind is not enough: the run binds what it creates.
      const roleSpec: GateSpec = {
        grants: [{ kind: "Role", namespace: NS, rules, grantedBy: "the test Role" }],
      };
      expect((await refused(passGate(connect("escalator"), roleSpec, { refusal }))).code).toBe(
        "UNAUTHORIZED",
      );
    },
    TEST_MS,
  );

  test(
    "everythingFirst: cluster-admin is settled by one wildcard review; subjects and dry runs are still asked",
    async () => {
      cluster.log.clear();
      const logged: string[] = [];
      const log = {
        info: (m: unknown) => logged.push(String(m)),
        warn() {},
        error() {},
        debug() {},
      } as Logger;
      const outcome = await passGate(
        connect("admin"),
        {
          access: [GET_PODS, DELETE_PODS],
          grants: [
            {
              kind: "ClusterRole",
              rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
              grantedBy: "x",
            },
          ],
          dryRuns: [{ object: pod("not-there", true), what: "the probe pod" }],
        },
        { refusal, everythingFirst: true, nameCaller: true, log },
      );
      expect(outcome.holdsEverything).toBe(true);
      // The wildcard, and the dry run's own "may create pods": nothing per access check or grant.
      expect(attributes("admin").length).toBe(2);
      expect(attributes("admin")).toContainEqual({ verb: "*", group: "*", resource: "*" });
      expect(attributes("admin")).toContainEqual({
        verb: "create",
        group: "",
        resource: "pods",
        namespace: "not-there",
      });
      expect(cluster.log.entries.some((e) => e.path.endsWith("/selfsubjectreviews"))).toBe(false);
      expect(logged).toEqual(["admission was not predicted: namespace not-there does not exist yet"]);
    },
    TEST_MS,
  );

  test(
    "a later part: asked once its needs are held; while one is missing it is not asked and the remedy says so",
    async () => {
      const later = (needs: AccessCheck[]): GateSpec => ({
        later: { needs, part: Promise.resolve({ access: [DELETE_PODS] }), unchecked: "cannot be checked" },
      });
      cluster.log.clear();
      const held = await refused(passGate(connect("limited"), later([GET_PODS]), { refusal }));
      expect(held.message).toContain('cannot "delete" pods');
      const missing = await refused(
        passGate(connect("limited"), later([{ ...GET_PODS, verb: "list" }]), { refusal }),
      );
      expect(missing.message).toBe(
        `missing 1:\nthe caller (your kubeconfig identity) cannot "list" pods (namespace "${NS}")`,
      );
      expect(missing.remedy).toBe("cannot be checked");
      expect(attributes("limited").filter((a) => JSON.stringify(a).includes('"delete"')).length).toBe(1);
    },
    TEST_MS,
  );

  test(
    "a check that is not required does not refuse: it is returned",
    async () => {
      const access: (Need & { tag: string })[] = [
        { ...GET_PODS, tag: "read" },
        { ...DELETE_PODS, tag: "delete", required: false },
      ];
      const { unmet } = await passGate(connect("limited"), { access }, { refusal });
      expect(unmet.map((c) => c.tag)).toEqual(["delete"]);
    },
    TEST_MS,
  );

  test(
    "a subject the caller may not ask about is warned about, and the gate passes",
    async () => {
      const warned: string[] = [];
      const log = {
        warn: (m: unknown) => warned.push(String(m)),
        info() {},
        error() {},
        debug() {},
      } as Logger;
      cluster.addUser("no-sar", []);
      await passGate(
        connect("no-sar"),
        {
          subjects: [
            {
              subject: { user: "system:serviceaccount:x:y", groups: [] },
              checks: [GET_PODS],
              who: "y",
              unverifiable: { message: "could not verify y", fields: {} },
            },
          ],
        },
        { refusal, log },
      );
      expect(warned).toEqual(["could not verify y"]);
    },
    TEST_MS,
  );

  test(
    "the cancel signal: nothing is sent once it has aborted; an abort mid-gate rejects at once with its reason",
    async () => {
      const reason = new AicrError("CANCELED", "cancelled by SIGINT");
      const spec: GateSpec = {
        access: [GET_PODS, DELETE_PODS],
        dryRuns: [{ object: pod(NS, false), what: "the probe pod" }],
      };
      cluster.log.clear();
      const before = cluster.log.entries.length;
      const err = await passGate(connect("limited"), spec, {
        refusal,
        signal: AbortSignal.abort(reason),
      }).catch((e) => e);
      expect(err).toBe(reason);
      expect(cluster.log.entries.length).toBe(before);

      // Aborted while a review is held: the gate rejects at once with the reason, not when it is answered.
      let release = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      const hold = cluster.faults.add({ method: "POST", path: SSAR, nth: 0, holdUntil: held });
      const cancel = new AbortController();
      try {
        const pending = passGate(connect("limited"), spec, { refusal, signal: cancel.signal }).catch(
          (e) => e,
        );
        const start = Date.now();
        while (hold.matched < 1 && Date.now() - start < 10_000) await Bun.sleep(5);
        expect(hold.matched).toBeGreaterThanOrEqual(1);
        cancel.abort(reason);
        expect(await pending).toBe(reason);
      } finally {
        hold.remove();
        release();
      }
    },
    TEST_MS,
  );
});
