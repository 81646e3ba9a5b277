/**
 * The pure semantics of semantics/admission.ts and semantics/rbac.ts (unit-tested in semantics/*.test.ts)
 * seen on the wire, on both backends: PodSecurity, ServiceAccount and NamespaceLifecycle admission, RBAC
 * escalation prevention. The real apiserver's messages are what the fake's must be.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { useCluster } from "../support/cluster.ts";
import { until } from "../support/until.ts";
import { type WireClient, wireClient } from "./http-client.ts";
import { BACKENDS, CLUSTER_HOOK_MS } from "./testbed.ts";

const RBAC = "/apis/rbac.authorization.k8s.io/v1";
/** Waits here end on conditions; this only bounds a hung one. */
const WAIT_MS = 60_000;

const compliant = {
  securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
  containers: [
    {
      name: "aicr",
      image: "aicr",
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
    },
  ],
};

const withContainer = (sc: object, extra: object = {}) => ({
  ...compliant,
  ...extra,
  containers: [
    { name: "aicr", image: "aicr", securityContext: { ...compliant.containers[0]!.securityContext, ...sc } },
  ],
});

/** [case, pod spec, restricted violations] — the unit test's cases, valid pods all (the apiserver validates first). */
const RESTRICTED: [string, object, string[]][] = [
  ["compliant pod", compliant, []],
  [
    "host namespaces",
    { ...compliant, hostNetwork: true, hostPID: true, hostIPC: true },
    ["host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)"],
  ],
  [
    "privileged (allowPrivilegeEscalation unset: false with privileged is invalid)",
    withContainer({ privileged: true, allowPrivilegeEscalation: undefined }),
    [
      'privileged (container "aicr" must not set securityContext.privileged=true)',
      'allowPrivilegeEscalation != false (container "aicr" must set securityContext.allowPrivilegeEscalation=false)',
    ],
  ],
  [
    "hostPath volume",
    {
      ...compliant,
      volumes: [
        { name: "root", hostPath: { path: "/" } },
        { name: "cfg", configMap: { name: "c" } },
      ],
    },
    ['restricted volume types (volume "root" uses restricted volume type "hostPath")'],
  ],
  [
    "capabilities not dropped",
    withContainer({ capabilities: {} }),
    ['unrestricted capabilities (container "aicr" must set securityContext.capabilities.drop=["ALL"])'],
  ],
  [
    "NET_BIND_SERVICE may be added",
    withContainer({ capabilities: { drop: ["ALL"], add: ["NET_BIND_SERVICE"] } }),
    [],
  ],
  [
    "SYS_ADMIN may not",
    withContainer({ capabilities: { drop: ["ALL"], add: ["SYS_ADMIN", "NET_BIND_SERVICE"] } }),
    [
      'unrestricted capabilities (container "aicr" must not include "SYS_ADMIN" in securityContext.capabilities.add)',
    ],
  ],
  [
    "allowPrivilegeEscalation unset",
    withContainer({ allowPrivilegeEscalation: undefined }),
    [
      'allowPrivilegeEscalation != false (container "aicr" must set securityContext.allowPrivilegeEscalation=false)',
    ],
  ],
  [
    "runAsNonRoot false on container",
    withContainer({ runAsNonRoot: false }),
    ['runAsNonRoot != true (container "aicr" must not set securityContext.runAsNonRoot=false)'],
  ],
  [
    "runAsNonRoot on container only is enough",
    {
      ...withContainer({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } }),
      securityContext: {},
    },
    [],
  ],
  [
    "runAsUser 0 on pod",
    { ...compliant, securityContext: { ...compliant.securityContext, runAsUser: 0 } },
    ["runAsUser=0 (pod must not set runAsUser=0)"],
  ],
  [
    "seccomp Unconfined on pod",
    { ...compliant, securityContext: { runAsNonRoot: true, seccompProfile: { type: "Unconfined" } } },
    ['seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")'],
  ],
  [
    "a bare pod: everything, in the registry's order, containers plural",
    {
      hostNetwork: true,
      initContainers: [{ name: "init", image: "i" }],
      containers: [
        { name: "a", image: "i", securityContext: { privileged: true } },
        { name: "b", image: "i" },
      ],
    },
    [
      "host namespaces (hostNetwork=true)",
      'privileged (container "a" must not set securityContext.privileged=true)',
      'allowPrivilegeEscalation != false (containers "init", "a", "b" must set securityContext.allowPrivilegeEscalation=false)',
      'unrestricted capabilities (containers "init", "a", "b" must set securityContext.capabilities.drop=["ALL"])',
      'runAsNonRoot != true (pod or containers "init", "a", "b" must set securityContext.runAsNonRoot=true)',
      'seccompProfile (pod or containers "init", "a", "b" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    ],
  ],
];

