/**
 * reviewAll against the fake apiserver, at the HTTP boundary: the answers, the bound on reviews in
 * flight, single-flight, no new review after a failure or a cancel; and the one wording of a missing
 * permission.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { AicrError } from "../../../src/core/errors.ts";
import { KubeClient } from "../../../src/kube/client.ts";
import {
  type AccessCheck,
  CALLER,
  callerNamed,
  deniedChecks,
  describeMissing,
  reviewAll,
} from "../../../src/kube/reviews.ts";
import { resource } from "../../cluster/resources.ts";
import { CLUSTER_HOOK_MS, startTestCluster, type TestCluster } from "../../cluster/testbed.ts";
import { countCalls } from "../../support/calls.ts";

const TEST_MS = 20_000;
const SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
const SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
const NS = "demo";
const GET_PODS: AccessCheck = { verb: "get", group: "", resource: "pods", namespace: NS };
const DELETE_PODS: AccessCheck = { verb: "delete", group: "", resource: "pods", namespace: NS };
const GET_PODS_ELSEWHERE: AccessCheck = { ...GET_PODS, namespace: "other" };
const GET_LOG: AccessCheck = { ...GET_PODS, subresource: "log" };

/** `n` distinct questions (none granted to the reader). */
const distinct = (n: number): AccessCheck[] =>
  Array.from({ length: n }, (_, i) => ({ verb: "get", group: "", resource: "configmaps", name: `cm-${i}` }));

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}
function deferred(): Deferred {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Waits until `ok()` holds (bounded: a failing test fails, it does not hang). */
async function until(ok: () => boolean, what: string): Promise<void> {
  const start = Date.now();
  while (!ok()) {
    if (Date.now() - start > 10_000) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

let cluster: TestCluster;
const clients: KubeClient[] = [];
const connect = (user: string): KubeClient => {
  const client = KubeClient.connect({ kubeconfig: cluster.kubeconfigFor(user), env: {} });
  clients.push(client);
  return client;
};
const reviewsOn = (path: string, user: string) =>
  cluster.log.entries.filter((e) => e.path === path && e.user === user);

beforeAll(async () => {
  cluster = await startTestCluster("fake", { controllers: false });
  cluster.addUser("reader", []);
  await cluster.store.create(resource("namespaces"), { metadata: { name: NS } });
  await cluster.store.create(resource("roles"), {
    metadata: { name: "pod-reader", namespace: NS },
    rules: [{ apiGroups: [""], resources: ["pods", "pods/log"], verbs: ["get"] }],
  });
  await cluster.store.create(resource("rolebindings"), {
    metadata: { name: "pod-reader", namespace: NS },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "pod-reader" },
    subjects: [
      { kind: "User", name: "reader", apiGroup: "rbac.authorization.k8s.io" },
      { kind: "ServiceAccount", name: "agent", namespace: NS },
    ],
  });
}, CLUSTER_HOOK_MS);

afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

afterAll(async () => {
  await cluster?.stop();
}, CLUSTER_HOOK_MS);

describe("reviewAll", () => {
  test(
    "answers each check in order: allowed where a binding grants it, denied elsewhere (SelfSubjectAccessReviews)",
    async () => {
      cluster.log.clear();
      const answers = await reviewAll(connect("reader"), [
        GET_PODS,
        DELETE_PODS,
        GET_PODS_ELSEWHERE,
        GET_LOG,
      ]);
      expect(answers.map((a) => a.allowed)).toEqual([true, false, false, true]);
      const asked = reviewsOn(SSAR, "reader").map(
        (e) => (e.body as { spec: { resourceAttributes: unknown } }).spec.resourceAttributes,
      );
      expect(asked).toContainEqual({
        verb: "get",
        group: "",
        resource: "pods",
        subresource: "log",
        namespace: NS,
      });
      expect(asked.length).toBe(4);
    },
    TEST_MS,
  );

  test(
    "deniedChecks keeps a gate's own fields but sends only the review's attributes",
    async () => {
      cluster.log.clear();
      const checks = [
        { ...GET_PODS, need: "read" },
        { ...DELETE_PODS, name: "p", need: "delete" },
      ];
      const denied = await deniedChecks(connect("reader"), checks);
      expect(denied).toEqual([{ ...DELETE_PODS, name: "p", need: "delete" }]);
      const bodies = reviewsOn(SSAR, "reader").map((e) => JSON.stringify(e.body));
      expect(bodies.length).toBe(2);
      expect(bodies.some((b) => b.includes("need"))).toBe(false);
    },
    TEST_MS,
  );

  test(
    "with a subject: SubjectAccessReviews about that ServiceAccount, not the caller",
    async () => {
      cluster.log.clear();
      const subject = {
        user: `system:serviceaccount:${NS}:agent`,
        groups: ["system:serviceaccounts", `system:serviceaccounts:${NS}`, "system:authenticated"],
      };
      const answers = await reviewAll(connect("admin"), [GET_PODS, DELETE_PODS], { subject });
      expect(answers.map((a) => a.allowed)).toEqual([true, false]);
      const sars = reviewsOn(SAR, "admin");
      expect(sars.length).toBe(2);
      expect(sars.map((e) => (e.body as { spec: { user: string } }).spec.user)).toEqual([
        subject.user,
        subject.user,
      ]);
      expect(reviewsOn(SSAR, "admin")).toEqual([]);
    },
    TEST_MS,
  );

  test(
    "at most `concurrency` reviews in flight: the next goes out only when one is answered",
    async () => {
      cluster.log.clear();
      const total = 9;
      const limit = 3;
      const gates = Array.from({ length: total }, deferred);
      const holds = gates.map((g, i) =>
        cluster.faults.add({ method: "POST", path: SSAR, nth: i + 1, count: 1, holdUntil: g.promise }),
      );
      const arrived = () => holds[0]?.matched ?? 0;
      const client = connect("reader");
      const reviews = countCalls(client, "review");
      try {
        const answers = reviewAll(client, distinct(total), { concurrency: limit });
        for (let released = 0; released < total; released++) {
          const expected = Math.min(total, released + limit);
          await until(() => arrived() >= expected, `${expected} reviews`);
          expect(arrived()).toBe(expected);
          gates[released]?.resolve();
        }
        expect((await answers).length).toBe(total);
        expect(reviews.most).toBe(limit); // counted at every call: never more unanswered, whatever the timing
        expect(reviewsOn(SSAR, "reader").length).toBe(total);
      } finally {
        for (const h of holds) h.remove();
        for (const g of gates) g.resolve();
      }
    },
    TEST_MS,
  );

  test(
    "defaults to 16 in flight",
    async () => {
      cluster.log.clear();
      const gate = deferred();
      const hold = cluster.faults.add({ method: "POST", path: SSAR, nth: 0, holdUntil: gate.promise });
      const client = connect("reader");
      const reviews = countCalls(client, "review");
      try {
        const answers = reviewAll(client, distinct(40));
        await until(() => hold.matched >= 16, "16 reviews");
        expect(hold.matched).toBe(16);
        gate.resolve();
        expect((await answers).length).toBe(40);
        expect(reviews.most).toBe(16); // counted at every call: never more unanswered
        expect(reviewsOn(SSAR, "reader").length).toBe(40);
      } finally {
        hold.remove();
        gate.resolve();
      }
    },
    TEST_MS,
  );

  test(
    "single-flight: a question repeated in one call, or asked by a concurrent call on the same client, is sent once",
    async () => {
      cluster.log.clear();
      const client = connect("reader");
      const answers = await reviewAll(client, [
        GET_PODS,
        DELETE_PODS,
        { ...GET_PODS },
        GET_PODS,
        DELETE_PODS,
      ]);
      expect(answers.map((a) => a.allowed)).toEqual([true, false, true, true, false]);
      expect(reviewsOn(SSAR, "reader").length).toBe(2);

      // Two calls while the first one's question is still unanswered share its request.
      cluster.log.clear();
      const gate = deferred();
      const hold = cluster.faults.add({ method: "POST", path: SSAR, nth: 0, holdUntil: gate.promise });
      try {
        const first = reviewAll(client, [GET_PODS]);
        await until(() => hold.matched === 1, "the first review");
        const second = reviewAll(client, [GET_PODS, GET_LOG]);
        await until(() => hold.matched === 2, "the second call's other review");
        gate.resolve();
        expect((await first).map((a) => a.allowed)).toEqual([true]);
        expect((await second).map((a) => a.allowed)).toEqual([true, true]);
        expect(reviewsOn(SSAR, "reader").length).toBe(2);
      } finally {
        hold.remove();
        gate.resolve();
      }

      // Nothing is cached once answered: a later call asks again.
      await reviewAll(client, [GET_PODS]);
      expect(reviewsOn(SSAR, "reader").length).toBe(3);
    },
    TEST_MS,
  );

  test(
    "the same question about another subject, or through another client, is a separate request",
    async () => {
      cluster.log.clear();
      const admin = connect("admin");
      const subject = { user: `system:serviceaccount:${NS}:agent`, groups: [] };
      await Promise.all([
        reviewAll(admin, [GET_PODS]),
        reviewAll(admin, [GET_PODS], { subject }),
        reviewAll(connect("admin"), [GET_PODS]),
      ]);
      expect(reviewsOn(SSAR, "admin").length).toBe(2);
      expect(reviewsOn(SAR, "admin").length).toBe(1);
    },
    TEST_MS,
  );

  test(
    "after the first failed review nothing new is sent, and the call fails with that error",
    async () => {
      cluster.log.clear();
      const failed = cluster.faults.add({ method: "POST", path: SSAR, nth: 1, status: 500 });
      // The other two in flight are answered only once the failure is in.
      const hold = cluster.faults.add({
        method: "POST",
        path: SSAR,
        nth: 2,
        count: 2,
        holdUntil: cluster.log.waitFor((e) => e.path === SSAR && e.status === 500),
      });
      try {
        const err = await reviewAll(connect("reader"), distinct(10), { concurrency: 3 }).catch((e) => e);
        expect(err).toBeInstanceOf(AicrError);
        expect(reviewsOn(SSAR, "reader").length).toBe(3);
      } finally {
        failed.remove();
        hold.remove();
      }
    },
    TEST_MS,
  );

  test(
    "a cancel signal: nothing is sent once it has aborted, and the call rejects with its reason",
    async () => {
      cluster.log.clear();
      const client = connect("reader");
      const reason = new AicrError("CANCELED", "cancelled by SIGINT");
      const err = await reviewAll(client, [GET_PODS], { signal: AbortSignal.abort(reason) }).catch((e) => e);
      expect(err).toBe(reason);
      expect(reviewsOn(SSAR, "reader")).toEqual([]);

      // Aborted while the first review is in flight: the rest are never asked.
      const cancel = new AbortController();
      const gate = deferred();
      const hold = cluster.faults.add({ method: "POST", path: SSAR, nth: 1, holdUntil: gate.promise });
      const reviews = countCalls(client, "review");
      try {
        const pending = reviewAll(client, distinct(5), { concurrency: 1, signal: cancel.signal }).catch(
          (e) => e,
        );
        await until(() => hold.matched === 1, "the first review");
        cancel.abort(reason);
        gate.resolve();
        expect(await pending).toBe(reason);
        // The first review's answer is what would send the next: once it is in and all it set going has run.
        await reviews.quiet();
        expect(reviews.calls).toBe(1);
        expect(reviewsOn(SSAR, "reader").length).toBe(1);
      } finally {
        hold.remove();
        gate.resolve();
      }
    },
    TEST_MS,
  );
});

describe("describeMissing", () => {
  test("who, the quoted verb, resource[/subresource].group, the quoted name, and where", () => {
    expect(
      describeMissing({ verb: "delete", group: "batch", resource: "jobs", namespace: "gpu", name: "aicr" }),
    ).toBe('the caller (your kubeconfig identity) cannot "delete" jobs.batch "aicr" (namespace "gpu")');
    expect(describeMissing({ verb: "list", group: "", resource: "configmaps" })).toBe(
      'the caller (your kubeconfig identity) cannot "list" configmaps (cluster-scoped)',
    );
    expect(describeMissing(GET_LOG, { who: 'agent ServiceAccount "system:serviceaccount:demo:agent"' })).toBe(
      'agent ServiceAccount "system:serviceaccount:demo:agent" cannot "get" pods/log (namespace "demo")',
    );
  });

  test("the authorizer's reason after a colon when it gave one; blank reasons add nothing", () => {
    expect(
      describeMissing(GET_LOG, { reason: 'RBAC: role.rbac.authorization.k8s.io "gone" not found' }),
    ).toBe(
      'the caller (your kubeconfig identity) cannot "get" pods/log (namespace "demo"): RBAC: role.rbac.authorization.k8s.io "gone" not found',
    );
    expect(describeMissing(GET_LOG, { reason: " " })).toBe(
      'the caller (your kubeconfig identity) cannot "get" pods/log (namespace "demo")',
    );
  });

  test("a permission the run's role grants says why the caller must hold it", () => {
    expect(
      describeMissing({ verb: "get", group: "", resource: "nodes" }, { grantedBy: "the run's ClusterRole" }),
    ).toBe(
      `the caller (your kubeconfig identity) cannot "get" nodes (cluster-scoped), which the run's ClusterRole grants: creating it would be refused as privilege escalation`,
    );
  });

  test("the caller by the name the apiserver knows it by, else the generic wording", () => {
    const who = callerNamed("system:serviceaccount:demo:limited");
    expect(describeMissing(GET_LOG, { who })).toBe(
      'the caller "system:serviceaccount:demo:limited" cannot "get" pods/log (namespace "demo")',
    );
    expect(callerNamed(undefined)).toBe(CALLER);
    expect(callerNamed("")).toBe(CALLER);
  });
});

describe("whoAmI (SelfSubjectReview)", () => {
  test(
    "the authenticated username, asked once with one POST",
    async () => {
      const before = cluster.log.entries.length;
      expect(await connect("reader").whoAmI()).toBe("reader");
      const sent = cluster.log.entries.slice(before).map((e) => `${e.method} ${e.path}`);
      expect(sent).toEqual(["POST /apis/authentication.k8s.io/v1/selfsubjectreviews"]);
    },
    TEST_MS,
  );
});
