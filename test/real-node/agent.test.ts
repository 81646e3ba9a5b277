/**
 * The agent Job on a real node, through dist/aicr: the restricted pod (--no-privileged) as the node's
 * runc really runs it, the agent image from a private registry with and without --image-pull-secret,
 * SIGINT / SIGKILL of the CLI while the agent's real container runs, and an operator's own Job that runs
 * the image's `aicr snapshot -o cm://…` in agent mode (the contract such Jobs rely on; without
 * AICR_AGENT_MODE the command is the operator-side one). Every claim is read back from
 * the cluster (the fault proxy's request log, the mirror), from containerd, or from what the
 * container's process itself sees in this host's /proc. Real backend only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseSnapshot, type Snapshot } from "../../src/snapshot/schema.ts";
import { PROBE_CONTAINER_SECURITY, PROBE_POD_SECURITY } from "../../src/validate/checks/_support.ts";
import { pushArchive } from "../cluster/real/node/images.ts";
import { resource } from "../cluster/resources.ts";
import { BACKENDS, type TestCluster } from "../cluster/testbed.ts";
import { KUBERNETES_VERSION } from "../control-plane/build.ts";
import { aicr, baseEnv } from "../e2e/_aicr.ts";
import { ARCHIVE } from "../image/_image.ts";
import {
  freshNamespace,
  runIdOf,
  runObjects,
  runSnapshot,
  spawnSnapshot,
  untilNoRunObjects,
  untilNoRunPods,
} from "../snapshot/_harness.ts";
import { until, untilStore } from "../support/until.ts";
import {
  containerdId,
  containerStatus,
  ctr,
  hostPidOf,
  kubectlAs,
  NODE,
  podContainerIds,
  processView,
  type RealNodeCluster,
  runPods,
  SETUP_MS,
  startRealNodeCluster,
  untilStopped,
} from "./_support.ts";

const STUCK_MS = 120_000;
const TEST_MS = 240_000;
const ON_NODE = ["--node-selector", `kubernetes.io/hostname=${NODE}`, "--timeout", "3m"];
const NO_CAPS = "0000000000000000";

const reading = (doc: Snapshot, type: string, subtype: string) =>
  doc.measurements.find((m) => m.type === type)?.subtypes.find((s) => s.subtype === subtype)?.data;
const measurement = (doc: Snapshot, type: string) => doc.measurements.find((m) => m.type === type);

describe.skipIf(!BACKENDS.includes("real"))("[real] the agent Job on a real node", () => {
  let env: RealNodeCluster;
  let cluster: TestCluster;
  let admin: string;

  beforeAll(async () => {
    env = await startRealNodeCluster();
    cluster = env.cluster;
    admin = env.admin;
  }, SETUP_MS);

  afterAll(async () => {
    await env?.stop();
  }, SETUP_MS);

  const image = () => cluster.realNode!.images.aicr!;

  /**
   * Holds the agent's one write — the server-side apply of its staging ConfigMap in `ns` — until
   * `release()`: once the hold has caught it, the agent's container is provably running (and blocked).
   */
  function holdAgentWrite(ns: string) {
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const fault = cluster.faults.add({
      method: "PATCH",
      path: new RegExp(`^/api/v1/namespaces/${ns}/configmaps/aicr-agent-snapshot-`),
      holdUntil: released,
    });
    return {
      fault,
      reached: () => until(() => fault.fired > 0, "the agent's held ConfigMap write", STUCK_MS),
      release: () => {
        release();
        fault.remove();
      },
    };
  }

  /** The run's one pod, once its container runs: the pod's UID and containerd's ID of the container. */
  async function runningAgent(ns: string) {
    const pod = await untilStore(
      cluster,
      () =>
        runPods(cluster, ns).find(
          (p) => containerStatus(p)?.state?.running !== undefined && containerdId(containerStatus(p)),
        ),
      "the agent pod's container running",
      STUCK_MS,
    );
    const id = containerdId(containerStatus(pod))!;
    return { pod, id, uid: pod.metadata.uid as string };
  }

  test(
    "--no-privileged in a Pod Security restricted namespace: the container runs as 65534 with a read-only root and no capability; K8s readings, SystemD empty with its one warning",
    async () => {
      const ns = await freshNamespace(cluster, "restricted", {
        "pod-security.kubernetes.io/enforce": "restricted",
      });
      const hold = holdAgentWrite(ns);
      try {
        const run = spawnSnapshot(admin, ["-n", ns, "--no-privileged", "--image", image(), ...ON_NODE]);
        await hold.reached();
        const agent = await runningAgent(ns);

        // What the container's own process sees, read from this host's /proc while it is held.
        const pid = (await until(
          () => hostPidOf(agent.id),
          "the agent's process on this host",
          STUCK_MS,
        )) as number;
        const seen = processView(pid);
        expect(seen.uid).toEqual(["65534", "65534", "65534", "65534"]);
        expect(seen.gid).toEqual(["65534", "65534", "65534", "65534"]);
        expect([seen.capEff, seen.capPrm, seen.capBnd]).toEqual([NO_CAPS, NO_CAPS, NO_CAPS]);
        expect(seen.noNewPrivs).toBe("1");
        expect(seen.rootMountOptions).toContain("ro");
        // And what the kubelet reports of it (the CRI's answer: the user the runtime started it as).
        expect(containerStatus(agent.pod)?.user?.linux).toMatchObject({ uid: 65534, gid: 65534 });

        hold.release();
        const r = await run.done;
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toContain(`running on ${NODE}`);
        const doc = parseSnapshot(r.stdout, "stdout");
        expect(doc.metadata["source-node"]).toBe(NODE);
        expect(reading(doc, "K8s", "server")?.version).toBe(KUBERNETES_VERSION);
        expect(reading(doc, "K8s", "node")).toMatchObject({ "source-node": NODE });
        // No /run/systemd in the pod and no bus socket: SystemD is empty, said once.
        expect(measurement(doc, "SystemD")?.subtypes ?? []).toEqual([]);
        expect(r.stderr.split("systemd is not reachable over D-Bus; SystemD is empty").length - 1).toBe(1);

        await untilNoRunObjects(cluster, ns);
        await untilNoRunPods(cluster, ns);
        await untilStopped(cluster, [agent.id], "the agent's container stopped");
      } finally {
        hold.release();
      }
    },
    TEST_MS,
  );

  test(
    "an agent image in a private registry: without --image-pull-secret the run fails fast with the pull failure (exit 3); with it the image is pulled and the run completes; nothing left",
    async () => {
      const ns = await freshNamespace(cluster, "pull");
      const { privateRegistry } = cluster.realNode!;
      const privateImage = await pushArchive(ARCHIVE, privateRegistry, "private/aicr", "local");
      const pulled = async () =>
        (await ctr(cluster, ["--namespace", "k8s.io", "images", "list", "--quiet"])).stdout.split("\n");

      // Without credentials: the kubelet's pull is refused by the registry; aicr reads the pod's state.
      const denied = await runSnapshot(admin, ["-n", ns, "--image", privateImage, ...ON_NODE]);
      expect(denied.code, denied.stderr).toBe(3);
      expect(denied.stderr).toMatch(
        new RegExp(
          `\\[NOT_FOUND\\] the agent image "${privateImage.replace(/[.]/g, "\\.")}" cannot be pulled: (ErrImagePull|ImagePullBackOff)`,
        ),
      );
      expect(denied.stderr).toContain("--image-pull-secret");
      expect(denied.stderr).not.toContain("TIMEOUT");
      expect(await pulled()).not.toContain(privateImage);
      await untilNoRunObjects(cluster, ns);
      await untilNoRunPods(cluster, ns);

      // With a dockerconfigjson Secret for the registry.
      const { host, user, password } = privateRegistry;
      const auth = Buffer.from(`${user}:${password}`).toString("base64");
      const config = { auths: { [host]: { username: user, password, auth } } };
      const secret = {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "private-registry", namespace: ns },
        type: "kubernetes.io/dockerconfigjson",
        data: { ".dockerconfigjson": Buffer.from(JSON.stringify(config)).toString("base64") },
      };
      const created = await kubectlAs(env.kubectl, admin, ["create", "-f", "-"], JSON.stringify(secret));
      expect(created.code, created.stderr).toBe(0);
      const ok = await runSnapshot(admin, [
        "-n",
        ns,
        "--image",
        privateImage,
        "--image-pull-secret",
        "private-registry",
        ...ON_NODE,
      ]);
      expect(ok.code, ok.stderr).toBe(0);
      const doc = parseSnapshot(ok.stdout, "stdout");
      expect(doc.metadata["source-node"]).toBe(NODE);
      expect(reading(doc, "GPU", "smi")).toMatchObject({ "gpu-count": 8 });
      // The Job named the Secret; containerd holds the image it pulled from the private registry.
      const runId = runIdOf(ok.stderr);
      const job = cluster.log.entries.find(
        (e) =>
          e.method === "POST" &&
          e.path === `/apis/batch/v1/namespaces/${ns}/jobs` &&
          JSON.stringify(e.body).includes(runId),
      );
      expect(
        (job?.body as { spec?: { template: { spec: { imagePullSecrets?: unknown } } } } | undefined)?.spec
          ?.template.spec.imagePullSecrets,
      ).toEqual([{ name: "private-registry" }]);
      expect(await pulled()).toContain(privateImage);
      await untilNoRunObjects(cluster, ns);
      await untilNoRunPods(cluster, ns);
      expect(runObjects(cluster, ns)).toEqual([]);
    },
    TEST_MS,
  );

  /** A run in `ns` whose agent's container provably runs (its write held): the run, the hold, the container. */
  async function runWithAgentRunning(ns: string) {
    const hold = holdAgentWrite(ns);
    const run = spawnSnapshot(admin, ["-n", ns, "--image", image(), ...ON_NODE]);
    await hold.reached();
    const agent = await runningAgent(ns);
    return { hold, run, agent, ids: await podContainerIds(cluster, agent.uid) };
  }

  /** No run object, no run pod, no process and no task of the agent's pod left. */
  async function provedStopped(ns: string, agentId: string, ids: string[], runId?: string) {
    await untilNoRunObjects(cluster, ns, runId);
    // The pod is gone from the API only once the kubelet has stopped its containers.
    await untilNoRunPods(cluster, ns);
    expect(hostPidOf(agentId)).toBeUndefined();
    await untilStopped(cluster, ids, "the agent pod's sandbox and container stopped");
  }

  test(
    "SIGINT while the agent's container runs: exit 9, [CANCELED], no run object, its sandbox and container stopped (no process, no task)",
    async () => {
      const ns = await freshNamespace(cluster, "sigint");
      const { hold, run, agent, ids } = await runWithAgentRunning(ns);
      try {
        expect(ids).toContain(agent.id);
        expect(ids.length).toBe(2); // the sandbox and the agent's container
        run.proc.kill("SIGINT");
        const r = await run.done;
        expect(r.code, r.stderr).toBe(9);
        expect(r.stderr).toContain("received SIGINT: cancelling");
        expect(r.stderr).toContain("[CANCELED]");
        expect(r.stdout).toBe("");
        await provedStopped(ns, agent.id, ids);
      } finally {
        hold.release();
      }
      // The held write, let go, lands (if at all) owned by the deleted Job: the garbage collector takes it.
      await untilNoRunObjects(cluster, ns);
    },
    TEST_MS,
  );

  test(
    "SIGKILL while the agent's container runs, then aicr runs delete <run-id> --force: the Job, pod and RBAC go, its sandbox and container stopped (no process, no task)",
    async () => {
      const ns = await freshNamespace(cluster, "sigkill");
      const { hold, run, agent, ids } = await runWithAgentRunning(ns);
      try {
        run.proc.kill("SIGKILL");
        const killed = await run.done;
        expect(killed.code).not.toBe(0);
        const runId = runIdOf(killed.stderr);
        // Everything of the run still stands, its container running.
        expect(runObjects(cluster, ns, runId).map((o) => o.split("/")[0])).toEqual(
          expect.arrayContaining([
            "ClusterRole",
            "ClusterRoleBinding",
            "Job",
            "Role",
            "RoleBinding",
            "ServiceAccount",
          ]),
        );
        expect(hostPidOf(agent.id)).toBeDefined();

        const del = await aicr(["runs", "delete", runId, "-n", ns, "--yes", "--force"], {
          env: baseEnv({ KUBECONFIG: admin }),
        });
        expect(del.code, del.stderr).toBe(0);
        await provedStopped(ns, agent.id, ids, runId);
      } finally {
        hold.release();
      }
      await untilNoRunObjects(cluster, ns);
    },
    TEST_MS,
  );

  /** An operator's own objects: a ServiceAccount allowed to write ConfigMaps in `ns`, and a Job running the image. */
  function operatorObjects(
    ns: string,
    job: string,
    output: string,
    agentMode: boolean,
    extraArgs: string[] = [],
  ) {
    const rbac = "rbac.authorization.k8s.io";
    const node = cluster.realNode!.node;
    const hostPath = (name: string, path: string, type: string, mountPath: string) => ({
      volume: { name, hostPath: { path, type } },
      mount: { name, mountPath, readOnly: true },
    });
    const mounts = [
      hostPath("run-systemd", "/run/systemd", "Directory", "/run/systemd"),
      hostPath("nvidia-smi", node.nvidiaSmi, "File", "/usr/bin/nvidia-smi"),
      hostPath("os-release", "/etc/os-release", "File", "/etc/os-release"),
    ];
    return {
      apiVersion: "v1",
      kind: "List",
      items: [
        { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "snapshotter", namespace: ns } },
        {
          apiVersion: `${rbac}/v1`,
          kind: "Role",
          metadata: { name: "snapshotter", namespace: ns },
          rules: [
            { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "create", "update", "patch"] },
          ],
        },
        {
          apiVersion: `${rbac}/v1`,
          kind: "RoleBinding",
          metadata: { name: "snapshotter", namespace: ns },
          roleRef: { apiGroup: rbac, kind: "Role", name: "snapshotter" },
          subjects: [{ kind: "ServiceAccount", name: "snapshotter", namespace: ns }],
        },
        {
          apiVersion: "batch/v1",
          kind: "Job",
          metadata: { name: job, namespace: ns },
          spec: {
            backoffLimit: 0,
            template: {
              spec: {
                serviceAccountName: "snapshotter",
                restartPolicy: "Never",
                nodeSelector: { "kubernetes.io/hostname": NODE },
                hostPID: true,
                hostNetwork: true,
                containers: [
                  {
                    name: "aicr",
                    image: image(),
                    command: ["aicr"],
                    args: [...extraArgs, "snapshot", "-o", output],
                    env: [
                      { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
                      ...(agentMode ? [{ name: "AICR_AGENT_MODE", value: "true" }] : []),
                    ],
                    // The image's user is 65534: systemd answers only root on its private socket.
                    securityContext: { privileged: true, runAsUser: 0 },
                    volumeMounts: mounts.map((m) => m.mount),
                  },
                ],
                volumes: mounts.map((m) => m.volume),
              },
            },
          },
        },
      ],
    };
  }

  const podsText = (ns: string) =>
    JSON.stringify(cluster.store.list(resource("pods"), { namespace: ns }).items.map((p) => p.status));

  /** The exit code of a Job's (one) pod's container, as the kubelet reported it. */
  const exitCodeOf = (ns: string, job: string) => {
    const pod = cluster.store
      .list(resource("pods"), { namespace: ns })
      .items.find((p) => p.metadata.labels?.["batch.kubernetes.io/job-name"] === job);
    return pod ? containerStatus(pod)?.state?.terminated?.exitCode : undefined;
  };

  const jobCondition = (ns: string, name: string) =>
    (
      cluster.store.find(resource("jobs"), ns, name)?.status as
        | { conditions?: { type: string; status: string }[] }
        | undefined
    )?.conditions?.find((c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True")?.type;

  test(
    "an operator's own Job (aicr snapshot -o cm://…, AICR_AGENT_MODE=true, its own ServiceAccount and Role) completes; the ConfigMap holds the contract's labels and keys with OS, SystemD, GPU and K8s readings",
    async () => {
      const ns = await freshNamespace(cluster, "operator");
      const objects = operatorObjects(ns, "nightly-snapshot", `cm://${ns}/node-snapshot`, true);
      const k = (args: string[], input?: string) => kubectlAs(env.kubectl, admin, args, input);
      const applied = await k(["apply", "-f", "-"], JSON.stringify(objects));
      expect(applied.code, applied.stderr).toBe(0);
      const done = await untilStore(
        cluster,
        () => jobCondition(ns, "nightly-snapshot"),
        () => `the operator's Job finished; pods: ${podsText(ns)}`,
        STUCK_MS,
      );
      const logs = await k(["logs", "-n", ns, "job/nightly-snapshot"]);
      expect(done, logs.stdout + logs.stderr).toBe("Complete");

      const cm = await untilStore(
        cluster,
        () => cluster.store.find(resource("configmaps"), ns, "node-snapshot"),
        "the ConfigMap the Job wrote",
        STUCK_MS,
      );
      expect(cm.metadata.labels).toEqual({
        "app.kubernetes.io/name": "aicr",
        "app.kubernetes.io/component": "Snapshot",
        "app.kubernetes.io/version": expect.stringMatching(/^\d+\.\d+\.\d+/),
      });
      expect(cm.metadata.ownerReferences).toBeUndefined();
      const data = cm.data as Record<string, string>;
      expect(Object.keys(data).sort()).toEqual(["format", "snapshot.yaml", "timestamp"]);
      expect(data.format).toBe("yaml");
      const doc = parseSnapshot(data["snapshot.yaml"]!, "snapshot.yaml");
      expect(data.timestamp).toBe(doc.metadata.timestamp as string);
      expect(doc.metadata["source-node"]).toBe(NODE);
      expect(reading(doc, "OS", "release")?.ID).toBe("debian");
      expect(reading(doc, "SystemD", "containerd.service")).toMatchObject({
        ActiveState: "active",
        SubState: "running",
      });
      expect(reading(doc, "SystemD", "docker.service")).toMatchObject({ ActiveState: "failed" });
      expect(reading(doc, "GPU", "smi")).toMatchObject({ "gpu-count": 8 });
      expect(reading(doc, "K8s", "server")?.version).toBe(KUBERNETES_VERSION);
      // It wrote as its own ServiceAccount, through the fault proxy.
      const wrote = cluster.log.entries.filter(
        (e) => e.path === `/api/v1/namespaces/${ns}/configmaps/node-snapshot` && e.method === "PATCH",
      );
      expect(wrote.map((e) => [e.user, e.status])).toEqual([
        [`system:serviceaccount:${ns}:snapshotter`, 201],
      ]);
      // Its Role grants ConfigMaps only: what needs cluster reads (the Node, pods, ClusterPolicy) is left
      // out, each with its warning, and the apiserver's version is read.
      expect(measurement(doc, "K8s")?.subtypes.map((x) => x.subtype)).toEqual(["server"]);
      for (const left of [
        '"subtype":"node"',
        '"subtype":"image"',
        '"subtype":"policy"',
        '"collector":"NodeTopology"',
      ])
        expect(logs.stdout).toContain(left);

      // Without AICR_AGENT_MODE the same command is the operator-side `aicr snapshot`: it would deploy
      // an agent Job of its own. In a pod with no kubeconfig it says so before anything else, naming
      // AICR_AGENT_MODE=true as the remedy, and writes nothing.
      const since = cluster.log.entries.at(-1)?.seq ?? 0;
      const plain = operatorObjects(ns, "plain-snapshot", `cm://${ns}/plain-snapshot`, false).items.at(-1)!;
      const appliedPlain = await k(["apply", "-f", "-"], JSON.stringify(plain));
      expect(appliedPlain.code, appliedPlain.stderr).toBe(0);
      const plainDone = await untilStore(
        cluster,
        () => jobCondition(ns, "plain-snapshot"),
        () => `the Job without AICR_AGENT_MODE finished; pods: ${podsText(ns)}`,
        STUCK_MS,
      );
      const plainLogs = await k(["logs", "-n", ns, "job/plain-snapshot"]);
      expect(plainDone).toBe("Failed");
      const inPod =
        "ERROR [INVALID_REQUEST] aicr snapshot runs inside a pod without AICR_AGENT_MODE=true and without a kubeconfig";
      expect(plainLogs.stdout).toContain(inPod);
      expect(plainLogs.stdout).toContain("set AICR_AGENT_MODE=true");
      const asSnapshotter = cluster.log.entries.filter(
        (e) => e.seq > since && e.user === `system:serviceaccount:${ns}:snapshotter`,
      );
      expect(asSnapshotter.filter((e) => e.method !== "GET")).toEqual([]);
      expect(cluster.store.find(resource("configmaps"), ns, "plain-snapshot")).toBeUndefined();

      // Given the namespace, would it deploy a nested agent Job with the pod's in-cluster credentials?
      const nestedSince = cluster.log.entries.at(-1)?.seq ?? 0;
      const nested = operatorObjects(ns, "nested-snapshot", `cm://${ns}/nested-snapshot`, false, [
        "-n",
        ns,
      ]).items.at(-1)!;
      expect((await k(["apply", "-f", "-"], JSON.stringify(nested))).code).toBe(0);
      const nestedDone = await untilStore(
        cluster,
        () => jobCondition(ns, "nested-snapshot"),
        () => `the Job with -n and without AICR_AGENT_MODE finished; pods: ${podsText(ns)}`,
        STUCK_MS,
      );
      const nestedLogs = await k(["logs", "-n", ns, "job/nested-snapshot"]);
      const nestedRequests = cluster.log.entries
        .filter((e) => e.seq > nestedSince && e.user === `system:serviceaccount:${ns}:snapshotter`)
        .map((e) => `${e.method} ${e.path} ${e.status}`);
      // It does not: `aicr snapshot` outside agent mode takes credentials from a kubeconfig only (the pod
      // has none: HOME is /), so it ends before any request — no nested Job, nothing written.
      expect(nestedDone).toBe("Failed");
      expect(nestedLogs.stdout).toContain(inPod);
      expect(nestedRequests).toEqual([]);
      for (const job of ["plain-snapshot", "nested-snapshot"]) expect(exitCodeOf(ns, job), job).toBe(2);
      expect(
        cluster.store
          .list(resource("jobs"), {})
          .items.map((j) => `${j.metadata.namespace}/${j.metadata.name}`)
          .sort(),
      ).toEqual([`${ns}/nested-snapshot`, `${ns}/nightly-snapshot`, `${ns}/plain-snapshot`]);

      const pods = cluster.store.list(resource("pods"), { namespace: ns }).items;
      const ids = (
        await Promise.all(pods.map((p) => podContainerIds(cluster, p.metadata.uid as string)))
      ).flat();
      const deleted = await k(["delete", "--wait=true", "-f", "-"], JSON.stringify(objects));
      expect(deleted.code, deleted.stderr).toBe(0);
      await k([
        "delete",
        "--wait=true",
        "-n",
        ns,
        "job/plain-snapshot",
        "job/nested-snapshot",
        "configmap/node-snapshot",
        "--ignore-not-found",
      ]);
      await untilStore(
        cluster,
        () => cluster.store.list(resource("pods"), { namespace: ns }).items.length === 0,
        "the operator's pods gone",
        STUCK_MS,
      );
      await untilStopped(cluster, ids, "the operator's sandboxes and containers stopped");
    },
    TEST_MS,
  );
  test(
    "the conformance checks' probe pods on the real node: aicr probe in the project's image, as nobody, read-only, no capabilities, no token",
    async () => {
      const ns = await freshNamespace(cluster, "probe");
      const probe = (name: string, args: string[]) =>
        cluster.store.create(resource("pods"), {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name, namespace: ns },
          spec: {
            nodeName: NODE,
            restartPolicy: "Never",
            automountServiceAccountToken: false,
            securityContext: PROBE_POD_SECURITY,
            containers: [
              {
                name: "probe",
                image: image(),
                command: ["aicr"],
                args: ["probe", ...args],
                securityContext: PROBE_CONTAINER_SECURITY,
              },
            ],
          },
        });
      // the no-claim isolation probe, the claim probe (this node has no /dev/nvidia*), a workload's sleep
      await probe("none", ["devices", "--expect", "none"]);
      await probe("some", ["devices"]);
      await probe("sleep", ["sleep", "1"]);
      const exitOf = (name: string) =>
        untilStore(
          cluster,
          () => {
            const pod = cluster.store.find(resource("pods"), ns, name);
            const t = pod?.status?.containerStatuses?.[0]?.state?.terminated;
            const phase = pod?.status?.phase;
            // the container's end and the pod's phase may reach the store in two updates
            return t && (phase === "Succeeded" || phase === "Failed")
              ? { phase, exitCode: t.exitCode }
              : undefined;
          },
          `probe pod ${name} ended`,
          STUCK_MS,
        );
      expect(await exitOf("none")).toEqual({ phase: "Succeeded", exitCode: 0 });
      expect(await exitOf("some")).toEqual({ phase: "Failed", exitCode: 1 });
      expect(await exitOf("sleep")).toEqual({ phase: "Succeeded", exitCode: 0 });
    },
    TEST_MS,
  );
});
