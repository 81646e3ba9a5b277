import { describe, expect, test } from "bun:test";
import { thrown } from "../support/reject.ts";
import { bootstrap } from "./bootstrap.ts";
import { ApiStatusError } from "./errors.ts";
import type { KObject, WatchEvent } from "./objects.ts";
import { resource, Store, type StoreEvent } from "./store.ts";

const cm = resource("configmaps");
const jobs = resource("jobs");
const pods = resource("pods");

function fresh(historyLimit?: number): Store {
  const s = new Store(historyLimit ? { historyLimit } : {});
  bootstrap(s);
  return s;
}

function configMap(name: string, labels?: Record<string, string>, namespace = "default"): KObject {
  return { metadata: { name, namespace, ...(labels ? { labels } : {}) }, data: { k: "v" } };
}

const failure = (fn: () => unknown): ApiStatusError => thrown(fn, ApiStatusError);

describe("store: create", () => {
  test("assigns uid, resourceVersion from one counter, creationTimestamp, generation", () => {
    const s = fresh();
    const a = s.create(cm, configMap("a"));
    const b = s.create(resource("clusterroles"), { metadata: { name: "r" }, rules: [] });
    expect(a.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.metadata.uid).not.toBe(b.metadata.uid);
    expect(Number(b.metadata.resourceVersion)).toBe(Number(a.metadata.resourceVersion) + 1);
    expect(a.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // As upstream, only kinds with a spec track generation: ConfigMaps have none.
    expect(a.metadata.generation).toBeUndefined();
    expect(
      s.create(resource("clusterpolicies"), { metadata: { name: "cp" }, spec: {} }).metadata.generation,
    ).toBe(1);
    expect(a.apiVersion).toBe("v1");
    expect(a.kind).toBe("ConfigMap");
  });

  test("generateName appends a random suffix", () => {
    const s = fresh();
    const a = s.create(cm, { metadata: { generateName: "run-", namespace: "default" } });
    expect(a.metadata.name).toMatch(/^run-[a-z0-9]{5}$/);
  });

  test("AlreadyExists 409 with a Status body", () => {
    const s = fresh();
    s.create(cm, configMap("a"));
    const e = failure(() => s.create(cm, configMap("a")));
    expect(e.status).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'configmaps "a" already exists',
      reason: "AlreadyExists",
      details: { name: "a", kind: "configmaps" },
      code: 409,
    });
  });

  test("a missing namespace is NotFound 404", () => {
    const e = failure(() => fresh().create(cm, configMap("a", undefined, "nope")));
    expect(e.code).toBe(404);
    expect(e.status.message).toBe('namespaces "nope" not found');
  });

  test("an invalid DNS-1123 name is Invalid 422 with causes", () => {
    const e = failure(() => fresh().create(cm, configMap("Bad_Name")));
    expect(e.code).toBe(422);
    expect(e.reason).toBe("Invalid");
    expect(e.status.message).toStartWith(
      'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain',
    );
    expect(e.status.details?.causes?.[0]?.field).toBe("metadata.name");
  });

  test("dryRun validates and admits but stores nothing", () => {
    const s = fresh();
    const rv = s.resourceVersion;
    const out = s.create(cm, configMap("a"), { dryRun: true });
    expect(out.metadata.uid).toBeDefined();
    expect(s.find(cm, "default", "a")).toBeUndefined();
    expect(s.resourceVersion).toBe(rv);
    expect(failure(() => s.create(cm, configMap("x", undefined, "nope"), { dryRun: true })).code).toBe(404);
  });

  test("Jobs get the controller-uid selector and template labels", () => {
    const s = fresh();
    const job = s.create(jobs, {
      metadata: { name: "j", namespace: "default" },
      spec: {
        template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "busybox:1" }] } },
      },
    });
    const uid = job.metadata.uid!;
    expect(job.spec.selector).toEqual({ matchLabels: { "batch.kubernetes.io/controller-uid": uid } });
    expect(job.spec.template.metadata.labels).toMatchObject({ "job-name": "j", "controller-uid": uid });
    expect(job.spec.backoffLimit).toBe(6);
  });
});

