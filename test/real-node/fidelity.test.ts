/**
 * What a pod sees on the real node (test/cluster/real/node), read from the host through each
 * container's /proc/<pid> (root, environ, status, mountinfo): the facts behind the fidelity table in
 * test/cluster/README.md, where the process kubelet's differences are listed. Real backend only.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import type { KObject } from "../cluster/objects.ts";
import { realNodeMissing } from "../cluster/real/node/node.ts";
import { resource } from "../cluster/resources.ts";
import { BACKENDS, startTestCluster, type TestCluster } from "../cluster/testbed.ts";
import { until, untilStore } from "../support/until.ts";

const NODE = "real-fidelity";
const SETUP_MS = 300_000;
const SA = "var/run/secrets/kubernetes.io/serviceaccount";

describe.skipIf(!BACKENDS.includes("real"))("[real] what pods see on the real node", () => {
  let cluster: TestCluster;
  const pod = (name: string) => cluster.store.find(resource("pods"), "default", name);
  const create = (name: string, spec: KObject["spec"]) =>
    cluster.store.create(resource("pods"), {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: "default" },
      spec: { nodeName: NODE, ...spec },
    });
  const ticker = (args: string[] = ["-n", "0", "-every", "1s"]) => ({
    name: "t",
    image: cluster.realNode!.images.ticker,
    args,
  });
  /** The host PID of a pod's ticker process (its cgroup names the pod's UID). */
  const pidOf = (name: string): number => {
    const uid = pod(name)!.metadata.uid!;
    for (const p of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
      try {
        const cg = readFileSync(`/proc/${p}/cgroup`, "utf8");
        if (
          (cg.includes(uid) || cg.includes(uid.replaceAll("-", "_"))) &&
          readFileSync(`/proc/${p}/cmdline`, "utf8").startsWith("/ticker")
        )
          return Number(p);
      } catch {}
    }
    throw new Error(`no ticker process of pod ${name}`);
  };
  const env = (pid: number) =>
    Object.fromEntries(
      readFileSync(`/proc/${pid}/environ`, "utf8")
        .split("\0")
        .filter(Boolean)
        .map((kv) => kv.split(/=(.*)/s).slice(0, 2)),
    );
  const status = (pid: number, key: string) =>
    readFileSync(`/proc/${pid}/status`, "utf8")
      .split("\n")
      .find((l) => l.startsWith(`${key}:`))
      ?.split(/\s+/)[1];

  beforeAll(async () => {
    const missing = realNodeMissing();
    if (missing) throw new Error(`the real-node suite cannot run here: ${missing}`);
    cluster = await startTestCluster("real", { realNode: { name: NODE } });
    await create("plain", { containers: [ticker()] });
    await create("host", {
      hostPID: true,
      hostNetwork: true,
      containers: [{ ...ticker(), securityContext: { privileged: true, runAsUser: 0 } }],
    });
    await untilStore(
      cluster,
      () => ["plain", "host"].every((n) => pod(n)?.status?.phase === "Running"),
      "both pods running",
      60_000,
    );
  }, SETUP_MS);
  afterAll(() => cluster?.stop(), SETUP_MS);

  test("env: the kubernetes Service as service links, HOSTNAME, HOME; the image's PATH", () => {
    const e = env(pidOf("plain"));
    expect(e).toMatchObject({
      KUBERNETES_SERVICE_HOST: "10.96.0.1",
      KUBERNETES_SERVICE_PORT: "443",
      KUBERNETES_SERVICE_PORT_HTTPS: "443",
      KUBERNETES_PORT: "tcp://10.96.0.1:443",
      KUBERNETES_PORT_443_TCP_ADDR: "10.96.0.1",
      HOSTNAME: "plain",
      HOME: "/",
      PATH: "/",
    });
    // A hostNetwork pod's HOSTNAME is the node's hostname.
    expect(env(pidOf("host")).HOSTNAME).toBe(NODE);
  });

  test("the ServiceAccount volume: ..data symlinks into a timestamped directory on a read-only tmpfs", () => {
    for (const [name, tokenMode] of [
      ["plain", 0o644],
      ["host", 0o600], // runAsUser set: the token is that user's alone
    ] as const) {
      const dir = `/proc/${pidOf(name)}/root/${SA}`;
      expect(readlinkSync(join(dir, "token"))).toBe("..data/token");
      expect(readlinkSync(join(dir, "..data"))).toMatch(/^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\d+$/);
      expect(lstatSync(join(dir, "..data/token")).mode & 0o777).toBe(tokenMode);
      expect(lstatSync(join(dir, "..data/ca.crt")).mode & 0o777).toBe(0o644);
      const mount = readFileSync(`/proc/${pidOf(name)}/mountinfo`, "utf8")
        .split("\n")
        .find((l) => l.includes(`/${SA} `))!;
      expect(mount).toMatch(/ ro,.* - tmpfs /);
    }
  });

  test("capabilities, user, devices and /proc: a default container against a privileged hostPID one", () => {
    const plain = pidOf("plain");
    const host = pidOf("host");
    expect(status(plain, "Uid")).toBe("65534"); // the image's user
    expect(status(plain, "CapEff")).toBe("0000000000000000");
    expect(status(plain, "CapBnd")).toBe("00000000a80425fb"); // containerd's default set
    expect(status(host, "CapEff")).toBe(
      readFileSync("/proc/self/status", "utf8").match(/CapBnd:\s+(\S+)/)![1],
    );
    expect(readdirSync(`/proc/${plain}/root/dev`).length).toBeLessThan(20);
    expect(readdirSync(`/proc/${host}/root/dev`)).toContain("kmsg");
    // Its own PID namespace: the container's process is PID 1; with hostPID, the node's init is.
    expect(readFileSync(`/proc/${plain}/root/proc/1/cmdline`, "utf8")).toStartWith("/ticker");
    expect(readFileSync(`/proc/${host}/root/proc/1/cmdline`, "utf8")).toContain("aicr-node\0init");
    // The nvidia-smi stand-in, merged with CRI's own mounts (/etc/hosts, /dev/termination-log).
    const mounts = readFileSync(`/proc/${plain}/mountinfo`, "utf8");
    for (const m of [" /usr/bin/nvidia-smi ro,", " /etc/hosts ", " /dev/termination-log "])
      expect(mounts).toContain(m);
  });

  test("addresses: a pod on the node's bridge, a hostNetwork pod on the node's", () => {
    const node = cluster.realNode!.node;
    expect(pod("plain")!.status.podIP).toStartWith(node.podCIDR.replace(/0\/24$/, ""));
    expect(pod("plain")!.status.hostIP).toBe(node.nodeIP);
    expect(pod("host")!.status.podIP).toBe(node.nodeIP);
  });

  test("restarts: OnFailure restarts with back-off, restartCount and lastState; FallbackToLogsOnError", async () => {
    await create("crashy", {
      restartPolicy: "OnFailure",
      containers: [
        { ...ticker(["-n", "1", "-exit", "3"]), terminationMessagePolicy: "FallbackToLogsOnError" },
      ],
    });
    await untilStore(
      cluster,
      () => (pod("crashy")?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 2,
      "two restarts",
      90_000,
    );
    const s = pod("crashy")!.status.containerStatuses[0];
    expect(s.lastState.terminated).toMatchObject({ exitCode: 3, reason: "Error", message: "tick 1\n" });
  }, 120_000);

  test("the device plugin registers again after a kubelet restart; a GPU pod gets its devices' IDs", async () => {
    const node = cluster.realNode!.node;
    const registrations = () =>
      (node.tail("device-plugin", 1000).match(/registered nvidia\.com\/gpu/g) ?? []).length;
    const before = registrations();
    node.restartKubelet();
    await until(() => registrations() > before, "the device plugin registered again", 60_000);
    await create("gpu", {
      restartPolicy: "Never",
      containers: [{ ...ticker(["-n", "1"]), resources: { limits: { "nvidia.com/gpu": "2" } } }],
    });
    await untilStore(cluster, () => pod("gpu")?.status?.phase === "Succeeded", "the GPU pod done", 60_000);
    // The container's env came from the plugin's Allocate: two of its fake devices.
    const id = pod("gpu")!.status.containerStatuses[0].containerID.replace("containerd://", "");
    const info = await node.ctr(["--namespace", "k8s.io", "containers", "info", id]);
    expect(info.stdout).toMatch(/"NVIDIA_VISIBLE_DEVICES=fake-gpu-\d,fake-gpu-\d"/);
  }, 120_000);

  test("deletion: SIGTERM, then SIGKILL after terminationGracePeriodSeconds", async () => {
    await create("stubborn", {
      terminationGracePeriodSeconds: 3,
      containers: [ticker(["-n", "0", "-every", "500ms", "-ignore-term"])],
    });
    await untilStore(cluster, () => pod("stubborn")?.status?.phase === "Running", "stubborn running", 60_000);
    const pid = pidOf("stubborn");
    const started = performance.now();
    await cluster.store.delete(resource("pods"), "default", "stubborn");
    await until(() => !readdirSync("/proc").includes(String(pid)), "the process killed", 30_000);
    const took = performance.now() - started;
    expect(took).toBeGreaterThan(2500);
    expect(took).toBeLessThan(15_000);
  }, 90_000);
});
