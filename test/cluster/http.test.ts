/**
 * Wire-level semantics (Status bodies, authentication, RBAC, impersonation, writes, discovery), run on
 * both backends: what the real apiserver answers is what the fake must answer (README "Differential
 * fidelity" lists the few differences kept, each asserted per backend here).
 */
import { describe, expect, test } from "bun:test";
import { useCluster } from "../support/cluster.ts";
import { until } from "../support/until.ts";
import { wireClient } from "./http-client.ts";
import { BACKENDS } from "./testbed.ts";

const CM = "/api/v1/namespaces/default/configmaps";
/** Waits here end on conditions; this only bounds a hung one. */
const WAIT_MS = 60_000;
const RBAC = "/apis/rbac.authorization.k8s.io/v1";
const cmBody = (name: string, labels?: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, ...(labels ? { labels } : {}) },
  data: { k: "v" },
});

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, {
      controllers: false,
      users: [{ name: "alice" }, { name: "bob", groups: ["devs"] }, { name: "carl" }],
    });

    describe("wire: Status bodies and authentication", () => {
      test("NotFound is a Status with reason, details and code", async () => {
        const res = await wireClient(cluster(), "admin").get(`${CM}/missing`);
        expect(res.status).toBe(404);
        expect(res.headers.get("content-type")).toBe("application/json");
        expect(res.headers.get("cache-control")).toBe("no-cache, private");
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

      test("an unknown API group is Go's plain 404; an unknown resource or core version a Status", async () => {
        const admin = wireClient(cluster(), "admin");
        for (const path of [
          "/apis/nope.example.com/v1/widgets",
          "/apis/nope.example.com",
          "/apis/nvidia.com/v9",
        ]) {
          const res = await admin.get(path);
          expect(res.status).toBe(404);
          expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
          expect(res.text).toBe("404 page not found\n");
        }
        for (const path of ["/api/v1/namespaces/default/widgets", "/api/v2/pods"]) {
          const res = await admin.get(path);
          expect(res.status).toBe(404);
          expect(res.body).toMatchObject({
            reason: "NotFound",
            message: "the server could not find the requested resource",
            details: {},
          });
        }
      });

      test("an unknown token is 401; no token is system:anonymous", async () => {
        const bad = await wireClient(cluster(), undefined, { authorization: "Bearer nope" }).get(CM);
        expect(bad.status).toBe(401);
        expect(bad.body).toMatchObject({ reason: "Unauthorized", message: "Unauthorized", code: 401 });
        const anon = await wireClient(cluster()).get(CM);
        expect(anon.status).toBe(403);
        expect(anon.body.message).toBe(
          'configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "default"',
        );
        expect(anon.body.details).toEqual({ kind: "configmaps" });
        expect((await wireClient(cluster()).get("/version")).status).toBe(200);
      });

      test(
        "ServiceAccount tokens authenticate as system:serviceaccount:<ns>:<name> until the SA is deleted",
        async () => {
          const admin = wireClient(cluster(), "admin");
          expect(
            (await admin.post("/api/v1/namespaces/default/serviceaccounts", { metadata: { name: "robot" } }))
              .status,
          ).toBe(201);
          const sa = wireClient(cluster(), "system:serviceaccount:default:robot");
          const review = await sa.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SelfSubjectAccessReview",
            spec: { resourceAttributes: { verb: "list", resource: "pods", namespace: "default" } },
          });
          expect(review.status).toBe(201);
          expect(review.body.status.allowed).toBe(false);
          const forbidden = await sa.get(CM);
          expect(forbidden.body.message).toContain('User "system:serviceaccount:default:robot" cannot list');
          expect(cluster().log.byUser("system:serviceaccount:default:robot").at(-1)?.groups).toEqual([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated",
          ]);
          await admin.delete("/api/v1/namespaces/default/serviceaccounts/robot");
          // The real apiserver caches a token's authentication for 10 s: 401 once that ran out.
          const after = await until(() => sa.get(CM), "the deleted ServiceAccount's token refused (401)", {
            ms: WAIT_MS - 10_000,
            accept: (r) => r.status === 401,
          });
          expect(after.status).toBe(401);
        },
        WAIT_MS,
      );

      test("SelfSubjectReview (kubectl auth whoami) answers the authenticated user", async () => {
        const res = await wireClient(cluster(), "bob").post(
          "/apis/authentication.k8s.io/v1/selfsubjectreviews",
          {
            apiVersion: "authentication.k8s.io/v1",
            kind: "SelfSubjectReview",
          },
        );
        expect(res.status).toBe(201);
        expect(res.body).toMatchObject({
          kind: "SelfSubjectReview",
          apiVersion: "authentication.k8s.io/v1",
          status: { userInfo: { username: "bob", groups: ["devs", "system:authenticated"] } },
        });
        expect(res.body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      });
    });

    describe("wire: RBAC", () => {
      test("a RoleBinding grants exactly its rules (resourceNames, subresources)", async () => {
        const admin = wireClient(cluster(), "admin");
        const alice = wireClient(cluster(), "alice");
        await admin.post(`${RBAC}/namespaces/default/roles`, {
          metadata: { name: "cm-reader" },
          rules: [
            { apiGroups: [""], resources: ["configmaps"], verbs: ["get"], resourceNames: ["allowed"] },
            { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
          ],
        });
        await admin.post(`${RBAC}/namespaces/default/rolebindings`, {
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
            resourceAttributes: {
              verb: "get",
              resource: "configmaps",
              namespace: "default",
              name: "allowed",
            },
          },
        };
        const denied = await wireClient(cluster(), "alice").post(
          "/apis/authorization.k8s.io/v1/subjectaccessreviews",
          body,
        );
        expect(denied.status).toBe(403);
        const answer = await wireClient(cluster(), "admin").post(
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
          (
            await wireClient(cluster(), "admin").post(
              "/apis/authorization.k8s.io/v1/subjectaccessreviews",
              other,
            )
          ).body.status.allowed,
        ).toBe(false);
      });

      test("escalation prevention: a Role granting more than the requester holds is Forbidden", async () => {
        const admin = wireClient(cluster(), "admin");
        await admin.post(`${RBAC}/clusterroles`, {
          metadata: { name: "role-writer" },
          rules: [{ apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"], verbs: ["create"] }],
        });
        await admin.post(`${RBAC}/namespaces/default/rolebindings`, {
          metadata: { name: "bob-writes-roles" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "role-writer" },
          subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "devs" }],
        });
        const bob = wireClient(cluster(), "bob");
        const res = await bob.post(`${RBAC}/namespaces/default/roles`, {
          metadata: { name: "too-much" },
          rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["delete"] }],
        });
        expect(res.status).toBe(403);
        expect(res.body.message).toStartWith(
          'roles.rbac.authorization.k8s.io "too-much" is forbidden: user "bob" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:',
        );
        const ok = await bob.post(`${RBAC}/namespaces/default/roles`, {
          metadata: { name: "subset" },
          rules: [{ apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"], verbs: ["create"] }],
        });
        expect(ok.status).toBe(201);
      });

      test(
        "the bind verb lets a requester bind a role it does not hold",
        async () => {
          const admin = wireClient(cluster(), "admin");
          // A role of our own: the real `edit` is filled by the clusterrole-aggregation controller.
          await admin.post(`${RBAC}/clusterroles`, {
            metadata: { name: "cm-editor" },
            rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "update", "delete"] }],
          });
          const binding = {
            metadata: { name: "bob-edits" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cm-editor" },
            subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "bob" }],
          };
          const bindings = `${RBAC}/namespaces/default/rolebindings`;
          await admin.post(`${RBAC}/clusterroles`, {
            metadata: { name: "binder" },
            rules: [
              { apiGroups: ["rbac.authorization.k8s.io"], resources: ["rolebindings"], verbs: ["create"] },
            ],
          });
          await admin.post(`${RBAC}/clusterrolebindings`, {
            metadata: { name: "devs-bind" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "binder" },
            subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "devs" }],
          });
          const bob = wireClient(cluster(), "bob");
          const before = await bob.post(bindings, binding);
          expect(before.status).toBe(403);
          expect(before.body.message).toStartWith(
            'rolebindings.rbac.authorization.k8s.io "bob-edits" is forbidden: user "bob" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:',
          );
          const bindIt = {
            apiGroups: ["rbac.authorization.k8s.io"],
            resources: ["clusterroles"],
            verbs: ["bind"],
            resourceNames: ["cm-editor"],
          };
          const add = [{ op: "add", path: "/rules/-", value: bindIt }];
          expect(
            (await admin.patch(`${RBAC}/clusterroles/binder`, add, "application/json-patch+json")).status,
          ).toBe(200);
          // The real authorizer reads RBAC from an informer: the new rule counts once it has seen it.
          const after = await until(() => bob.post(bindings, binding), "bob's binding past the authorizer", {
            accept: (r) => r.status !== 403,
          });
          expect(after.status).toBe(201);
        },
        WAIT_MS,
      );

      test("impersonation: constrained modes first (impersonate-on:<mode>:<verb>), then legacy", async () => {
        const sa = { "impersonate-user": "system:serviceaccount:default:default" };
        const asSa = await wireClient(cluster(), "admin", sa).get(CM);
        expect(asSa.status).toBe(403);
        expect(asSa.body.message).toContain('User "system:serviceaccount:default:default" cannot list');
        // Each mode's own check on the request comes first; its error is the first one, and the answer.
        const cases: [Record<string, string>, string][] = [
          [sa, "serviceaccount"],
          [{ "impersonate-user": "carol" }, "user-info"],
          [{ "impersonate-user": "carol", "impersonate-group": "devs" }, "user-info"],
          [{ "impersonate-user": "system:node:n1" }, "arbitrary-node"],
        ];
        for (const [headers, mode] of cases) {
          const res = await wireClient(cluster(), "alice", headers).get(CM);
          expect(res.status).toBe(403);
          expect(res.body.message).toBe(
            `configmaps is forbidden: User "alice" cannot impersonate-on:${mode}:list resource "configmaps" in API group "" in the namespace "default"`,
          );
          expect(res.body.details).toEqual({ kind: "configmaps" });
        }
        // A ServiceAccount with groups is no constrained mode's: the legacy check's error.
        const legacy = await wireClient(cluster(), "alice", { ...sa, "impersonate-group": "g" }).get(CM);
        expect(legacy.body.message).toBe(
          'serviceaccounts "default" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "default"',
        );
        expect(legacy.body.details).toEqual({ name: "default", kind: "serviceaccounts" });
        // Groups without a user: 400 with the filter's Go-formatted user.
        const noUser = await wireClient(cluster(), "admin", { "impersonate-group": "devs" }).get(CM);
        expect(noUser.status).toBe(400);
        expect(noUser.body).toMatchObject({
          reason: "BadRequest",
          message:
            'requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string{"devs"}, Extra:map[string][]string(nil)} without impersonating a user name',
        });
      });

      test(
        "impersonation allowed: who the request then runs as",
        async () => {
          const admin = wireClient(cluster(), "admin");
          const whoami = async (user: string, headers: Record<string, string>) =>
            (
              await wireClient(cluster(), user, headers).post(
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                {
                  apiVersion: "authentication.k8s.io/v1",
                  kind: "SelfSubjectReview",
                },
              )
            ).body.status?.userInfo;
          expect(await whoami("admin", { "impersonate-user": "carol", "impersonate-group": "devs" })).toEqual(
            {
              username: "carol",
              groups: ["devs", "system:authenticated"],
            },
          );
          expect(await whoami("admin", { "impersonate-user": "system:serviceaccount:default:x" })).toEqual({
            username: "system:serviceaccount:default:x",
            groups: ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
          });
          expect(await whoami("admin", { "impersonate-user": "system:node:n1" })).toEqual({
            username: "system:node:n1",
            groups: ["system:nodes", "system:authenticated"],
          });
          // Constrained impersonation of a ServiceAccount: both checks granted, nothing else.
          await admin.post(`${RBAC}/clusterroles`, {
            metadata: { name: "sa-impersonator" },
            rules: [
              { apiGroups: [""], resources: ["configmaps"], verbs: ["impersonate-on:serviceaccount:list"] },
              {
                apiGroups: ["authentication.k8s.io"],
                resources: ["serviceaccounts"],
                verbs: ["impersonate:serviceaccount"],
                resourceNames: ["robot2"],
              },
            ],
          });
          await admin.post(`${RBAC}/clusterrolebindings`, {
            metadata: { name: "carl-impersonates" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "sa-impersonator" },
            subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "carl" }],
          });
          const carl = wireClient(cluster(), "carl", {
            "impersonate-user": "system:serviceaccount:default:robot2",
          });
          const listed = await until(() => carl.get(CM), "carl's impersonation allowed", {
            accept: (r) => !r.text.includes("impersonate-on"),
          });
          // Impersonation passed; the ServiceAccount itself may not list configmaps.
          expect(listed.body.message).toBe(
            'configmaps is forbidden: User "system:serviceaccount:default:robot2" cannot list resource "configmaps" in API group "" in the namespace "default"',
          );
          const get = await carl.get(`${CM}/allowed`);
          expect(get.body.message).toBe(
            'configmaps "allowed" is forbidden: User "carl" cannot impersonate-on:serviceaccount:get resource "configmaps" in API group "" in the namespace "default"',
          );
          const other = await wireClient(cluster(), "carl", {
            "impersonate-user": "system:serviceaccount:default:robot3",
          }).get(CM);
          expect(other.body.message).toBe(
            'serviceaccounts.authentication.k8s.io "robot3" is forbidden: User "carl" cannot impersonate:serviceaccount resource "serviceaccounts" in API group "authentication.k8s.io" in the namespace "default"',
          );
          expect(other.body.details).toEqual({
            name: "robot3",
            group: "authentication.k8s.io",
            kind: "serviceaccounts",
          });
        },
        WAIT_MS,
      );
    });

    describe("wire: writes", () => {
      test("dryRun=All on create answers 201 and stores nothing", async () => {
        const admin = wireClient(cluster(), "admin");
        const res = await admin.post(`${CM}?dryRun=All`, cmBody("dry"));
        expect(res.status).toBe(201);
        expect(res.body.metadata.uid).toBeDefined();
        expect((await admin.get(`${CM}/dry`)).status).toBe(404);
      });

      test("a create answers the object with its length; no managedFields when no field is managed", async () => {
        const admin = wireClient(cluster(), "admin");
        const res = await admin.post(CM, { metadata: { name: "bare" } });
        expect(res.status).toBe(201);
        expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(res.text)));
        expect(res.body).toEqual({
          kind: "ConfigMap",
          apiVersion: "v1",
          metadata: {
            name: "bare",
            namespace: "default",
            uid: expect.any(String),
            resourceVersion: expect.any(String),
            creationTimestamp: expect.any(String),
          },
        });
      });

      test("update with a stale resourceVersion is 409; the URL name must match", async () => {
        const admin = wireClient(cluster(), "admin");
        const created = (await admin.post(CM, cmBody("upd"))).body;
        expect((await admin.put(`${CM}/upd`, { ...created, data: { k: "2" } })).status).toBe(200);
        const stale = await admin.put(`${CM}/upd`, { ...created, data: { k: "3" } });
        expect(stale.status).toBe(409);
        expect(stale.body).toMatchObject({
          reason: "Conflict",
          message:
            'Operation cannot be fulfilled on configmaps "upd": the object has been modified; please apply your changes to the latest version and try again',
          details: { name: "upd", kind: "configmaps" },
        });
        const renamed = await admin.put(`${CM}/other`, { ...created });
        expect(renamed.status).toBe(400);
        expect(renamed.body.message).toBe(
          "the name of the object (upd) does not match the name on the URL (other)",
        );
      });

      test("JSON merge patch, strategic merge patch (labels) and JSON patch", async () => {
        const admin = wireClient(cluster(), "admin");
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
        // A type no PATCH route takes is go-restful's bare 415.
        const plain = await admin.patch(`${CM}/p`, { data: { x: "1" } }, "application/json");
        expect(plain.status).toBe(415);
        expect(plain.body).toMatchObject({
          reason: "UnsupportedMediaType",
          message: "415: Unsupported Media Type",
        });
      });

      test("server-side apply: fieldManager required, conflicts, force", async () => {
        const admin = wireClient(cluster(), "admin");
        const apply = (q: string, data: Record<string, string>) =>
          admin.patch(
            `${CM}/ssa?${q}`,
            { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "ssa" }, data },
            "application/apply-patch+yaml",
          );
        const missing = await apply("", { a: "1" });
        expect(missing.status).toBe(422);
        expect(missing.body.message).toBe(
          'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
        );
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

      test("body media types: YAML is accepted, an unknown type is 415 naming what is", async () => {
        const admin = wireClient(cluster(), "admin");
        const yaml = await admin.post(CM, "metadata:\n  name: from-yaml\ndata:\n  k: v\n", {
          "content-type": "application/yaml",
        });
        expect(yaml.status).toBe(201);
        expect(yaml.body.data).toEqual({ k: "v" });
        const xml = await admin.post(CM, "<x/>", { "content-type": "application/xml" });
        expect(xml.status).toBe(415);
        expect(xml.body).toMatchObject({
          reason: "UnsupportedMediaType",
          message:
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
        });
        // Custom resources too (yet a protobuf body makes the real apiserver reset the connection).
        const cr = await admin.post("/apis/nvidia.com/v1/clusterpolicies", "<x/>", {
          "content-type": "application/xml",
        });
        expect(cr.body).toEqual(xml.body);
      });

      test("protobuf bodies of built-in kinds: decoded by the real apiserver, refused by the fake (kept)", async () => {
        const res = await wireClient(cluster(), "admin").post(CM, new Uint8Array([0x6b, 0x38, 0x73, 0]), {
          "content-type": "application/vnd.kubernetes.protobuf",
        });
        // These four bytes are the protobuf envelope's magic and nothing else: the real decoder's 400.
        if (backend === "real") expect(res.status).toBe(400);
        else {
          expect(res.status).toBe(415);
          expect(res.body.reason).toBe("UnsupportedMediaType");
        }
      });

      test("create at an object's URL and non-GET on pods/log are 405", async () => {
        const admin = wireClient(cluster(), "admin");
        const notAllowed = {
          kind: "Status",
          status: "Failure",
          reason: "MethodNotAllowed",
          message: "the server does not allow this method on the requested resource",
          code: 405,
        };
        expect((await admin.post(`${CM}/zz`, { metadata: { name: "zz" } })).body).toMatchObject(notAllowed);
        expect((await admin.post("/api/v1/namespaces/default/pods/p/log", {})).body).toMatchObject(
          notAllowed,
        );
      });

      test("delete: a Status for configmaps, the object for pods; 202 only for orphanDependents=false", async () => {
        const admin = wireClient(cluster(), "admin");
        await admin.post(CM, cmBody("gone"));
        const del = await admin.delete(`${CM}/gone`);
        expect(del.status).toBe(200);
        expect(del.body).toEqual({
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Success",
          details: { name: "gone", kind: "configmaps", uid: expect.any(String) },
        });
        await admin.post(CM, cmBody("fg"));
        const fg = await admin.delete(`${CM}/fg`, { propagationPolicy: "Foreground" });
        expect(fg.status).toBe(200);
        expect(fg.body.kind).toBe("ConfigMap");
        expect(fg.body.metadata.finalizers).toEqual(["foregroundDeletion"]);
        expect(fg.body.metadata.deletionTimestamp).toBeDefined();
        await admin.post(CM, cmBody("held", undefined));
        await admin.patch(
          `${CM}/held`,
          { metadata: { finalizers: ["example.com/hold"] } },
          "application/merge-patch+json",
        );
        const cascading = await admin.delete(`${CM}/held`, { orphanDependents: false });
        expect(cascading.status).toBe(202);
        // orphanDependents=false is the background policy: no foregroundDeletion finalizer, yet 202.
        expect(cascading.body.metadata.finalizers).toEqual(["example.com/hold"]);
        const bad = await admin.delete(`${CM}/held`, { propagationPolicy: "Bogus" });
        expect(bad.status).toBe(422);
        expect(bad.body).toMatchObject({
          reason: "Invalid",
          message:
            'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil"',
          details: { group: "meta.k8s.io", kind: "DeleteOptions" },
        });
        const pod = { metadata: { name: "del-pod" }, spec: { containers: [{ name: "c", image: "i" }] } };
        await admin.post("/api/v1/namespaces/default/pods", pod);
        const podDel = await admin.delete("/api/v1/namespaces/default/pods/del-pod?gracePeriodSeconds=0");
        expect(podDel.status).toBe(200);
        expect(podDel.body.kind).toBe("Pod");
      });
    });

    describe("wire: lists, selectors, validation", () => {
      test("pages: limit and continue (no remainingItemCount under a selector); a bad continue token", async () => {
        const admin = wireClient(cluster(), "admin");
        for (const n of ["pg-1", "pg-2", "pg-3"])
          await admin.post("/api/v1/namespaces/kube-public/configmaps", {
            metadata: { name: n, labels: { pg: "x" } },
          });
        const list = "/api/v1/namespaces/kube-public/configmaps?labelSelector=pg%3Dx&limit=2";
        const first = await admin.get(list);
        expect(first.body.kind).toBe("ConfigMapList");
        expect(first.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual([
          "pg-1",
          "pg-2",
        ]);
        // Under a label selector the apiserver cannot count what remains: no remainingItemCount.
        expect(Object.keys(first.body.metadata).sort()).toEqual(["continue", "resourceVersion"]);
        const second = await admin.get(
          `${list}&continue=${encodeURIComponent(first.body.metadata.continue)}`,
        );
        expect(second.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual([
          "pg-3",
        ]);
        expect(Object.keys(second.body.metadata)).toEqual(["resourceVersion"]);
        const bad = await admin.get(`${list}&continue=garbage`);
        expect(bad.status).toBe(400);
        expect(bad.body.message).toStartWith("invalid continue token: continue key is not valid: ");
      });

      test("selectors: parse errors and unsupported fields, in each resource's words", async () => {
        const admin = wireClient(cluster(), "admin");
        const message = async (path: string) => {
          const res = await admin.get(path);
          expect([path, res.status, res.body.reason]).toEqual([path, 400, "BadRequest"]);
          return res.body.message;
        };
        expect(await message(`${CM}?labelSelector=a%3D%3D%3Db`)).toBe(
          "unable to parse requirement: found '=', expected: identifier",
        );
        expect(await message(`${CM}?fieldSelector=abc`)).toBe(
          "invalid selector: 'abc'; can't understand 'abc'",
        );
        const unknown = "fieldSelector=spec.foo%3Dx";
        const generic =
          '"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"';
        expect(await message(`${CM}?${unknown}`)).toBe(generic);
        expect(await message(`${RBAC}/roles?${unknown}`)).toBe(generic);
        expect(await message(`/api/v1/pods?${unknown}`)).toBe("field label not supported: spec.foo");
        expect(await message(`/apis/nvidia.com/v1/clusterpolicies?${unknown}`)).toBe(
          "field label not supported: spec.foo",
        );
        expect(await message(`/apis/batch/v1/jobs?${unknown}`)).toBe(
          'field label "spec.foo" not supported for Job',
        );
        const ok = await admin.get("/api/v1/pods?fieldSelector=spec.nodeName%3Dx");
        expect([ok.status, ok.body.items]).toEqual([200, []]);
      });

      test("a resourceVersion that is no number: 400 for a list, a reasonless 500 for a watch", async () => {
        const admin = wireClient(cluster(), "admin");
        const parse =
          'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax';
        const list = await admin.get(`${CM}?resourceVersion=abc`);
        expect(list.status).toBe(400);
        expect(list.body).toMatchObject({
          reason: "BadRequest",
          message: `invalid resource version: ${parse}`,
        });
        const watch = await admin.get(`${CM}?watch=1&resourceVersion=abc`);
        expect(watch.status).toBe(500);
        expect(watch.body).toEqual({
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message: parse,
          code: 500,
        });
      });

      test("delete preconditions: the Kind, the precondition and the record", async () => {
        const admin = wireClient(cluster(), "admin");
        const created = (await admin.post(CM, cmBody("pre"))).body;
        const byUid = await admin.delete(`${CM}/pre`, { preconditions: { uid: "x" } });
        expect(byUid.status).toBe(409);
        expect(byUid.body).toMatchObject({
          reason: "Conflict",
          message: `Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (x) does not match the UID in record (${created.metadata.uid}). The object might have been deleted and then recreated`,
          details: { name: "pre", kind: "ConfigMap" },
        });
        const byRv = await admin.delete(`${CM}/pre`, { preconditions: { resourceVersion: "1" } });
        expect(byRv.body.message).toBe(
          `Operation cannot be fulfilled on ConfigMap "pre": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${created.metadata.resourceVersion}). The object might have been modified`,
        );
      });

      test("validation: names, label keys and values, Job restartPolicy", async () => {
        const admin = wireClient(cluster(), "admin");
        const invalid = async (path: string, body: object) => {
          const res = await admin.post(path, body);
          expect([path, res.status, res.body.reason]).toEqual([path, 422, "Invalid"]);
          return res.body;
        };
        const noName = await invalid(CM, { metadata: {} });
        expect(noName.message).toBe(
          'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required',
        );
        expect(noName.details).toEqual({
          kind: "ConfigMap",
          causes: [
            {
              reason: "FieldValueRequired",
              message: "Required value: name or generateName is required",
              field: "metadata.name",
            },
          ],
        });
        expect((await invalid("/api/v1/namespaces", { metadata: { name: "a.b" } })).message).toBe(
          'Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots',
        );
        const key = "k".repeat(64);
        expect((await invalid(CM, { metadata: { name: "l1", labels: { [key]: "x" } } })).message).toBe(
          `ConfigMap "l1" is invalid: metadata.labels: Invalid value: "${key}": name part must be no more than 63 bytes`,
        );
        expect(
          (await invalid(CM, { metadata: { name: "l2", labels: { "a/b/c": "x" } } })).message,
        ).toStartWith(
          'ConfigMap "l2" is invalid: metadata.labels: Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters',
        );
        const value = "v".repeat(64);
        expect((await invalid(CM, { metadata: { name: "l3", labels: { a: value } } })).message).toBe(
          `ConfigMap "l3" is invalid: metadata.labels: Invalid value: "${value}": must be no more than 63 bytes`,
        );
        const job = await invalid("/apis/batch/v1/namespaces/default/jobs", {
          metadata: { name: "jb" },
          spec: { template: { spec: { containers: [{ name: "c", image: "i" }] } } },
        });
        expect(job.message).toBe(
          'Job.batch "jb" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
        );
        expect(job.details).toMatchObject({ name: "jb", group: "batch", kind: "Job" });
        const generated = await admin.post(CM, { metadata: { generateName: "gen-" } });
        expect(generated.status).toBe(201);
        expect(generated.body.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      });
    });

    describe("wire: defaulting", () => {
      test("a pod: defaults, ServiceAccount token volume, tolerations, priority, generation", async () => {
        const admin = wireClient(cluster(), "admin");
        await until(
          () => admin.get("/api/v1/namespaces/default/serviceaccounts/default"),
          "the default ServiceAccount",
          {
            accept: (r) => r.status === 200,
          },
        );
        const res = await admin.post("/api/v1/namespaces/default/pods?dryRun=All", {
          metadata: { name: "defaults" },
          spec: { containers: [{ name: "c", image: "i:1" }] },
        });
        expect(res.status).toBe(201);
        const volume = res.body.spec.volumes[0].name;
        expect(volume).toMatch(/^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
        expect(res.body.metadata.generation).toBe(1);
        expect(res.body.spec).toEqual({
          volumes: [
            {
              name: volume,
              projected: {
                sources: [
                  { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
                  { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
                  {
                    downwardAPI: {
                      items: [
                        {
                          path: "namespace",
                          fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" },
                        },
                      ],
                    },
                  },
                ],
                defaultMode: 420,
              },
            },
          ],
          containers: [
            {
              name: "c",
              image: "i:1",
              resources: {},
              volumeMounts: [
                { name: volume, readOnly: true, mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" },
              ],
              terminationMessagePath: "/dev/termination-log",
              terminationMessagePolicy: "File",
              imagePullPolicy: "IfNotPresent",
            },
          ],
          restartPolicy: "Always",
          terminationGracePeriodSeconds: 30,
          dnsPolicy: "ClusterFirst",
          serviceAccountName: "default",
          serviceAccount: "default",
          securityContext: {},
          schedulerName: "default-scheduler",
          tolerations: [
            {
              key: "node.kubernetes.io/not-ready",
              operator: "Exists",
              effect: "NoExecute",
              tolerationSeconds: 300,
            },
            {
              key: "node.kubernetes.io/unreachable",
              operator: "Exists",
              effect: "NoExecute",
              tolerationSeconds: 300,
            },
          ],
          priority: 0,
          enableServiceLinks: true,
          preemptionPolicy: "PreemptLowerPriority",
        });
        expect(res.body.status).toEqual({ phase: "Pending", qosClass: "BestEffort" });
      });

      test("a Job: selector and template labels from its uid, completions, backoff, manualSelector", async () => {
        const res = await wireClient(cluster(), "admin").post(
          "/apis/batch/v1/namespaces/default/jobs?dryRun=All",
          {
            metadata: { name: "jd" },
            spec: {
              template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "i:1" }] } },
            },
          },
        );
        expect(res.status).toBe(201);
        const uid = res.body.metadata.uid;
        expect(res.body.spec).toMatchObject({
          parallelism: 1,
          completions: 1,
          backoffLimit: 6,
          selector: { matchLabels: { "batch.kubernetes.io/controller-uid": uid } },
          manualSelector: false,
          completionMode: "NonIndexed",
          suspend: false,
          podReplacementPolicy: "TerminatingOrFailed",
        });
        expect(res.body.spec.template.metadata.labels).toEqual({
          "batch.kubernetes.io/controller-uid": uid,
          "batch.kubernetes.io/job-name": "jd",
          "controller-uid": uid,
          "job-name": "jd",
        });
        expect(res.body.spec.template.spec.volumes).toBeUndefined();
        expect(res.body.spec.template.spec.enableServiceLinks).toBeUndefined();
      });

      test("a Namespace: its name label, the kubernetes finalizer, Active", async () => {
        const res = await wireClient(cluster(), "admin").post("/api/v1/namespaces?dryRun=All", {
          metadata: { name: "nsd" },
        });
        expect(res.body.metadata.labels).toEqual({ "kubernetes.io/metadata.name": "nsd" });
        expect(res.body.spec).toEqual({ finalizers: ["kubernetes"] });
        expect(res.body.status).toEqual({ phase: "Active" });
      });
    });

    describe("wire: discovery", () => {
      test("shortNames and groups are advertised", async () => {
        const admin = wireClient(cluster(), "admin");
        const core = (await admin.get("/api/v1")).body;
        expect(core.resources.find((r: { name: string }) => r.name === "configmaps").shortNames).toEqual([
          "cm",
        ]);
        expect(core.resources.some((r: { name: string }) => r.name === "pods/log")).toBe(true);
        const groups = (await admin.get("/apis")).body.groups.map((g: { name: string }) => g.name);
        expect(groups).toContain("nvidia.com");
        const cp = (await admin.get("/apis/nvidia.com/v1")).body.resources[0];
        expect(cp).toMatchObject({ name: "clusterpolicies", namespaced: false, kind: "ClusterPolicy" });
        expect((await admin.get("/version")).body.major).toBe("1");
      });
    });
  });
