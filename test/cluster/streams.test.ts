import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { kubeletLogs } from "./controllers/logs.ts";
import { wireClient } from "./http-client.ts";
import { resource } from "./resources.ts";
import { type Cluster, startCluster } from "./server.ts";

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster({ controllers: false });
});
afterAll(() => cluster.stop());

const CM = "/api/v1/namespaces/default/configmaps";
const pods = resource("pods");

describe("wire: watch", () => {
  test("events arrive as they happen, from the requested resourceVersion", async () => {
    const admin = wireClient(cluster, "admin");
    const rv = cluster.store.resourceVersion;
    const w = await admin.stream(`${CM}?watch=true&resourceVersion=${rv}`);
    expect(w.status).toBe(200);
    await admin.post(CM, { metadata: { name: "w1" } });
    await admin.delete(`${CM}/w1`);
    const first = JSON.parse((await w.next())!);
    const second = JSON.parse((await w.next())!);
    w.close();
    expect([first.type, second.type]).toEqual(["ADDED", "DELETED"]);
    expect(first.object.metadata.name).toBe("w1");
  });

  test("timeoutSeconds ends the stream; bookmarks when allowed", async () => {
    const admin = wireClient(cluster, "admin");
    const w = await admin.stream(
      `${CM}?watch=true&resourceVersion=${cluster.store.resourceVersion}&allowWatchBookmarks=true&timeoutSeconds=1`,
    );
    cluster.store.bookmark();
    const bm = JSON.parse((await w.next())!);
    expect(bm.type).toBe("BOOKMARK");
    expect(bm.object.metadata.resourceVersion).toBe(cluster.store.resourceVersion);
    expect(await w.next()).toBeUndefined();
  });

  test("a compacted resourceVersion gets an ERROR event with 410 Expired", async () => {
    const admin = wireClient(cluster, "admin");
    const old = cluster.store.resourceVersion;
    await admin.post(CM, { metadata: { name: "w2" } });
    cluster.store.compact();
    const w = await admin.stream(`${CM}?watch=true&resourceVersion=${Number(old) - 1}`);
    const ev = JSON.parse((await w.next())!);
    expect(ev.type).toBe("ERROR");
    expect(ev.object).toMatchObject({ kind: "Status", code: 410, reason: "Expired" });
    expect(await w.next()).toBeUndefined();
  });

  test("the server notices a client going away", async () => {
    const admin = wireClient(cluster, "admin");
    const w = await admin.stream(`${CM}?watch=true&resourceVersion=${cluster.store.resourceVersion}`);
    const stopped = new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (cluster.store.watchCount === 0) {
          clearInterval(timer);
          resolve();
        }
      }, 10);
    });
    w.close();
    await stopped;
  });
});

describe("wire: pod logs", () => {
  async function runningPod(name: string, containers = ["main"]) {
    const admin = wireClient(cluster, "admin");
    await admin.post("/api/v1/namespaces/default/pods", {
      metadata: { name },
      spec: { containers: containers.map((c) => ({ name: c, image: "i" })) },
    });
    cluster.store.mutate(pods, "default", name, (p) => ({ ...p, spec: { ...p.spec, nodeName: "n1" } }));
  }

  function openLog(pod: string, container: string) {
    const uid = cluster.store.get(pods, "default", pod).metadata.uid!;
    return kubeletLogs(cluster.store).open(uid, container, () => new Date());
  }

  test("tailLines and timestamps; a waiting container is 400", async () => {
    await runningPod("logger");
    const admin = wireClient(cluster, "admin");
    const waiting = await admin.get("/api/v1/namespaces/default/pods/logger/log");
    expect(waiting.status).toBe(400);
    expect(waiting.body.message).toBe(
      'container "main" in pod "logger" is waiting to start: ContainerCreating',
    );
    openLog("logger", "main").write("one\ntwo\nthree\n");
    expect((await admin.get("/api/v1/namespaces/default/pods/logger/log")).text).toBe("one\ntwo\nthree\n");
    expect((await admin.get("/api/v1/namespaces/default/pods/logger/log?tailLines=1")).text).toBe("three\n");
    const stamped = (
      await admin.get("/api/v1/namespaces/default/pods/logger/log?timestamps=true&tailLines=1")
    ).text;
    expect(stamped).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z three\n$/);
  });

  test("follow streams until the container exits; several containers need a name", async () => {
    await runningPod("follower", ["a", "b"]);
    const admin = wireClient(cluster, "admin");
    const unnamed = await admin.get("/api/v1/namespaces/default/pods/follower/log");
    expect(unnamed.body.message).toBe(
      "a container name must be specified for pod follower, choose one of: [a b]",
    );
    const log = openLog("follower", "a");
    log.write("before\n");
    const s = await admin.stream("/api/v1/namespaces/default/pods/follower/log?container=a&follow=true");
    expect(await s.next()).toBe("before");
    log.write("after\n");
    expect(await s.next()).toBe("after");
    log.finish();
    expect(await s.next()).toBeUndefined();
  });
});
