/** kube-apiserver authorizes a server-side apply that creates its object as "create" too (patch handler). */
import { beforeAll, describe, expect, test } from "bun:test";
import { useCluster } from "../support/cluster.ts";
import { until } from "../support/until.ts";
import { wireClient } from "./http-client.ts";
import { resource } from "./resources.ts";
import { BACKENDS, CLUSTER_HOOK_MS } from "./testbed.ts";

const APPLY = "application/apply-patch+yaml";
const path = (name: string) => `/api/v1/namespaces/default/configmaps/${name}?fieldManager=aicr&force=true`;
const body = (name: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name },
  data: { k: "v" },
});

for (const backend of BACKENDS)
  describe(`[${backend}] apply authorization`, () => {
    const cluster = useCluster(backend, { controllers: false, users: [{ name: "patcher" }] });
    beforeAll(async () => {
      const rbac = "rbac.authorization.k8s.io/v1";
      await cluster().store.create(resource("roles"), {
        apiVersion: rbac,
        kind: "Role",
        metadata: { name: "patch-only", namespace: "default" },
        rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "patch"] }],
      });
      await cluster().store.create(resource("rolebindings"), {
        apiVersion: rbac,
        kind: "RoleBinding",
        metadata: { name: "patch-only", namespace: "default" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "patch-only" },
        subjects: [{ kind: "User", name: "patcher" }],
      });
      // The real authorizer reads RBAC from an informer: wait until the binding counts.
      await until(
        () => wireClient(cluster(), "patcher").get("/api/v1/namespaces/default/configmaps/none"),
        "the patcher's binding in force",
        { accept: (r) => r.status === 404 },
      );
    }, CLUSTER_HOOK_MS);

    test("apply that would create needs create: patch alone is Forbidden, naming the create verb", async () => {
      const res = await wireClient(cluster(), "patcher").patch(path("new-cm"), body("new-cm"), APPLY);
      expect(res.status).toBe(403);
      expect(res.body.message).toBe(
        'configmaps "new-cm" is forbidden: User "patcher" cannot create resource "configmaps" in API group "" in the namespace "default"',
      );
      expect(res.body.details).toEqual({ name: "new-cm", kind: "configmaps" });
      expect(
        (await wireClient(cluster(), "admin").get("/api/v1/namespaces/default/configmaps/new-cm")).status,
      ).toBe(404);
    });

    test("apply to an existing object needs only patch", async () => {
      await wireClient(cluster(), "admin").post("/api/v1/namespaces/default/configmaps", body("existing"));
      const res = await wireClient(cluster(), "patcher").patch(path("existing"), body("existing"), APPLY);
      expect(res.status).toBe(200);
    });
  });
