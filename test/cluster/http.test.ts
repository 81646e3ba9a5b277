import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { wireClient } from "./http-client.ts";
import { resource } from "./resources.ts";
import { type Cluster, startCluster } from "./server.ts";

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster({
    controllers: false,
    users: [{ name: "alice" }, { name: "bob", groups: ["devs"] }],
  });
});
afterAll(() => cluster.stop());

const CM = "/api/v1/namespaces/default/configmaps";
const cmBody = (name: string, labels?: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, ...(labels ? { labels } : {}) },
  data: { k: "v" },
});

describe("wire: Status bodies and authentication", () => {
  test("NotFound is a Status with reason, details and code", async () => {
    const res = await wireClient(cluster, "admin").get(`${CM}/missing`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'configmaps "missing" not found',
      reason: "NotFound",
      details: { name: "missing", kind: "configmaps" },
      code: 404,
    });
  });

  test("an unknown token is 401; no token is system:anonymous", async () => {
    const bad = await wireClient(cluster, undefined, { authorization: "Bearer nope" }).get(CM);
    expect(bad.status).toBe(401);
    expect(bad.body.reason).toBe("Unauthorized");
    const anon = await wireClient(cluster).get(CM);
    expect(anon.status).toBe(403);
    expect(anon.body.message).toBe(
      'configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "default"',
    );
  });

  test("ServiceAccount tokens authenticate as system:serviceaccount:<ns>:<name> until the SA is deleted", async () => {
    const admin = wireClient(cluster, "admin");
    await admin.post("/api/v1/namespaces/default/serviceaccounts", { metadata: { name: "robot" } });
    const sa = wireClient(cluster, "system:serviceaccount:default:robot");
    const review = await sa.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: { resourceAttributes: { verb: "list", resource: "pods", namespace: "default" } },
    });
    expect(review.status).toBe(201);
    expect(review.body.status.allowed).toBe(false);
    const forbidden = await sa.get(CM);
    expect(forbidden.body.message).toContain('User "system:serviceaccount:default:robot" cannot list');
    expect(cluster.log.byUser("system:serviceaccount:default:robot").at(-1)?.groups).toEqual([
      "system:serviceaccounts",
      "system:serviceaccounts:default",
      "system:authenticated",
    ]);
    await admin.delete("/api/v1/namespaces/default/serviceaccounts/robot");
    expect((await sa.get(CM)).status).toBe(401);
  });
});

