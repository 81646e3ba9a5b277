/**
 * The process kubelet against the real control plane: nodes, leases, pods driven by the real job
 * controller and scheduler, status, logs through the apiserver's pods/log proxy, ServiceAccount tokens
 * from the TokenRequest API, and deletion. Every wait is on a condition with a bound; nothing is timed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { until } from "../../support/until.ts";
import { clientCert } from "../certs.ts";
import { processRuntime } from "../controllers/process-runtime.ts";
import type { RunFunction } from "../controllers/runtime.ts";
import { node } from "../nodes.ts";
import { type ControlPlane, startControlPlane } from "./control-plane.ts";
import { type RealKubelet, startRealKubelet } from "./kubelet.ts";

const NS = "kubelet-test";
const UNPULLABLE = "registry.invalid/missing:1";
const BOUND_MS = 60_000;
/** How the waits below ask again: the real apiserver (or `ps`) every 200 ms, for at most BOUND_MS. */
const POLL = { ms: BOUND_MS, everyMs: 200 };
const T = 120_000;

let cp: ControlPlane;
let kubelet: RealKubelet;
const admin = clientCert("admin", ["system:masters"]);
const release = Promise.withResolvers<void>();

const untilAborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });

/** Function containers, by image. */
const functions: RunFunction = async (ctx) => {
  const e = ctx.env;
  switch (ctx.container.image) {
    case "example.com/env:1":
      ctx.stdout(`pod=${e.POD_NAME} node=${e.NODE_NAME} greeting=${e.GREETING} color=${e.CFG_COLOR}\n`);
      ctx.stdout(`service=${e.KUBERNETES_SERVICE_HOST}:${e.KUBERNETES_SERVICE_PORT}\n`);
      return { exitCode: 0 };
    case "example.com/fail:1":
      ctx.stderr("about to fail\n");
      return { exitCode: 3, message: "it broke" };
    case "example.com/chatty:1":
      ctx.stdout("line 1\nline 2\nline 3\n");
      await Promise.race([release.promise, untilAborted(ctx.signal)]);
      ctx.stdout("line 4\n");
      return { exitCode: ctx.signal.aborted ? 143 : 0 };
    default:
      return { exitCode: 0 };
  }
};

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(cp.url + path, {
    method,
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    tls: { ca: cp.caCert, ...admin },
  } as RequestInit);
  const text = await res.text();
  return { status: res.status, body: text.startsWith("{") ? JSON.parse(text) : text };
}

/** Every version of one pod from `resourceVersion` on, until `done` says stop (or it is DELETED). */
async function podHistory(
  name: string,
  resourceVersion: string,
  done: (type: string, pod: any) => boolean,
): Promise<{ type: string; pod: any }[]> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), BOUND_MS);
  const seen: { type: string; pod: any }[] = [];
  try {
    const res = await fetch(
      `${cp.url}/api/v1/namespaces/${NS}/pods?watch=true&fieldSelector=metadata.name%3D${name}&resourceVersion=${resourceVersion}`,
      { signal: abort.signal, tls: { ca: cp.caCert, ...admin } } as RequestInit,
    );
    const reader = res.body!.getReader();
    let buf = "";
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) throw new Error("watch ended");
      buf += new TextDecoder().decode(value);
      for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
        const e = JSON.parse(buf.slice(0, i));
        buf = buf.slice(i + 1);
        seen.push({ type: e.type, pod: e.object });
        if (done(e.type, e.object) || e.type === "DELETED") return seen;
      }
    }
  } catch (err) {
    throw new Error(`${name}: ${err}; saw ${JSON.stringify(seen.map((s) => [s.type, s.pod.status]))}`);
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

async function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([cp.kubectl, "--kubeconfig", cp.adminKubeconfig, ...args], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, stdout, stderr };
}

const pod = (name: string, container: Record<string, unknown>, spec: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: NS },
  spec: {
    restartPolicy: "Never",
    terminationGracePeriodSeconds: 30,
    containers: [{ name: "c", ...container }],
    ...spec,
  },
});

async function createPod(body: ReturnType<typeof pod>): Promise<string> {
  const res = await api("POST", `/api/v1/namespaces/${NS}/pods`, body);
  expect(res.status).toBe(201);
  return res.body.metadata.resourceVersion;
}

