/** Container environment as the kubelet builds it: envFrom, env, fieldRef, configMapKeyRef, $(VAR) expansion. */
import { type KObject, resource, type Store } from "../store.ts";

/** CreateContainerConfigError: the container cannot be created until the referenced object exists. */
export class ContainerConfigError extends Error {}

function fieldRef(pod: KObject, path: string): string {
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (m) return pod.metadata[m[1] as "labels" | "annotations"]?.[m[2]!] ?? "";
  const known: Record<string, unknown> = {
    "metadata.name": pod.metadata.name,
    "metadata.namespace": pod.metadata.namespace,
    "metadata.uid": pod.metadata.uid,
    "spec.nodeName": pod.spec?.nodeName,
    "spec.serviceAccountName": pod.spec?.serviceAccountName,
    "status.podIP": pod.status?.podIP,
    "status.hostIP": pod.status?.hostIP,
  };
  return String(known[path] ?? "");
}

/** Expands $(VAR) from already-defined variables; $$ escapes; unknown references stay as written. */
export function expandVars(s: string, env: Record<string, string>): string {
  return s.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (whole, name?: string) => {
    if (whole === "$$") return "$";
    return name !== undefined && Object.hasOwn(env, name) ? env[name]! : whole;
  });
}

function configMap(
  store: Store,
  ns: string,
  name: string,
  optional: boolean,
): Record<string, string> | undefined {
  const cm = store.find(resource("configmaps"), ns, name);
  if (!cm && !optional) throw new ContainerConfigError(`configmap "${name}" not found`);
  return cm?.data;
}

// Simplification: secretKeyRef/secretRef and resourceFieldRef are not resolved (this fake serves no Secrets).
export function containerEnv(store: Store, pod: KObject, container: KObject["spec"]): Record<string, string> {
  const ns = pod.metadata.namespace!;
  const env: Record<string, string> = {};
  for (const src of container.envFrom ?? []) {
    if (!src.configMapRef) continue;
    const data = configMap(store, ns, src.configMapRef.name, src.configMapRef.optional === true) ?? {};
    for (const [k, v] of Object.entries(data)) env[`${src.prefix ?? ""}${k}`] = String(v);
  }
  for (const e of container.env ?? []) {
    const from = e.valueFrom;
    if (from?.fieldRef) env[e.name] = fieldRef(pod, from.fieldRef.fieldPath);
    else if (from?.configMapKeyRef) {
      const ref = from.configMapKeyRef;
      const data = configMap(store, ns, ref.name, ref.optional === true);
      if (data && Object.hasOwn(data, ref.key)) env[e.name] = String(data[ref.key]);
      else if (data && ref.optional !== true) {
        throw new ContainerConfigError(`couldn't find key ${ref.key} in ConfigMap ${ns}/${ref.name}`);
      }
    } else if (!from) env[e.name] = expandVars(String(e.value ?? ""), env);
  }
  return env;
}