describe("wire: RBAC", () => {
  test("a RoleBinding grants exactly its rules (resourceNames, subresources)", async () => {
    const admin = wireClient(cluster, "admin");
    const alice = wireClient(cluster, "alice");
    await admin.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", {
      metadata: { name: "cm-reader" },
      rules: [
        { apiGroups: [""], resources: ["configmaps"], verbs: ["get"], resourceNames: ["allowed"] },
        { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
      ],
    });
    await admin.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", {
      metadata: { name: "alice-reads" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "cm-reader" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "alice" }],
    });
    await admin.post(CM, cmBody("allowed"));
    await admin.post(CM, cmBody("secret"));
    expect((await alice.get(`${CM}/allowed`)).status).toBe(200);
    const denied = await alice.get(`${CM}/secret`);
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe(
      'configmaps "secret" is forbidden: User "alice" cannot get resource "configmaps" in API group "" in the namespace "default"',
    );
    expect(denied.body.details).toEqual({ name: "secret", kind: "configmaps" });
    const pods = await alice.get("/api/v1/namespaces/default/pods/x");
    expect(pods.status).toBe(403);
    // pods/log is granted on its own: authorization passes, then the pod is not found.
    const log = await alice.get("/api/v1/namespaces/default/pods/x/log");
    expect(log.status).toBe(404);
    expect(log.body.message).toBe('pods "x" not found');
  });

  test("SubjectAccessReview needs create on subjectaccessreviews and uses the same evaluator", async () => {
    const body = {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: "alice",
        resourceAttributes: { verb: "get", resource: "configmaps", namespace: "default", name: "allowed" },
      },
    };
    const denied = await wireClient(cluster, "alice").post(
      "/apis/authorization.k8s.io/v1/subjectaccessreviews",
      body,
    );
    expect(denied.status).toBe(403);
    const answer = await wireClient(cluster, "admin").post(
      "/apis/authorization.k8s.io/v1/subjectaccessreviews",
      body,
    );
    expect(answer.status).toBe(201);
    expect(answer.body.status.allowed).toBe(true);
    expect(answer.body.status.reason).toContain('RoleBinding "alice-reads/default" of Role "cm-reader"');
    const other = {
      ...body,
      spec: { ...body.spec, resourceAttributes: { ...body.spec.resourceAttributes, name: "secret" } },
    };
    expect(
      (await wireClient(cluster, "admin").post("/apis/authorization.k8s.io/v1/subjectaccessreviews", other))
        .body.status.allowed,
    ).toBe(false);
  });

  test("escalation prevention: a Role granting more than the requester holds is Forbidden", async () => {
    const admin = wireClient(cluster, "admin");
    await admin.post("/apis/rbac.authorization.k8s.io/v1/clusterroles", {
      metadata: { name: "role-writer" },
      rules: [{ apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"], verbs: ["create"] }],
    });
    await admin.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", {
      metadata: { name: "bob-writes-roles" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "role-writer" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "devs" }],
    });
    const bob = wireClient(cluster, "bob");
    const res = await bob.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", {
      metadata: { name: "too-much" },
      rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["delete"] }],
    });
    expect(res.status).toBe(403);
    expect(res.body.message).toStartWith(
      'roles.rbac.authorization.k8s.io "too-much" is forbidden: user "bob" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:',
    );
    const ok = await bob.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", {
      metadata: { name: "subset" },
      rules: [{ apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"], verbs: ["create"] }],
    });
    expect(ok.status).toBe(201);
  });

  test("the bind verb lets a requester bind a role it does not hold", async () => {
    const admin = wireClient(cluster, "admin");
    const binding = {
      metadata: { name: "bob-edits" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "bob" }],
    };
    const bindings = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings";
    await admin.post("/apis/rbac.authorization.k8s.io/v1/clusterroles", {
      metadata: { name: "binder" },
      rules: [{ apiGroups: ["rbac.authorization.k8s.io"], resources: ["rolebindings"], verbs: ["create"] }],
    });
    await admin.post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      metadata: { name: "devs-bind" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "binder" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "devs" }],
    });
    const bob = wireClient(cluster, "bob");
    const before = await bob.post(bindings, binding);
    expect(before.status).toBe(403);
    expect(before.body.message).toContain("is attempting to grant RBAC permissions not currently held");
    const bindEdit = {
      apiGroups: ["rbac.authorization.k8s.io"],
      resources: ["clusterroles"],
      verbs: ["bind"],
      resourceNames: ["edit"],
    };
    const add = [{ op: "add", path: "/rules/-", value: bindEdit }];
    cluster.store.patch(resource("clusterroles"), undefined, "binder", "json", add);
    expect((await bob.post(bindings, binding)).status).toBe(201);
  });

  test("impersonation needs the impersonate verb; system:masters may", async () => {
    const headers = { "impersonate-user": "system:serviceaccount:default:default" };
    const asSa = await wireClient(cluster, "admin", headers).get(CM);
    expect(asSa.status).toBe(403);
    expect(asSa.body.message).toContain('User "system:serviceaccount:default:default" cannot list');
    const byAlice = await wireClient(cluster, "alice", headers).get(CM);
    expect(byAlice.status).toBe(403);
    expect(byAlice.body.message).toContain('User "alice" cannot impersonate resource "serviceaccounts"');
  });
});

