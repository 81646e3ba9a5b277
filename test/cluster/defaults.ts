/** Defaulting the apiserver applies on create (the subset clients and controllers here depend on). */
import type { KObject } from "./objects.ts";
import type { ResourceType } from "./resources.ts";

export const JOB_UID_LABEL = "batch.kubernetes.io/controller-uid";
export const JOB_NAME_LABEL = "batch.kubernetes.io/job-name";

export function applyDefaults(r: ResourceType, obj: KObject): void {
  if (r.group === "" && r.plural === "namespaces") defaultNamespace(obj);
  if (r.group === "" && r.plural === "pods") {
    obj.spec ??= {};
    defaultPodSpec(obj.spec, true);
    // SetDefaults_Pod: only pods (not templates) get these.
    obj.spec.enableServiceLinks ??= true;
    // Pods have tracked metadata.generation since 1.33 (PodObservedGenerationTracking).
    obj.metadata.generation = 1;
    defaultPodStatus(obj);
  }
  if (r.group === "batch" && r.plural === "jobs") defaultJob(obj);
}

function defaultNamespace(obj: KObject): void {
  obj.metadata.labels = { ...obj.metadata.labels, "kubernetes.io/metadata.name": obj.metadata.name! };
  obj.spec = { finalizers: ["kubernetes"], ...obj.spec };
  obj.status = { phase: "Active" };
}

function defaultPodSpec(spec: any, isPod: boolean): void {
  spec.restartPolicy ??= "Always";
  spec.dnsPolicy ??= "ClusterFirst";
  spec.schedulerName ??= "default-scheduler";
  spec.terminationGracePeriodSeconds ??= 30;
  spec.securityContext ??= {};
  if (isPod) {
    spec.serviceAccountName ??= spec.serviceAccount ?? "default";
    spec.serviceAccount = spec.serviceAccountName;
  }
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
    c.terminationMessagePath ??= "/dev/termination-log";
    c.terminationMessagePolicy ??= "File";
    const tagged = typeof c.image === "string" && /:[^/]+$/.test(c.image) && !c.image.endsWith(":latest");
    c.imagePullPolicy ??= tagged || String(c.image).includes("@") ? "IfNotPresent" : "Always";
    c.resources ??= {};
  }
}

function defaultPodStatus(obj: KObject): void {
  // Simplification: qosClass is not computed; every pod is reported BestEffort.
  obj.status = { phase: "Pending", qosClass: "BestEffort" };
}

function defaultJob(obj: KObject): void {
  obj.spec ??= {};
  const spec = obj.spec;
  spec.template ??= {};
  spec.template.metadata ??= {};
  spec.template.spec ??= {};
  spec.parallelism ??= 1;
  spec.completions ??= 1;
  spec.backoffLimit ??= 6;
  spec.completionMode ??= "NonIndexed";
  spec.suspend ??= false;
  spec.podReplacementPolicy ??= "TerminatingOrFailed";
  spec.manualSelector ??= false;
  const uid = obj.metadata.uid!;
  const name = obj.metadata.name!;
  if (!spec.manualSelector) {
    spec.selector = { matchLabels: { [JOB_UID_LABEL]: uid } };
    spec.template.metadata.labels = {
      ...spec.template.metadata.labels,
      [JOB_UID_LABEL]: uid,
      [JOB_NAME_LABEL]: name,
      "controller-uid": uid,
      "job-name": name,
    };
  }
  defaultPodSpec(spec.template.spec, false);
  obj.status ??= {};
}