describe("store: update and generation", () => {
  test("a stale resourceVersion is Conflict 409", () => {
    const s = fresh();
    const a = s.create(cm, configMap("a"));
    s.update(cm, { ...a, data: { k: "2" } });
    const e = failure(() => s.update(cm, { ...a, data: { k: "3" } }));
    expect(e.code).toBe(409);
    expect(e.status.message).toBe(
      'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  test("generation moves on spec changes only, and status updates keep spec", () => {
    const s = fresh();
    const job = s.create(jobs, {
      metadata: { name: "j", namespace: "default" },
      spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "i:1" }] } } },
    });
    const labelled = s.update(jobs, { ...job, metadata: { ...job.metadata, labels: { a: "b" } } });
    expect(labelled.metadata.generation).toBe(1);
    const suspended = s.update(jobs, { ...labelled, spec: { ...labelled.spec, suspend: true } });
    expect(suspended.metadata.generation).toBe(2);
    const withStatus = s.update(
      jobs,
      { ...suspended, spec: {}, status: { active: 1 } },
      { subresource: "status" },
    );
    expect(withStatus.status).toEqual({ active: 1 });
    expect(withStatus.spec.suspend).toBe(true);
    const ignored = s.update(jobs, { ...withStatus, status: { active: 5 } });
    expect(ignored.status).toEqual({ active: 1 });
  });
});

describe("store: delete", () => {
  test("preconditions on uid and resourceVersion", () => {
    const s = fresh();
    const a = s.create(cm, configMap("a"));
    const byUid = failure(() => s.delete(cm, "default", "a", { preconditions: { uid: "other" } }));
    expect(byUid.code).toBe(409);
    // kube-apiserver 1.36's words (checked on the wire in client-node.test.ts): the Kind, not the resource.
    expect(byUid.status.message).toBe(
      `Operation cannot be fulfilled on ConfigMap "a": the UID in the precondition (other) does not match the UID in record (${a.metadata.uid}). The object might have been deleted and then recreated`,
    );
    expect(byUid.status.details).toEqual({ name: "a", kind: "ConfigMap" });
    const byRv = failure(() => s.delete(cm, "default", "a", { preconditions: { resourceVersion: "1" } }));
    expect(byRv.status.message).toContain(
      "the ResourceVersion in the precondition (1) does not match the ResourceVersion in record",
    );
    s.delete(cm, "default", "a", {
      preconditions: { uid: a.metadata.uid!, resourceVersion: a.metadata.resourceVersion! },
    });
    expect(s.find(cm, "default", "a")).toBeUndefined();
    expect(failure(() => s.delete(cm, "default", "a")).code).toBe(404);
  });

  test("Foreground keeps the owner with deletionTimestamp and the foregroundDeletion finalizer", () => {
    const s = fresh();
    s.create(cm, configMap("owner"));
    const marked = s.delete(cm, "default", "owner", { propagationPolicy: "Foreground" });
    expect(marked.metadata.deletionTimestamp).toBeDefined();
    expect(marked.metadata.finalizers).toEqual(["foregroundDeletion"]);
    const live = s.get(cm, "default", "owner");
    s.update(cm, { ...live, metadata: { ...live.metadata, finalizers: [] } });
    expect(s.find(cm, "default", "owner")).toBeUndefined();
  });

  test("batch/v1 Jobs orphan by default; Background removes at once", () => {
    const s = fresh();
    const spec = {
      template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "i:1" }] } },
    };
    s.create(jobs, { metadata: { name: "j", namespace: "default" }, spec });
    expect(s.delete(jobs, "default", "j").metadata.finalizers).toEqual(["orphan"]);
    s.create(jobs, { metadata: { name: "k", namespace: "default" }, spec });
    s.delete(jobs, "default", "k", { propagationPolicy: "Background" });
    expect(s.find(jobs, "default", "k")).toBeUndefined();
  });

  test("dependentsOf finds namespaced dependents of a cluster-scoped owner", () => {
    const s = fresh();
    const owner = s.create(resource("clusterpolicies"), { metadata: { name: "cp" }, spec: {} });
    const ref = { apiVersion: "nvidia.com/v1", kind: "ClusterPolicy", name: "cp", uid: owner.metadata.uid! };
    s.create(cm, { metadata: { name: "dep", namespace: "default", ownerReferences: [ref] } });
    expect(s.dependentsOf(owner.metadata.uid!).map((d) => d.object.metadata.name)).toEqual(["dep"]);
  });

  test("default, kube-system and kube-public may not be deleted", () => {
    const e = failure(() => fresh().delete(resource("namespaces"), undefined, "default"));
    expect(e.code).toBe(403);
    expect(e.status.message).toBe('namespaces "default" is forbidden: this namespace may not be deleted');
  });

  test("deleting a namespace removes its content, then the namespace", () => {
    const s = fresh();
    s.create(resource("namespaces"), { metadata: { name: "team" } });
    s.create(cm, configMap("a", undefined, "team"));
    s.delete(resource("namespaces"), undefined, "team");
    expect(s.find(cm, "team", "a")).toBeUndefined();
    expect(s.find(resource("namespaces"), undefined, "team")).toBeUndefined();
  });
});