const getPod = async (name: string) => (await api("GET", `/api/v1/namespaces/${NS}/pods/${name}`)).body;
const phaseIs = (name: string, ...phases: string[]) =>
  until(
    async () => {
      const p = await getPod(name);
      return phases.includes(p.status?.phase) ? p : undefined;
    },
    `pod ${name} in ${phases}`,
    POLL,
  );
const processArgs = () =>
  Bun.spawnSync(["ps", "-eo", "args"], { stdout: "pipe" }).stdout.toString().split("\n");

beforeAll(async () => {
  cp = await startControlPlane([]);
  kubelet = await startRealKubelet({
    apiserverUrl: cp.url,
    caCert: cp.caCert,
    nodes: [
      node("gpu-1", { gpus: 8 }),
      node("gpu-2", { gpus: 8, taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" }] }),
      node("cpu-1"),
    ],
    runtime: processRuntime({
      images: { "example.com/sh:1": "/bin/sh" },
      fallback: functions,
      killGraceMs: 5000,
    }),
    unpullableImages: [UNPULLABLE],
  });
  expect((await api("POST", "/api/v1/namespaces", { metadata: { name: NS } })).status).toBe(201);
  // Pods need the namespace's default ServiceAccount (serviceaccount controller); kube-root-ca.crt
  // (root-ca-cert-publisher) the kubelet waits for itself, retrying the volume as a real one does.
  await until(
    async () =>
      (await api("GET", `/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200
        ? true
        : undefined,
    "the default ServiceAccount",
    POLL,
  );
  const cm = { metadata: { name: "cfg" }, data: { greeting: "hello", CFG_COLOR: "green" } };
  expect((await api("POST", `/api/v1/namespaces/${NS}/configmaps`, cm)).status).toBe(201);
}, T);

afterAll(async () => {
  release.resolve();
  await kubelet?.stop();
  await cp?.stop();
}, T);

const firstRenewTime: Record<string, string> = {};

describe("process kubelet on the real control plane", () => {
  test(
    "registers the nodes Ready with capacity, taints, addresses, the log port and a lease",
    async () => {
      // The TaintNodesByCondition admission plugin taints new nodes not-ready; nodelifecycle lifts it.
      const nodes = await until(
        async () => {
          const items: any[] = (await api("GET", "/api/v1/nodes")).body.items;
          const notReady = items.some((n) =>
            (n.spec.taints ?? []).some((t: any) => t.key.startsWith("node.kubernetes.io/")),
          );
          return items.length === 3 && !notReady ? items : undefined;
        },
        "nodes without the not-ready taint",
        POLL,
      );
      const byName = Object.fromEntries(nodes.map((n) => [n.metadata.name, n]));
      for (const n of nodes) {
        const ready = n.status.conditions.find((c: any) => c.type === "Ready");
        expect(ready).toMatchObject({ status: "True", reason: "KubeletReady" });
        expect(n.status.conditions.find((c: any) => c.type === "MemoryPressure").status).toBe("False");
        expect(n.status.addresses).toContainEqual({ type: "InternalIP", address: "127.0.0.1" });
        expect(n.status.daemonEndpoints.kubeletEndpoint.Port).toBe(kubelet.port);
      }
      expect(byName["gpu-1"].status.capacity["nvidia.com/gpu"]).toBe("8");
      expect(byName["gpu-1"].metadata.labels["nvidia.com/gpu.present"]).toBe("true");
      expect(byName["cpu-1"].status.capacity["nvidia.com/gpu"]).toBeUndefined();
      expect(byName["gpu-2"].spec.taints).toEqual([
        { key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" },
      ]);
      for (const name of ["gpu-1", "gpu-2", "cpu-1"]) {
        const lease = (
          await api("GET", `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`)
        ).body;
        expect(lease.spec).toMatchObject({ holderIdentity: name, leaseDurationSeconds: 40 });
        expect(lease.metadata.ownerReferences[0]).toMatchObject({ kind: "Node", name });
        firstRenewTime[name] = lease.spec.renewTime;
      }
    },
    T,
  );

  test(
    "a Job runs through the real job controller and scheduler to Complete, with the pod's env",
    async () => {
      const job = {
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: { name: "env-job", namespace: NS },
        spec: {
          backoffLimit: 0,
          template: {
            spec: {
              restartPolicy: "Never",
              containers: [
                {
                  name: "main",
                  image: "example.com/env:1",
                  resources: { limits: { "nvidia.com/gpu": "1" } },
                  envFrom: [{ configMapRef: { name: "cfg" } }],
                  env: [
                    { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
                    { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
                    { name: "GREETING", valueFrom: { configMapKeyRef: { name: "cfg", key: "greeting" } } },
                  ],
                },
              ],
            },
          },
        },
      };
      expect((await api("POST", `/apis/batch/v1/namespaces/${NS}/jobs`, job)).status).toBe(201);
      const done = await until(
        async () => {
          const j = (await api("GET", `/apis/batch/v1/namespaces/${NS}/jobs/env-job`)).body;
          return (j.status?.conditions ?? []).some((c: any) => c.type === "Complete" && c.status === "True")
            ? j
            : undefined;
        },
        "job env-job Complete",
        POLL,
      );
      expect(done.status.succeeded).toBe(1);
      const pods: any[] = (await api("GET", `/api/v1/namespaces/${NS}/pods?labelSelector=job-name%3Denv-job`))
        .body.items;
      expect(pods).toHaveLength(1);
      const p = pods[0];
      // Only gpu-1 fits: gpu-2 is tainted, cpu-1 has no nvidia.com/gpu.
      expect(p.spec.nodeName).toBe("gpu-1");
      expect(p.status).toMatchObject({ phase: "Succeeded", podIP: "127.0.0.1", hostIP: "127.0.0.1" });
      expect(p.status.containerStatuses[0].state.terminated).toMatchObject({
        exitCode: 0,
        reason: "Completed",
      });
      expect(p.status.containerStatuses[0].state.running).toBeUndefined();
      const types = p.status.conditions.map((c: any) => `${c.type}=${c.status}`).sort();
      expect(types).toEqual([
        "ContainersReady=False",
        "Initialized=True",
        "PodReadyToStartContainers=False",
        "PodScheduled=True",
        "Ready=False",
      ]);
      const logs = await kubectl("logs", "-n", NS, p.metadata.name);
      expect(logs.stdout).toBe(
        `pod=${p.metadata.name} node=gpu-1 greeting=hello color=green\nservice=127.0.0.1:${cp.port}\n`,
      );
    },
    T,
  );

  test(
    "exit code 3 fails the pod with terminated.exitCode 3, reason Error and the termination message",
    async () => {
      await createPod(pod("fails", { image: "example.com/fail:1" }));
      const p = await phaseIs("fails", "Failed", "Succeeded");
      expect(p.status.phase).toBe("Failed");
      expect(p.status.containerStatuses[0].state.terminated).toMatchObject({
        exitCode: 3,
        reason: "Error",
        message: "it broke",
      });
      expect(p.status.containerStatuses[0].state.terminated.startedAt).toBeString();
      expect(p.status.containerStatuses[0].state.terminated.finishedAt).toBeString();
      expect((await kubectl("logs", "-n", NS, "fails")).stdout).toBe("about to fail\n");
    },
    T,
  );

  test(
    "init containers run first; a missing ConfigMap waits in CreateContainerConfigError until it exists",
    async () => {
      const rv = await createPod(
        pod(
          "late-config",
          {
            image: "example.com/env:1",
            env: [{ name: "GREETING", valueFrom: { configMapKeyRef: { name: "late", key: "greeting" } } }],
          },
          { initContainers: [{ name: "init", image: "example.com/env:1" }] },
        ),
      );
      const waiting = await podHistory(
        "late-config",
        rv,
        (_, p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === "CreateContainerConfigError",
      );
      const last = waiting.at(-1)!.pod.status;
      expect(last.containerStatuses[0].state.waiting.message).toBe('configmap "late" not found');
      expect(last.initContainerStatuses[0].state.terminated).toMatchObject({
        exitCode: 0,
        reason: "Completed",
      });
      expect(last.phase).toBe("Pending");
      const cm = { metadata: { name: "late" }, data: { greeting: "at last" } };
      expect((await api("POST", `/api/v1/namespaces/${NS}/configmaps`, cm)).status).toBe(201);
      expect((await phaseIs("late-config", "Succeeded", "Failed")).status.phase).toBe("Succeeded");
      expect((await kubectl("logs", "-n", NS, "late-config")).stdout).toContain("greeting=at last");
    },
    T,
  );

  test(
    "an unpullable image goes ErrImagePull then ImagePullBackOff and stays Pending; deleting it completes",
    async () => {
      const rv = await createPod(pod("unpullable", { image: UNPULLABLE }));
      const seen = await podHistory(
        "unpullable",
        rv,
        (_, p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === "ImagePullBackOff",
      );
      const reasons = seen
        .map((s) => s.pod.status?.containerStatuses?.[0]?.state?.waiting?.reason)
        .filter(Boolean);
      expect(reasons).toContain("ErrImagePull");
      expect(reasons.indexOf("ErrImagePull")).toBeLessThan(reasons.indexOf("ImagePullBackOff"));
      const last = seen.at(-1)!.pod;
      expect(last.status.phase).toBe("Pending");
      expect(last.status.containerStatuses[0].state.waiting.message).toContain(UNPULLABLE);
      const logs = await kubectl("logs", "-n", NS, "unpullable");
      expect(logs.code).not.toBe(0);
      expect(logs.stderr).toContain(
        'container "c" in pod "unpullable" is waiting to start: trying and failing to pull image',
      );
      // A graceful delete of a pod that never started: the kubelet reports its end and confirms.
      const del = await api("DELETE", `/api/v1/namespaces/${NS}/pods/unpullable`);
      expect(del.body.metadata.deletionTimestamp).toBeString();
      const end = await podHistory("unpullable", del.body.metadata.resourceVersion, () => false);
      expect(end.at(-1)!.type).toBe("DELETED");
    },
    T,
  );

  test(
    "kubectl logs through the apiserver's proxy: whole, --tail, --timestamps, and -f while running",
    async () => {
      await createPod(pod("chatty", { image: "example.com/chatty:1" }));
      await phaseIs("chatty", "Running");
      const all = await until(
        async () => {
          const r = await kubectl("logs", "-n", NS, "chatty");
          return r.stdout === "line 1\nline 2\nline 3\n" ? r : undefined;
        },
        "three lines",
        POLL,
      );
      expect(all.code).toBe(0);
      expect((await kubectl("logs", "-n", NS, "chatty", "--tail=1")).stdout).toBe("line 3\n");
      const stamped = (await kubectl("logs", "-n", NS, "chatty", "--timestamps", "--tail=2")).stdout;
      expect(stamped).toMatch(
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z line 2\n\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z line 3\n$/,
      );

      // -f streams what is there at once, then each write, and ends when the container does.
      const follow = Bun.spawn(
        [cp.kubectl, "--kubeconfig", cp.adminKubeconfig, "logs", "-f", "-n", NS, "chatty"],
        {
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      const reader = follow.stdout.getReader();
      let out = "";
      while (!out.includes("line 3\n")) {
        const { done, value } = await reader.read();
        if (done) break;
        out += new TextDecoder().decode(value);
      }
      expect(out).toBe("line 1\nline 2\nline 3\n"); // the container is still running
      release.resolve();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        out += new TextDecoder().decode(value);
      }
      expect(await follow.exited).toBe(0);
      expect(out).toBe("line 1\nline 2\nline 3\nline 4\n");
      expect((await phaseIs("chatty", "Succeeded", "Failed")).status.phase).toBe("Succeeded");
    },
    T,
  );

  test(
    "the log server answers 404 for unknown pods and containers",
    async () => {
      const get = (path: string) =>
        fetch(`https://127.0.0.1:${kubelet.port}/containerLogs/${path}`, {
          tls: { ca: cp.caCert },
        } as RequestInit);
      const unknownPod = await get(`${NS}/nope/c`);
      expect(unknownPod.status).toBe(404);
      expect(await unknownPod.text()).toBe('pod "nope" does not exist');
      const unknownContainer = await get(`${NS}/chatty/nope`);
      expect(unknownContainer.status).toBe(404);
      expect(await unknownContainer.text()).toBe('container "nope" not found in pod "chatty"');
      const ok = await get(`${NS}/chatty/c?tailLines=1`);
      expect(await ok.text()).toBe("line 4\n");
    },
    T,
  );

  test(
    "a process container reads its bound ServiceAccount token in-cluster and the apiserver accepts it",
    async () => {
      const script = [
        "d=/var/run/secrets/kubernetes.io/serviceaccount",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion
        'echo "namespace=$(cat $d/namespace) kubeconfig=${KUBECONFIG:-unset}"',
        "touch $d/x 2>/dev/null && echo writable || echo read-only",
        "curl -sS --cacert $d/ca.crt -H \"Authorization: Bearer $(cat $d/token)\" -H 'Content-Type: application/json'" +
          ` -d '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}'` +
          " https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/apis/authentication.k8s.io/v1/selfsubjectreviews",
      ].join("\n");
      await createPod(pod("sa", { image: "example.com/sh:1", command: ["sh", "-c", script] }));
      const p = await phaseIs("sa", "Succeeded", "Failed");
      const log = (await api("GET", `/api/v1/namespaces/${NS}/pods/sa/log`)).body as string;
      expect(p.status.phase).toBe("Succeeded");
      const [first, second, ...review] = log.split("\n");
      expect(first).toBe(`namespace=${NS} kubeconfig=unset`);
      expect(second).toBe("read-only");
      // The apiserver pretty-prints JSON for curl.
      const user = JSON.parse(review.join("\n")).status.userInfo;
      expect(user.username).toBe(`system:serviceaccount:${NS}:default`);
      expect(user.extra["authentication.kubernetes.io/pod-name"]).toEqual(["sa"]);
      expect(user.extra["authentication.kubernetes.io/pod-uid"]).toEqual([p.metadata.uid]);
      expect(user.extra["authentication.kubernetes.io/node-name"]).toEqual([p.spec.nodeName]);
    },
    T,
  );

  test(
    "deleting a running pod stops its process (SIGTERM: 143), reports it, and the pod disappears",
    async () => {
      await createPod(
        pod("sleeper", { image: "example.com/sh:1", command: ["sh", "-c", "echo started; exec sleep 6017"] }),
      );
      await phaseIs("sleeper", "Running");
      await until(
        async () => (processArgs().includes("sleep 6017") ? true : undefined),
        "the sleep process",
        POLL,
      );
      const del = await api("DELETE", `/api/v1/namespaces/${NS}/pods/sleeper`);
      expect(del.body.metadata.deletionGracePeriodSeconds).toBe(30);
      const seen = await podHistory("sleeper", del.body.metadata.resourceVersion, () => false);
      expect(seen.at(-1)!.type).toBe("DELETED");
      const final = seen.findLast((s) => s.pod.status?.phase === "Failed")!.pod;
      expect(final.status.containerStatuses[0].state.terminated).toMatchObject({
        exitCode: 143,
        reason: "Error",
      });
      expect(processArgs()).not.toContain("sleep 6017");
    },
    T,
  );

  test(
    "a pod deleted with grace 0 by someone else just has its container stopped",
    async () => {
      await createPod(pod("forced", { image: "example.com/sh:1", command: ["sh", "-c", "exec sleep 6018"] }));
      await phaseIs("forced", "Running");
      await until(
        async () => (processArgs().includes("sleep 6018") ? true : undefined),
        "the sleep process",
        POLL,
      );
      const del = await api("DELETE", `/api/v1/namespaces/${NS}/pods/forced`, { gracePeriodSeconds: 0 });
      expect(del.status).toBe(200);
      expect((await api("GET", `/api/v1/namespaces/${NS}/pods/forced`)).status).toBe(404);
      await until(
        async () => (processArgs().includes("sleep 6018") ? undefined : true),
        "the sleep process to end",
        POLL,
      );
    },
    T,
  );

  test(
    "the leases are renewed and the nodes stay Ready, never tainted unreachable",
    async () => {
      for (const name of ["gpu-1", "gpu-2", "cpu-1"]) {
        await until(
          async () => {
            const lease = (
              await api("GET", `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`)
            ).body;
            return lease.spec.renewTime !== firstRenewTime[name] ? true : undefined;
          },
          `lease ${name} renewed`,
          POLL,
        );
      }
      for (const n of (await api("GET", "/api/v1/nodes")).body.items) {
        expect(n.status.conditions.find((c: any) => c.type === "Ready").status).toBe("True");
        expect((n.spec.taints ?? []).filter((t: any) => t.key.startsWith("node.kubernetes.io/"))).toEqual([]);
      }
    },
    T,
  );
});
