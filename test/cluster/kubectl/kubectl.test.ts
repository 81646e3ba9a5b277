import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { node } from "../nodes.ts";
import { resource } from "../resources.ts";
import { type Cluster, startCluster } from "../server.ts";
import { KUBECTL, kubectl, kubectlStream } from "./kubectl.ts";

let cluster: Cluster;
let admin: string;
let releaseSlow: () => void = () => {};
const slowGate = new Promise<void>((resolve) => {
  releaseSlow = resolve;
});

const job = (name: string) => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name, namespace: "default" },
  spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "main", image: "demo:1" }] } } },
});

describe.skipIf(!KUBECTL)("kubectl against the fake apiserver", () => {
  beforeAll(async () => {
    cluster = await startCluster({
      https: true,
      objects: [{ resource: "nodes", object: node("node-1") }],
      controllers: {
        runtime: async (ctx) => {
          ctx.stdout(`hello from ${ctx.pod.metadata.name}\n`);
          if (ctx.pod.metadata.labels?.["job-name"] === "slow") await slowGate;
          return { exitCode: 0 };
        },
      },
    });
    admin = cluster.kubeconfigFor("admin");
    for (const [name, labels] of [
      ["web", { app: "web", tier: "front" }],
      ["db", { app: "db" }],
    ] as const) {
      cluster.store.create(resource("configmaps"), {
        metadata: { name, namespace: "default", labels },
        data: { key: name },
      });
    }
  });
  afterAll(() => cluster.stop());

  test("get with label selectors, by short name", async () => {
    const res = await kubectl(admin, ["get", "cm", "-l", "app in (web),tier", "-o", "name"]);
    expect(res).toMatchObject({ code: 0, stdout: "configmap/web\n" });
    const none = await kubectl(admin, ["get", "configmaps", "-l", "app=nope"]);
    expect(none.stderr).toContain("No resources found in default namespace.");
  });

  test("get -o json", async () => {
    const res = await kubectl(admin, ["get", "cm", "db", "-o", "json"]);
    expect(res.code).toBe(0);
    const obj = JSON.parse(res.stdout);
    expect(obj).toMatchObject({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "db", labels: { app: "db" } },
      data: { key: "db" },
    });
  });

  test("describe", async () => {
    const res = await kubectl(admin, ["describe", "configmap", "web"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/Name:\s+web/);
    expect(res.stdout).toMatch(/Labels:\s+app=web/);
  });

  test("create -f of an existing object: AlreadyExists", async () => {
    const body = JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "web" } });
    const res = await kubectl(admin, ["create", "--validate=false", "-f", "-"], body);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      'Error from server (AlreadyExists): error when creating "STDIN": configmaps "web" already exists',
    );
  });

  test("delete", async () => {
    cluster.store.create(resource("configmaps"), { metadata: { name: "doomed", namespace: "default" } });
    const res = await kubectl(admin, ["delete", "cm", "doomed"]);
    expect(res).toMatchObject({ code: 0, stdout: 'configmap "doomed" deleted\n' });
    expect(cluster.store.find(resource("configmaps"), "default", "doomed")).toBeUndefined();
  });

  test("auth can-i as the admin and as a ServiceAccount", async () => {
    expect((await kubectl(admin, ["auth", "can-i", "create", "jobs"])).stdout).toBe("yes\n");
    const sa = ["--as", "system:serviceaccount:default:default"];
    const denied = await kubectl(admin, ["auth", "can-i", "list", "pods", ...sa]);
    expect(denied).toMatchObject({ code: 1, stdout: "no\n" });
    cluster.store.create(resource("rolebindings"), {
      metadata: { name: "sa-view", namespace: "default" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
      subjects: [{ kind: "ServiceAccount", name: "default", namespace: "default" }],
    });
    expect(await kubectl(admin, ["auth", "can-i", "list", "pods", ...sa])).toMatchObject({
      code: 0,
      stdout: "yes\n",
    });
    expect((await kubectl(admin, ["auth", "can-i", "delete", "pods", ...sa])).stdout).toBe("no\n");
  });

  test("wait --for=condition=complete job/…, field selectors on its pods, logs", async () => {
    cluster.store.create(resource("jobs"), job("slow"));
    const wait = kubectlStream(admin, ["wait", "--for=condition=complete", "job/slow", "--timeout=60s"]);
    await cluster.log.waitFor((e) => e.verb === "watch" && e.path.endsWith("/jobs"));
    expect(wait.output).toBe("");
    releaseSlow();
    expect(await wait.proc.exited).toBe(0);
    expect(wait.output).toBe("job.batch/slow condition met\n");

    const pods = await kubectl(admin, [
      "get",
      "pods",
      "-l",
      "job-name=slow",
      "--field-selector",
      "status.phase=Succeeded",
      "-o",
      "name",
    ]);
    expect(pods.stdout).toMatch(/^pod\/slow-[a-z0-9]{5}\n$/);
    const pending = await kubectl(admin, [
      "get",
      "pods",
      "--field-selector",
      "status.phase=Pending",
      "-o",
      "name",
    ]);
    expect(pending.stdout).toBe("");
    const podName = pods.stdout.trim().slice("pod/".length);
    expect((await kubectl(admin, ["logs", podName])).stdout).toBe(`hello from ${podName}\n`);
    expect((await kubectl(admin, ["logs", "job/slow"])).stdout).toBe(`hello from ${podName}\n`);
    const described = await kubectl(admin, ["describe", "pod", podName]);
    expect(described.stdout).toMatch(/Status:\s+Succeeded/);
  });

  test("get -w sees ADDED and DELETED", async () => {
    const watch = kubectlStream(admin, [
      "get",
      "cm",
      "-l",
      "app=watched",
      "-w",
      "--output-watch-events",
      "--no-headers",
    ]);
    await cluster.log.waitFor(
      (e) => e.verb === "watch" && e.path.endsWith("/configmaps") && e.query.labelSelector === "app=watched",
    );
    cluster.store.create(resource("configmaps"), {
      metadata: { name: "seen", namespace: "default", labels: { app: "watched" } },
    });
    await watch.until((s) => /ADDED\s+seen/.test(s));
    cluster.store.delete(resource("configmaps"), "default", "seen");
    await watch.until((s) => /DELETED\s+seen/.test(s));
    watch.proc.kill();
    await watch.proc.exited;
  });

  test("client certificates authenticate as CN with O as groups", async () => {
    cluster.addUser("carol", ["readers"]);
    const res = await kubectl(cluster.kubeconfigFor("carol", { auth: "certificate" }), ["get", "cm"]);
    expect(res.stderr).toContain('User "carol" cannot list resource "configmaps"');
    const logged = cluster.log.byUser("carol").at(-1);
    expect(logged?.groups).toEqual(["readers", "system:authenticated"]);
  });
});