describe("store: list", () => {
  test("label selectors: =, ==, !=, in, notin, exists, !exists", () => {
    const s = fresh();
    s.create(cm, configMap("a", { app: "x", tier: "web" }));
    s.create(cm, configMap("b", { app: "y" }));
    s.create(cm, configMap("c"));
    const names = (sel: string) =>
      s.list(cm, { namespace: "default", labelSelector: sel }).items.map((o) => o.metadata.name);
    expect(names("app=x")).toEqual(["a"]);
    expect(names("app==y")).toEqual(["b"]);
    expect(names("app!=x")).toEqual(["b", "c"]);
    expect(names("app in (x,y)")).toEqual(["a", "b"]);
    expect(names("app notin (x)")).toEqual(["b", "c"]);
    expect(names("tier")).toEqual(["a"]);
    expect(names("!tier")).toEqual(["b", "c"]);
    expect(failure(() => names("app in x")).code).toBe(400);
  });

  test("field selectors: metadata.name, metadata.namespace, status.phase, spec.nodeName", () => {
    const s = fresh();
    s.create(cm, configMap("a"));
    expect(s.list(cm, { fieldSelector: "metadata.name=a,metadata.namespace=default" }).items).toHaveLength(1);
    const p = s.create(pods, {
      metadata: { name: "p", namespace: "default" },
      spec: { containers: [{ name: "c", image: "i" }] },
    });
    s.update(pods, { ...p, spec: { ...p.spec, nodeName: "n1" } });
    expect(s.list(pods, { fieldSelector: "spec.nodeName=n1,status.phase=Pending" }).items).toHaveLength(1);
    expect(s.list(pods, { fieldSelector: "status.phase!=Pending" }).items).toHaveLength(0);
    expect(failure(() => s.list(cm, { fieldSelector: "status.phase=Running" })).status.message).toBe(
      // ConfigMaps have runtime.DefaultMetaV1FieldSelectorConversion's words (pods have their own).
      '"status.phase" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
  });

  test("limit and continue page through a list at one resourceVersion", () => {
    const s = fresh();
    for (const n of ["a", "b", "c", "d", "e"]) s.create(cm, configMap(n));
    const first = s.list(cm, { namespace: "default", limit: 2 });
    expect(first.items.map((o) => o.metadata.name)).toEqual(["a", "b"]);
    expect(first.remainingItemCount).toBe(3);
    const second = s.list(cm, { namespace: "default", limit: 2, continue: first.continue! });
    expect(second.items.map((o) => o.metadata.name)).toEqual(["c", "d"]);
    expect(second.resourceVersion).toBe(first.resourceVersion);
    const last = s.list(cm, { namespace: "default", limit: 2, continue: second.continue! });
    expect(last.items.map((o) => o.metadata.name)).toEqual(["e"]);
    expect(last.continue).toBeUndefined();
    s.create(cm, configMap("f"));
    s.compact();
    expect(failure(() => s.list(cm, { namespace: "default", continue: first.continue! })).code).toBe(410);
  });
});

describe("store: watch", () => {
  test("replays history after a resourceVersion, then follows", () => {
    const s = fresh();
    const a = s.create(cm, configMap("a"));
    s.create(cm, configMap("b"));
    const seen: WatchEvent[] = [];
    const stop = s.watch(cm, { namespace: "default", resourceVersion: a.metadata.resourceVersion! }, (e) =>
      seen.push(e),
    );
    s.delete(cm, "default", "a");
    stop();
    s.create(cm, configMap("c"));
    expect(seen.map((e) => `${e.type} ${(e.object as KObject).metadata.name}`)).toEqual([
      "ADDED b",
      "DELETED a",
    ]);
  });

  test("without a resourceVersion it starts with ADDED for existing objects", () => {
    const s = fresh();
    s.create(cm, configMap("a"));
    const seen: WatchEvent[] = [];
    s.watch(cm, { namespace: "default" }, (e) => seen.push(e))();
    expect(seen.map((e) => e.type)).toEqual(["ADDED"]);
  });

  test("an object leaving the label selection is seen as DELETED", () => {
    const s = fresh();
    const a = s.create(cm, configMap("a", { app: "x" }));
    const seen: string[] = [];
    s.watch(cm, { labelSelector: "app=x", resourceVersion: a.metadata.resourceVersion! }, (e) =>
      seen.push(e.type),
    );
    s.update(cm, { ...a, metadata: { ...a.metadata, labels: { app: "y" } } });
    expect(seen).toEqual(["DELETED"]);
  });

  test("a compacted resourceVersion is 410 Expired", () => {
    const s = fresh(3);
    const a = s.create(cm, configMap("a"));
    for (const n of ["b", "c", "d", "e"]) s.create(cm, configMap(n));
    const e = failure(() => s.watch(cm, { resourceVersion: a.metadata.resourceVersion! }, () => {}));
    expect(e.code).toBe(410);
    expect(e.reason).toBe("Expired");
    expect(e.status.message).toMatch(/^too old resource version: \d+ \(\d+\)$/);
  });

  test("bookmarks only reach watchers that allow them", () => {
    const s = fresh();
    const withBm: WatchEvent[] = [];
    const without: WatchEvent[] = [];
    s.watch(cm, { resourceVersion: s.resourceVersion, allowBookmarks: true }, (e) => withBm.push(e));
    s.watch(cm, { resourceVersion: s.resourceVersion }, (e) => without.push(e));
    s.bookmark();
    expect(withBm).toEqual([
      {
        type: "BOOKMARK",
        object: { kind: "ConfigMap", apiVersion: "v1", metadata: { resourceVersion: s.resourceVersion } },
      },
    ]);
    expect(without).toEqual([]);
  });

  test("subscribe delivers every committed change in order", async () => {
    const s = fresh();
    const seen: StoreEvent[] = [];
    const unsubscribe = s.subscribe((e) => seen.push(e));
    s.create(cm, configMap("a"));
    s.delete(cm, "default", "a");
    await Promise.resolve();
    unsubscribe();
    expect(seen.map((e) => `${e.type} ${e.resource.plural}`)).toEqual([
      "ADDED configmaps",
      "DELETED configmaps",
    ]);
  });
});

describe("store: admission", () => {
  test("a pod whose ServiceAccount does not exist is Forbidden", () => {
    const e = failure(() =>
      fresh().create(pods, {
        metadata: { name: "p", namespace: "default" },
        spec: { serviceAccountName: "ghost", containers: [{ name: "c", image: "i" }] },
      }),
    );
    expect(e.code).toBe(403);
    expect(e.status.message).toBe(
      'pods "p" is forbidden: error looking up service account default/ghost: serviceaccount "ghost" not found',
    );
  });

  test("pod-security restricted namespaces reject privileged pods", () => {
    const s = fresh();
    s.create(resource("namespaces"), {
      metadata: { name: "locked", labels: { "pod-security.kubernetes.io/enforce": "restricted" } },
    });
    const e = failure(() =>
      s.create(pods, {
        metadata: { name: "p", namespace: "locked" },
        spec: {
          hostPID: true,
          containers: [{ name: "c", image: "i", securityContext: { privileged: true } }],
        },
      }),
    );
    expect(e.code).toBe(403);
    expect(e.status.message).toStartWith('pods "p" is forbidden: violates PodSecurity "restricted:latest": ');
    expect(e.status.message).toContain("host namespaces");
  });
});

describe("store: update rules", () => {
  test("an update that changes nothing writes nothing", async () => {
    const s = fresh();
    const a = s.create(cm, configMap("a"));
    const seen: StoreEvent[] = [];
    s.subscribe((e) => seen.push(e));
    const same = s.update(cm, a);
    await Promise.resolve();
    expect(same.metadata.resourceVersion).toBe(a.metadata.resourceVersion);
    expect(seen).toEqual([]);
  });

  test("no new finalizers once deletion started", () => {
    const s = fresh();
    s.create(cm, { ...configMap("a"), metadata: { ...configMap("a").metadata, finalizers: ["x/hold"] } });
    s.delete(cm, "default", "a");
    const live = s.get(cm, "default", "a");
    const e = failure(() =>
      s.update(cm, { ...live, metadata: { ...live.metadata, finalizers: ["x/hold", "y/more"] } }),
    );
    expect(e.code).toBe(422);
    expect(e.status.message).toContain(
      'no new finalizers can be added if the object is being deleted, found new finalizers []string{"y/more"}',
    );
  });

  test("generateName keeps at most 58 characters", () => {
    const s = fresh();
    const long = "x".repeat(70);
    const o = s.create(cm, { metadata: { generateName: long, namespace: "default" } });
    expect(o.metadata.name).toHaveLength(63);
  });
});

describe("store: patch", () => {
  test("merge, strategic and JSON patches; a stale resourceVersion in the patch conflicts", () => {
    const s = fresh();
    s.create(cm, configMap("a", { x: "1" }));
    expect(
      s.patch(cm, "default", "a", "merge", { metadata: { labels: { x: null, y: "2" } } }).metadata.labels,
    ).toEqual({ y: "2" });
    expect(
      s.patch(cm, "default", "a", "strategic", { metadata: { labels: { z: "3" } } }).metadata.labels,
    ).toEqual({ y: "2", z: "3" });
    expect(s.patch(cm, "default", "a", "json", [{ op: "add", path: "/data/n", value: "v" }]).data).toEqual({
      k: "v",
      n: "v",
    });
    expect(
      failure(() => s.patch(cm, "default", "a", "merge", { metadata: { resourceVersion: "1" } })).code,
    ).toBe(409);
  });
});
