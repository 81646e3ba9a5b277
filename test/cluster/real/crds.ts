/**
 * CustomResourceDefinitions on the real apiserver: the one builder of the suites' loose CRDs (any spec
 * and status kept) and the one installer; the GPU Operator's ClusterPolicy, which every cluster has.
 */

import { until } from "../../support/until.ts";
import type { KObject } from "../objects.ts";
import type { AdminHttp } from "./admin-http.ts";

export interface LooseCrdOptions {
  group: string;
  version: string;
  plural: string;
  kind: string;
  scope: "Namespaced" | "Cluster";
  /** A *.k8s.io group's CRD needs its API review, as the upstream manifests carry it. */
  approved?: string;
  /** CEL rules on the whole object (x-kubernetes-validations), as the real CRD has them. */
  rules?: { rule: string; message: string }[];
}

/** A CRD (namespaced or cluster-scoped) that keeps any spec and status, with the status subresource. */
export function looseCrd(o: LooseCrdOptions): KObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: `${o.plural}.${o.group}`,
      ...(o.approved ? { annotations: { "api-approved.kubernetes.io": o.approved } } : {}),
    },
    spec: {
      group: o.group,
      scope: o.scope,
      names: { plural: o.plural, singular: o.kind.toLowerCase(), kind: o.kind, listKind: `${o.kind}List` },
      versions: [
        {
          name: o.version,
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
              ...(o.rules ? { "x-kubernetes-validations": o.rules } : {}),
            },
          },
        },
      ],
    },
  };
}

export const CLUSTER_POLICY_CRD = looseCrd({
  group: "nvidia.com",
  version: "v1",
  plural: "clusterpolicies",
  kind: "ClusterPolicy",
  scope: "Cluster",
});

/** Creates the CRD (if absent) and resolves once it is Established and its resource answers a list. */
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
    { ms: 60_000, everyMs: 50 },
  );
}
