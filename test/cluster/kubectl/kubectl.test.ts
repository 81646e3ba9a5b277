/** kubectl of the control plane's release against either backend: the same checks on both. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { useCluster } from "../../support/cluster.ts";
import { until, untilStore } from "../../support/until.ts";
import { node } from "../nodes.ts";
import { resource } from "../resources.ts";
import { BACKENDS } from "../testbed.ts";
import { kubectl, kubectlStream } from "./kubectl.ts";

const job = (name: string) => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name, namespace: "default" },
  spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "main", image: "demo:1" }] } } },
});

/** A bound on a stuck test only: every wait ends on a condition long before it. */
const TIMEOUT = 60_000;

for (const backend of BACKENDS)
  describe(`[${backend}] kubectl`, () => {
    let admin: string;
    let releaseSlow: () => void = () => {};
    const slowGate = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    /** A check the fake cannot pass (the reason is given where it is used); it runs on the real apiserver. */
    const realOnly = test.skipIf(backend === "fake");

    // Before the cluster's stop (afterAll hooks run in the order registered): the slow pod waits on it.
    afterAll(() => releaseSlow());
    const cluster = useCluster(backend, {
      https: true,
      nodes: [node("node-1")],
      runtime: () => async (ctx) => {
        ctx.stdout(`hello from ${ctx.pod.metadata.name}\n`);
        if (ctx.pod.metadata.labels?.["job-name"] === "slow") await slowGate;
        return { exitCode: 0 };
      },
    });
    beforeAll(async () => {
      admin = cluster().kubeconfigFor("admin");
      for (const [name, labels] of [
        ["web", { app: "web", tier: "front" }],
        ["db", { app: "db" }],
      ] as const) {
        await cluster().store.create(resource("configmaps"), {
          metadata: { name, namespace: "default", labels },
          data: { key: name },
        });
      }
    });

    test(
      "get with label selectors, by short name",
      async () => {
        const res = await kubectl(admin, ["get", "cm", "-l", "app in (web),tier", "-o", "name"]);
        expect(res).toMatchObject({ code: 0, stdout: "configmap/web\n" });
        const none = await kubectl(admin, ["get", "configmaps", "-l", "app=nope"]);
        expect(none.stderr).toContain("No resources found in default namespace.");
      },
      TIMEOUT,
    );

    test(
      "get -o json",
      async () => {
        const res = await kubectl(admin, ["get", "cm", "db", "-o", "json"]);
        expect(res.code).toBe(0);
        const obj = JSON.parse(res.stdout);
        expect(obj).toMatchObject({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "db", labels: { app: "db" } },
          data: { key: "db" },
        });
      },
      TIMEOUT,
    );

    test(
      "describe",
      async () => {
        const res = await kubectl(admin, ["describe", "configmap", "web"]);
        expect(res.code).toBe(0);
        expect(res.stdout).toMatch(/Name:\s+web/);
        expect(res.stdout).toMatch(/Labels:\s+app=web/);
      },
      TIMEOUT,
    );

    test(
      "create -f of an existing object: AlreadyExists",
      async () => {
        const body = JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "web" } });
        const res = await kubectl(admin, ["create", "--validate=false", "-f", "-"], body);
        expect(res.code).toBe(1);
        expect(res.stderr).toContain(
          'Error from server (AlreadyExists): error when creating "STDIN": configmaps "web" already exists',
        );
      },
      TIMEOUT,
    );

    test(
      "delete",
      async () => {
        await cluster().store.create(resource("configmaps"), {
          metadata: { name: "doomed", namespace: "default" },
        });
        const res = await kubectl(admin, ["delete", "cm", "doomed"]);
        expect(res).toMatchObject({ code: 0, stdout: 'configmap "doomed" deleted from default namespace\n' });
        // kubectl returns once the apiserver has removed it; the real backend's mirror learns it by watch.
        await untilStore(
          cluster(),
          () => cluster().store.find(resource("configmaps"), "default", "doomed") === undefined,
          "the ConfigMap doomed gone",
        );
      },
      TIMEOUT,
    );

    test(
      "auth can-i as the admin and as a ServiceAccount",
      async () => {
        expect((await kubectl(admin, ["auth", "can-i", "create", "jobs"])).stdout).toBe("yes\n");
        const sa = ["--as", "system:serviceaccount:default:default"];
        const denied = await kubectl(admin, ["auth", "can-i", "list", "pods", ...sa]);
        expect(denied).toMatchObject({ code: 1, stdout: "no\n" });
        await cluster().store.create(resource("rolebindings"), {
          metadata: { name: "sa-view", namespace: "default" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
          subjects: [{ kind: "ServiceAccount", name: "default", namespace: "default" }],
        });
        // The real apiserver's RBAC authorizer reads bindings from its own informer, a moment behind the write.
        expect(
          await until(
            () => kubectl(admin, ["auth", "can-i", "list", "pods", ...sa]),
            "kubectl auth can-i: yes",
            {
              accept: (r) => r.code === 0,
            },
          ),
        ).toMatchObject({
          code: 0,
          stdout: "yes\n",
        });
        expect((await kubectl(admin, ["auth", "can-i", "delete", "pods", ...sa])).stdout).toBe("no\n");
      },
      TIMEOUT,
    );

    // fake: no watch-list (a watch with sendInitialEvents=true), which kubectl 1.36's wait uses: it waits forever for the initial-events-end bookmark.
    realOnly(
      "wait --for=condition=complete job/… returns once the Job completes",
      async () => {
        await cluster().store.create(resource("jobs"), job("slow"));
        const wait = kubectlStream(admin, ["wait", "--for=condition=complete", "job/slow", "--timeout=60s"]);
        await until(
          () => cluster().log.entries.find((e) => e.verb === "watch" && e.path.endsWith("/jobs")),
          "kubectl's Job watch",
        );
        expect(wait.output).toBe("");
        releaseSlow();
        expect(await wait.proc.exited).toBe(0);
        expect(wait.output).toBe("job.batch/slow condition met\n");
      },
      TIMEOUT,
    );

    test(
      "field selectors on a finished Job's pods, logs, describe",
      async () => {
        await cluster().store.create(resource("jobs"), job("quick"));
        await untilStore(
          cluster(),
          () =>
            (cluster().store.find(resource("jobs"), "default", "quick")?.status?.conditions ?? []).some(
              (c: { type: string; status: string }) => c.type === "Complete" && c.status === "True",
            ),
          "the Job quick Complete",
        );
        const pods = await kubectl(admin, [
          "get",
          "pods",
          "-l",
          "job-name=quick",
          "--field-selector",
          "status.phase=Succeeded",
          "-o",
          "name",
        ]);
        expect(pods.stdout).toMatch(/^pod\/quick-[a-z0-9]{5}\n$/);
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
        expect((await kubectl(admin, ["logs", "job/quick"])).stdout).toBe(`hello from ${podName}\n`);
        const described = await kubectl(admin, ["describe", "pod", podName]);
        expect(described.stdout).toMatch(/Status:\s+Succeeded/);
      },
      TIMEOUT,
    );

    test(
      "get -w sees ADDED and DELETED",
      async () => {
        const watch = kubectlStream(admin, [
          "get",
          "cm",
          "-l",
          "app=watched",
          "-w",
          "--output-watch-events",
          "--no-headers",
        ]);
        await until(
          () =>
            cluster().log.entries.find(
              (e) =>
                e.verb === "watch" &&
                e.path.endsWith("/configmaps") &&
                e.query.labelSelector === "app=watched",
            ),
          "kubectl's ConfigMap watch",
        );
        await cluster().store.create(resource("configmaps"), {
          metadata: { name: "seen", namespace: "default", labels: { app: "watched" } },
        });
        await watch.until((s) => /ADDED\s+seen/.test(s));
        await cluster().store.delete(resource("configmaps"), "default", "seen");
        await watch.until((s) => /DELETED\s+seen/.test(s));
        watch.proc.kill();
        await watch.proc.exited;
      },
      TIMEOUT,
    );

    test(
      "client certificates authenticate as CN with O as groups",
      async () => {
        cluster().addUser("carol", ["readers"]);
        const res = await kubectl(cluster().kubeconfigFor("carol", { auth: "certificate" }), ["get", "cm"]);
        expect(res.stderr).toContain('User "carol" cannot list resource "configmaps"');
        const logged = cluster().log.byUser("carol").at(-1);
        expect(logged?.groups).toEqual(["readers", "system:authenticated"]);
      },
      TIMEOUT,
    );

    // fake: protobuf request bodies are answered 415 (it decodes only access reviews from protobuf).
    realOnly(
      "typed generators send protobuf: create configmap --from-literal, create sa",
      async () => {
        const cm = await kubectl(admin, ["create", "configmap", "pb", "--from-literal=k=v"]);
        expect(cm).toMatchObject({ code: 0, stdout: "configmap/pb created\n" });
        const sa = await kubectl(admin, ["create", "sa", "x"]);
        expect(sa).toMatchObject({ code: 0, stdout: "serviceaccount/x created\n" });
        await untilStore(
          cluster(),
          () =>
            cluster().store.find(resource("serviceaccounts"), "default", "x") !== undefined &&
            cluster().store.find(resource("configmaps"), "default", "pb") !== undefined,
          "the ServiceAccount x and the ConfigMap pb",
        );
        expect(cluster().store.get(resource("configmaps"), "default", "pb").data).toEqual({ k: "v" });
      },
      TIMEOUT,
    );

    // fake: /openapi/v2 and /openapi/v3 are 404 and fieldValidation is not implemented.
    realOnly(
      "OpenAPI: /openapi/v3, explain, and strict server-side field validation on create",
      async () => {
        const index = await kubectl(admin, ["get", "--raw", "/openapi/v3"]);
        expect(index.code).toBe(0);
        expect(Object.keys(JSON.parse(index.stdout).paths)).toContain("api/v1");
        const explain = await kubectl(admin, ["explain", "configmap.data"]);
        expect(explain).toMatchObject({ code: 0 });
        expect(explain.stdout).toContain("KIND:       ConfigMap");
        const body = JSON.stringify({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "typo" },
          dta: {},
        });
        const strict = await kubectl(admin, ["create", "-f", "-"], body);
        expect(strict.code).toBe(1);
        expect(strict.stderr).toContain('unknown field "dta"');
      },
      TIMEOUT,
    );

    // fake: SelfSubjectRulesReview is not served.
    realOnly(
      "auth can-i --list (SelfSubjectRulesReview)",
      async () => {
        const res = await kubectl(admin, ["auth", "can-i", "--list"]);
        expect(res.code).toBe(0);
        expect(res.stdout).toMatch(/^Resources\s+Non-Resource URLs\s+Resource Names\s+Verbs$/m);
        expect(res.stdout).toMatch(/^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
      },
      TIMEOUT,
    );

    // fake: SelfSubjectReview (authentication.k8s.io) is not served.
    realOnly(
      "auth whoami (SelfSubjectReview)",
      async () => {
        const res = await kubectl(admin, ["auth", "whoami", "-o", "json"]);
        expect(res.code).toBe(0);
        expect(JSON.parse(res.stdout).status.userInfo).toMatchObject({
          username: "admin",
          groups: ["system:masters", "system:authenticated"],
        });
      },
      TIMEOUT,
    );

    // fake: a Table request is answered with the plain List, so server-side columns are absent.
    realOnly(
      "get prints the server's Table columns",
      async () => {
        const res = await kubectl(admin, ["get", "cm", "web", "db"]);
        expect(res.code).toBe(0);
        expect(res.stdout).toMatch(/^NAME\s+DATA\s+AGE$/m);
        expect(res.stdout).toMatch(/^web\s+1\s+\S+$/m);
        const wide = await kubectl(admin, ["get", "nodes", "-o", "wide"]);
        expect(wide.stdout).toMatch(
          /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE/m,
        );
        expect(wide.stdout).toMatch(/^node-1\s+Ready\s/m);
      },
      TIMEOUT,
    );
  });
