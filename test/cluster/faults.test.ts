import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { wireClient } from "./http-client.ts";
import { resource } from "./resources.ts";
import { type Cluster, startCluster } from "./server.ts";

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster({ controllers: false });
});
afterAll(() => cluster.stop());
beforeEach(() => {
  cluster.faults.clear();
  cluster.log.clear();
});

const CM = "/api/v1/namespaces/default/configmaps";
const cm = (name: string) => ({ metadata: { name }, data: { k: "v" } });

describe("faults", () => {
  test("a status with Retry-After on the nth matching request only", async () => {
    const admin = wireClient(cluster, "admin");
    const fault = cluster.faults.add({
      method: "POST",
      path: "/api/v1/namespaces/*/configmaps",
      nth: 2,
      status: 429,
      retryAfterSeconds: 3,
    });
    expect((await admin.post(CM, cm("f1"))).status).toBe(201);
    const limited = await admin.post(CM, cm("f2"));
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("3");
    expect(limited.body).toMatchObject({
      kind: "Status",
      reason: "TooManyRequests",
      code: 429,
      details: { retryAfterSeconds: 3 },
    });
    expect(cluster.store.find(resource("configmaps"), "default", "f2")).toBeUndefined();
    expect((await admin.post(CM, cm("f2"))).status).toBe(201);
    expect(fault.fired).toBe(1);
    expect(fault.matched).toBe(3);
  });

  test("added latency holds one request while others pass", async () => {
    const admin = wireClient(cluster, "admin");
    cluster.faults.add({ method: "GET", path: `${CM}/slow`, latencyMs: 2500 });
    await admin.post(CM, cm("slow"));
    const order: string[] = [];
    const slow = admin.get(`${CM}/slow`).then((r) => order.push(`slow ${r.status}`));
    const fast = admin.get(`${CM}/f1`).then((r) => order.push(`fast ${r.status}`));
    await Promise.all([slow, fast]);
    expect(order).toEqual(["fast 200", "slow 200"]);
  });

  test("commit then drop the connection: the object exists, the client sees a reset", async () => {
    const admin = wireClient(cluster, "admin");
    cluster.faults.add({ method: "POST", path: CM, dropAfterCommit: true });
    const outcome = await admin.post(CM, cm("lost")).then(
      () => "answered",
      (e: Error) => `failed: ${e.name}`,
    );
    expect(outcome).toStartWith("failed");
    expect(cluster.store.find(resource("configmaps"), "default", "lost")?.metadata.uid).toBeDefined();
    const [entry] = cluster.log.requestsOn(CM, "POST");
    expect(entry).toMatchObject({ status: 201, fault: "connection dropped after commit", user: "admin" });
    expect((await admin.post(CM, cm("lost"))).body.reason).toBe("AlreadyExists");
  });

  test("cut a watch after N events", async () => {
    const admin = wireClient(cluster, "admin");
    cluster.faults.add({ path: CM, cutWatchAfterEvents: 1 });
    const w = await admin.stream(`${CM}?watch=true&resourceVersion=${cluster.store.resourceVersion}`);
    await admin.post(CM, cm("cut1"));
    expect(JSON.parse((await w.next())!).type).toBe("ADDED");
    expect(await w.next()).toBeUndefined();
    expect(cluster.log.requestsOn(CM, "GET")[0]?.fault).toBe("watch cut after 1 events");
  });

  test("answer 410 when a watch resumes from a resourceVersion", async () => {
    const admin = wireClient(cluster, "admin");
    cluster.faults.add({ path: CM, watchGoneOnResume: true });
    const list = await admin.get(CM);
    expect(list.status).toBe(200);
    const w = await admin.stream(`${CM}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`);
    const ev = JSON.parse((await w.next())!);
    expect(ev).toMatchObject({ type: "ERROR", object: { code: 410, reason: "Expired" } });
    expect(await w.next()).toBeUndefined();
  });
});

describe("request log", () => {
  test("records user, verb, path, query, body, status; mutating helpers", async () => {
    const admin = wireClient(cluster, "admin");
    await admin.get(`${CM}?labelSelector=a%3Db`);
    expect(cluster.log.noMutatingRequest()).toBe(true);
    await admin.post(CM, cm("logged"));
    await admin.delete(`${CM}/logged`, { propagationPolicy: "Background" });
    expect(cluster.log.noMutatingRequest()).toBe(false);
    expect(cluster.log.mutatingRequests().map((e) => `${e.verb} ${e.status}`)).toEqual([
      "create 201",
      "delete 200",
    ]);
    const [list] = cluster.log.requestsOn("/api/v1/namespaces/*/configmaps", "GET");
    expect(list).toMatchObject({ user: "admin", verb: "list", query: { labelSelector: "a=b" }, status: 200 });
    expect(cluster.log.requestsOn("/api/**/logged")[0]?.body).toEqual({ propagationPolicy: "Background" });
    expect(cluster.log.entries[1]?.body).toEqual(cm("logged"));
  });
});
