/**
 * The Kubernetes object types aicr builds and reads: client-node's V1 models, re-exported as types
 * only, so that nothing outside src/kube/ imports @kubernetes/client-node.
 *
 * client-node's models are classes typed for its own ObjectSerializer, which turns every timestamp
 * into a Date. aicr never runs that serializer: KubeClient hands back the apiserver's JSON as parsed,
 * where a timestamp is an RFC 3339 string. So an object read from the API is typed `Json<V1…>` (the
 * same model, each Date replaced by string), never the bare V1 type; builders, which set no
 * timestamps, return the V1 types themselves.
 */

export type {
  CoreV1Event,
  RbacV1Subject as V1Subject,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1ConfigMap,
  V1Container,
  V1Job,
  V1Node,
  V1ObjectMeta,
  V1OwnerReference,
  V1Pod,
  V1PolicyRule,
  V1Role,
  V1RoleBinding,
  V1RoleRef,
  V1ServiceAccount,
  V1Taint,
  V1Toleration,
} from "@kubernetes/client-node";

import type { V1ObjectMeta } from "@kubernetes/client-node";

/** A client-node model as the API's JSON carries it: each Date field is the string on the wire. */
export type Json<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? Json<U>[]
    : T extends object
      ? { [K in keyof T]: Json<T[K]> }
      : T;

/**
 * The GPU Operator's ClusterPolicy (a CRD, so client-node has no model): the fields aicr reads. The
 * collectors flatten its spec; the operator-health validator reads its status.
 */
export interface ClusterPolicy {
  metadata?: Json<V1ObjectMeta> | undefined;
  spec?: Record<string, unknown> | undefined;
  status?: { state?: string | undefined } | undefined;
}