const BASELINE: [string, object, string[]][] = [
  ["a plain pod", { containers: [{ name: "c", image: "i" }] }, []],
  [
    "hostPath and SYS_ADMIN",
    {
      volumes: [{ name: "h", hostPath: { path: "/" } }],
      containers: [
        { name: "c", image: "i", securityContext: { capabilities: { add: ["SYS_ADMIN", "CHOWN"] } } },
      ],
    },
    [
      'non-default capabilities (container "c" must not include "SYS_ADMIN" in securityContext.capabilities.add)',
      'hostPath volumes (volume "h")',
    ],
  ],
];

for (const backend of BACKENDS)
  describe(`[${backend}] admission and escalation on the wire`, () => {
    const cluster = useCluster(backend, {
      controllers: false,
      users: [{ name: "dev", groups: ["devs"] }],
    });
    let admin: WireClient;

    async function namespace(name: string, labels: Record<string, string> = {}): Promise<void> {
      expect((await admin.post("/api/v1/namespaces", { metadata: { name, labels } })).status).toBe(201);
      // Pods need the namespace's default ServiceAccount; the real one is made by a controller.
      await until(
        () => admin.get(`/api/v1/namespaces/${name}/serviceaccounts/default`),
        `the default ServiceAccount of ${name}`,
        { accept: (r) => r.status === 200 },
      );
    }

    beforeAll(async () => {
      admin = wireClient(cluster(), "admin");
      await namespace("restricted", { "pod-security.kubernetes.io/enforce": "restricted" });
      await namespace("baseline", { "pod-security.kubernetes.io/enforce": "baseline" });
    }, CLUSTER_HOOK_MS);

    for (const [level, cases] of [
      ["restricted", RESTRICTED],
      ["baseline", BASELINE],
    ] as const)
      test(`PodSecurity ${level}: the Forbidden message lists the violations`, async () => {
        let i = 0;
        for (const [what, spec, violations] of cases) {
          const name = `p-${++i}`;
          const res = await admin.post(`/api/v1/namespaces/${level}/pods`, { metadata: { name }, spec });
          if (violations.length === 0) {
            expect([what, res.status]).toEqual([what, 201]);
            continue;
          }
          expect([what, res.status, res.body.reason]).toEqual([what, 403, "Forbidden"]);
          expect([what, res.body.message]).toEqual([
            what,
            `pods "${name}" is forbidden: violates PodSecurity "${level}:latest": ${violations.join(", ")}`,
          ]);
          expect(res.body.details).toEqual({ name, kind: "pods" });
        }
      });

    test("validation before PodSecurity: privileged with allowPrivilegeEscalation=false is Invalid", async () => {
      const res = await admin.post("/api/v1/namespaces/restricted/pods", {
        metadata: { name: "priv" },
        spec: withContainer({ privileged: true }),
      });
      expect(res.status).toBe(422);
      const field = "spec.containers[0].securityContext";
      const message =
        'Invalid value: {"Capabilities":{"Add":null,"Drop":["ALL"]},"Privileged":true,"SELinuxOptions":null,"WindowsOptions":null,"RunAsUser":null,"RunAsGroup":null,"RunAsNonRoot":null,"ReadOnlyRootFilesystem":null,"AllowPrivilegeEscalation":false,"ProcMount":null,"SeccompProfile":null,"AppArmorProfile":null}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true';
      expect(res.body).toMatchObject({
        reason: "Invalid",
        message: `Pod "priv" is invalid: ${field}: ${message}`,
        details: { name: "priv", kind: "Pod", causes: [{ reason: "FieldValueInvalid", message, field }] },
      });
    });

    test("ServiceAccount admission: a pod of a missing ServiceAccount is Forbidden", async () => {
      const res = await admin.post("/api/v1/namespaces/baseline/pods", {
        metadata: { name: "no-sa" },
        spec: { serviceAccountName: "ghost", containers: [{ name: "c", image: "i" }] },
      });
      expect(res.status).toBe(403);
      expect(res.body.message).toBe(
        'pods "no-sa" is forbidden: error looking up service account baseline/ghost: serviceaccount "ghost" not found',
      );
    });

    test(
      "NamespaceLifecycle: no new content in a terminating namespace; a missing one is NotFound",
      async () => {
        await namespace("ending");
        const held = { metadata: { name: "held", finalizers: ["example.com/hold"] } };
        expect((await admin.post("/api/v1/namespaces/ending/configmaps", held)).status).toBe(201);
        expect((await admin.delete("/api/v1/namespaces/ending")).status).toBe(200);
        const res = await admin.post("/api/v1/namespaces/ending/configmaps", { metadata: { name: "late" } });
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({
          reason: "Forbidden",
          message:
            'configmaps "late" is forbidden: unable to create new content in namespace ending because it is being terminated',
          details: {
            name: "late",
            kind: "configmaps",
            causes: [
              {
                reason: "NamespaceTerminating",
                message: "namespace ending is being terminated",
                field: "metadata.namespace",
              },
            ],
          },
        });
        const missing = await admin.post("/api/v1/namespaces/nowhere/configmaps", {
          metadata: { name: "x" },
        });
        expect(missing.status).toBe(404);
        expect(missing.body).toMatchObject({
          message: 'namespaces "nowhere" not found',
          details: { name: "nowhere", kind: "namespaces" },
        });
        await admin.patch(
          "/api/v1/namespaces/ending/configmaps/held",
          { metadata: { finalizers: null } },
          "application/merge-patch+json",
        );
      },
      WAIT_MS,
    );

    test(
      "RBAC escalation: missing rules listed compactly; a binding to a missing role",
      async () => {
        await admin.post(`${RBAC}/clusterroles`, {
          metadata: { name: "rbac-writer" },
          rules: [
            {
              apiGroups: ["rbac.authorization.k8s.io"],
              resources: ["roles", "rolebindings"],
              verbs: ["create"],
            },
            { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
          ],
        });
        await admin.post(`${RBAC}/namespaces/baseline/rolebindings`, {
          metadata: { name: "devs-write-rbac" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "rbac-writer" },
          subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "devs" }],
        });
        const dev = wireClient(cluster(), "dev");
        const role = (name: string, rules: object[]) =>
          dev.post(`${RBAC}/namespaces/baseline/roles`, { metadata: { name }, rules });
        // The real authorizer reads RBAC from an informer: wait until the binding counts.
        const held = await until(
          () => role("held", [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }]),
          "the developer's binding in force (Role held created)",
          { accept: (r) => r.status === 201 },
        );
        expect(held.status).toBe(201);
        const more = await role("more", [
          { apiGroups: [""], resources: ["secrets"], verbs: ["get", "list"] },
          { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "delete"], resourceNames: ["x"] },
        ]);
        expect(more.status).toBe(403);
        expect(more.body.message).toBe(
          'roles.rbac.authorization.k8s.io "more" is forbidden: user "dev" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
            '{APIGroups:[""], Resources:["configmaps"], ResourceNames:["x"], Verbs:["delete"]}\n' +
            '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
        );
        expect(more.body.details).toEqual({
          name: "more",
          group: "rbac.authorization.k8s.io",
          kind: "roles",
        });
        // A binding to a missing role: NotFound, naming the role as if it were a binding (sic).
        for (const kind of ["Role", "ClusterRole"]) {
          const dangling = await dev.post(`${RBAC}/namespaces/baseline/rolebindings`, {
            metadata: { name: "b" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind, name: "nope" },
            subjects: [],
          });
          expect(dangling.status).toBe(404);
          expect(dangling.body).toMatchObject({
            reason: "NotFound",
            message: 'rolebindings.rbac.authorization.k8s.io "nope" not found',
            details: { name: "nope", group: "rbac.authorization.k8s.io", kind: "rolebindings" },
          });
        }
      },
      WAIT_MS,
    );
  });