describe("wire: writes", () => {
  test("dryRun=All on create answers 201 and stores nothing", async () => {
    const res = await wireClient(cluster, "admin").post(`${CM}?dryRun=All`, cmBody("dry"));
    expect(res.status).toBe(201);
    expect(res.body.metadata.uid).toBeDefined();
    expect(cluster.store.find(resource("configmaps"), "default", "dry")).toBeUndefined();
  });

  test("update with a stale resourceVersion is 409; the URL name must match", async () => {
    const admin = wireClient(cluster, "admin");
    const created = (await admin.post(CM, cmBody("upd"))).body;
    expect((await admin.put(`${CM}/upd`, { ...created, data: { k: "2" } })).status).toBe(200);
    const stale = await admin.put(`${CM}/upd`, { ...created, data: { k: "3" } });
    expect(stale.status).toBe(409);
    expect(stale.body.reason).toBe("Conflict");
    const renamed = await admin.put(`${CM}/other`, { ...created });
    expect(renamed.status).toBe(400);
  });

  test("JSON merge patch, strategic merge patch (labels) and JSON patch", async () => {
    const admin = wireClient(cluster, "admin");
    await admin.post(CM, cmBody("p", { a: "1", b: "2" }));
    const merged = await admin.patch(
      `${CM}/p`,
      { metadata: { labels: { a: null, c: "3" } } },
      "application/merge-patch+json",
    );
    expect(merged.body.metadata.labels).toEqual({ b: "2", c: "3" });
    const smp = await admin.patch(
      `${CM}/p`,
      { metadata: { labels: { d: "4" } } },
      "application/strategic-merge-patch+json",
    );
    expect(smp.body.metadata.labels).toEqual({ b: "2", c: "3", d: "4" });
    const jp = await admin.patch(
      `${CM}/p`,
      [{ op: "replace", path: "/data/k", value: "w" }],
      "application/json-patch+json",
    );
    expect(jp.body.data).toEqual({ k: "w" });
    const stale = await admin.patch(
      `${CM}/p`,
      { metadata: { resourceVersion: "1" } },
      "application/merge-patch+json",
    );
    expect(stale.status).toBe(409);
    expect((await admin.patch(`${CM}/nope`, {}, "application/merge-patch+json")).status).toBe(404);
  });

  test("server-side apply: fieldManager required, conflicts, force", async () => {
    const admin = wireClient(cluster, "admin");
    const apply = (q: string, data: Record<string, string>) =>
      admin.patch(
        `${CM}/ssa?${q}`,
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "ssa" }, data },
        "application/apply-patch+yaml",
      );
    expect((await apply("", { a: "1" })).status).toBe(422);
    const created = await apply("fieldManager=one", { a: "1" });
    expect(created.status).toBe(201);
    expect(created.body.metadata.managedFields[0].manager).toBe("one");
    const conflict = await apply("fieldManager=two", { a: "2" });
    expect(conflict.status).toBe(409);
    expect(conflict.body.reason).toBe("Conflict");
    expect(conflict.body.message).toContain('conflict with "one"');
    const forced = await apply("fieldManager=two&force=true", { a: "2" });
    expect(forced.status).toBe(200);
    expect(forced.body.data).toEqual({ a: "2" });
  });

  test("protobuf bodies are refused with 415", async () => {
    const res = await wireClient(cluster, "admin").post(CM, new Uint8Array([0x6b, 0x38, 0x73, 0]), {
      "content-type": "application/vnd.kubernetes.protobuf",
    });
    expect(res.status).toBe(415);
    expect(res.body.reason).toBe("UnsupportedMediaType");
  });

  test("delete answers a Status for configmaps, the object for pods, 202 while finalizers hold", async () => {
    const admin = wireClient(cluster, "admin");
    await admin.post(CM, cmBody("gone"));
    const del = await admin.delete(`${CM}/gone`);
    expect(del.body).toMatchObject({
      kind: "Status",
      status: "Success",
      details: { name: "gone", kind: "configmaps" },
    });
    await admin.post(CM, cmBody("fg"));
    const fg = await admin.delete(`${CM}/fg`, { propagationPolicy: "Foreground" });
    expect(fg.status).toBe(202);
    expect(fg.body.metadata.finalizers).toEqual(["foregroundDeletion"]);
    const pod = { metadata: { name: "del-pod" }, spec: { containers: [{ name: "c", image: "i" }] } };
    await admin.post("/api/v1/namespaces/default/pods", pod);
    const podDel = await admin.delete("/api/v1/namespaces/default/pods/del-pod");
    expect(podDel.body.kind).toBe("Pod");
  });
});

describe("wire: discovery", () => {
  test("shortNames and groups are advertised", async () => {
    const admin = wireClient(cluster, "admin");
    const core = (await admin.get("/api/v1")).body;
    expect(core.resources.find((r: { name: string }) => r.name === "configmaps").shortNames).toEqual(["cm"]);
    expect(core.resources.some((r: { name: string }) => r.name === "pods/log")).toBe(true);
    const groups = (await admin.get("/apis")).body.groups.map((g: { name: string }) => g.name);
    expect(groups).toContain("nvidia.com");
    const cp = (await admin.get("/apis/nvidia.com/v1")).body.resources[0];
    expect(cp).toMatchObject({ name: "clusterpolicies", namespaced: false, kind: "ClusterPolicy" });
    expect((await admin.get("/version")).body.major).toBe("1");
  });
});
