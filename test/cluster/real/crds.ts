/** CustomResourceDefinitions the suites need on the real apiserver: the GPU Operator's ClusterPolicy. */

import { until } from "../../support/until.ts";
import type { KObject } from "../objects.ts";
import type { AdminHttp } from "./admin-http.ts";

export const CLUSTER_POLICY_CRD: KObject = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "clusterpolicies.nvidia.com" },
  spec: {
    group: "nvidia.com",
    scope: "Cluster",
    names: {
      plural: "clusterpolicies",
      singular: "clusterpolicy",
      kind: "ClusterPolicy",
      listKind: "ClusterPolicyList",
    },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
              status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
            },
          },
        },
      },
    ],
  },
};

/** Creates the CRD (if absent) and resolves once it is Established. */
export async function installCrd(http: AdminHttp, crd: KObject): Promise<void> {
  const path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  try {
    await http.request("POST", path, crd);
  } catch (e) {
    if ((e as { code?: number }).code !== 409) throw e;
  }
  const spec = crd.spec as { group: string; names: { plural: string }; versions: { name: string }[] };
  await until(
    async () => {
      const got = (await http.request("GET", `${path}/${crd.metadata.name}`)) as KObject;
      const established = (got.status?.conditions ?? []).some(
        (c: { type: string; status: string }) => c.type === "Established" && c.status === "True",
      );
      // Discovery and the REST handler follow the condition by a moment: wait until a list answers.
      if (established)
        await http.request("GET", `/apis/${spec.group}/${spec.versions[0]!.name}/${spec.names.plural}`);
      return established;
    },
    `CRD ${crd.metadata.name} Established and served`,
    { everyMs: 50 },
  );
}
