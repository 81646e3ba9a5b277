/**
 * The DRA driver stand-in (../dra.ts) on the real control plane: the real kube-scheduler allocates real
 * resource.k8s.io/v1 ResourceClaims from the stand-in's ResourceSlices, the resourceclaim controller
 * releases them, and the process kubelet (kubelet-dra.ts) gives a container holding an allocated GPU
 * its /dev/nvidia* device nodes while a pod without a claim sees none. Then each broken state a DRA
 * check must catch, and the driver absent. Every wait is on a condition with a bound.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { useCluster } from "../../support/cluster.ts";
import { untilStore } from "../../support/until.ts";
import {
  DRA_CONTROLLER,
  DRA_DRIVER_NS,
  DRA_KUBELET_PLUGIN,
  DRA_RESOURCES,
  type DraDriverState,
  draClusterOptions,
  GPU_DEVICE_CLASS,
  gpuClaim,
  gpuUuid,
  installDraDriver,
  NVIDIA_GPU_DRIVER,
} from "../dra.ts";
import { HANGING_TAG } from "../gpu-operator.ts";
import { node } from "../nodes.ts";
import type { KObject } from "../objects.ts";
import { resource } from "../resources.ts";
import { BACKENDS, type TestCluster } from "../testbed.ts";

/** An image the process runtime runs as /bin/sh: the container's command is `sh -c <script>`. */
const PROBE = "example.com/dra-probe:1";
/** An image that runs until its pod is deleted (gpu-operator.ts operandRuntime): a GPU held. */
const HOLDER = `example.com/gpu-holder:${HANGING_TAG}`;
const LIST_GPUS = 'ls /dev/nvidia* && echo "DRA GPU allocation successful"';
const NO_GPU =
  'if ls /dev/nvidia* 2>/dev/null; then echo "FAIL: GPU visible without claim"; exit 1; fi; echo "PASS: no GPU visible"';
const NS = "dra-test";
const GPU_NODE = "gpu-node-1";
const T = 120_000;
const WAIT = 90_000;

const PODS = resource("pods");
const { resourceClaims, resourceSlices, deviceClasses, deployments, daemonSets } = DRA_RESOURCES;

const options = () =>
  draClusterOptions({
    nodes: [node(GPU_NODE, { gpus: 2 }), node("cpu-node-1")],
    images: { [PROBE]: "/bin/sh" },
  });

interface PodOptions {
  /** The ResourceClaim the pod holds (entry `gpu`, named in the first container's resources.claims). */
  claim?: string;
  nodeName?: string;
  image?: string;
  script?: string;
  /** More containers, none naming the claim. */
  plain?: Record<string, string>;
}

function pod(name: string, o: PodOptions = {}): KObject {
  const container = (cname: string, script: string, claims: boolean) => ({
    name: cname,
    image: o.image ?? PROBE,
    ...(o.image ? {} : { command: ["sh", "-c", script] }),
    ...(claims ? { resources: { claims: [{ name: "gpu" }] } } : {}),
  });
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: NS },
    spec: {
      restartPolicy: "Never",
      tolerations: [{ operator: "Exists" }],
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
      ...(o.claim ? { resourceClaims: [{ name: "gpu", resourceClaimName: o.claim }] } : {}),
      containers: [
        container("gpu-test", o.script ?? LIST_GPUS, Boolean(o.claim)),
        ...Object.entries(o.plain ?? {}).map(([n, s]) => container(n, s, false)),
      ],
    },
  };
}

async function kubectl(cluster: TestCluster, ...args: string[]): Promise<string> {
  const p = Bun.spawn([await cluster.kubectl(), "--kubeconfig", cluster.kubeconfigFor("admin"), ...args], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  if (code !== 0) throw new Error(`kubectl ${args.join(" ")}: exit ${code}: ${err}`);
  return out;
}

const podOf = (cluster: TestCluster, name: string) => cluster.store.find(PODS, NS, name);
const claimOf = (cluster: TestCluster, name: string) => cluster.store.find(resourceClaims, NS, name);
const scheduled = (p: KObject | undefined) =>
  (p?.status?.conditions ?? []).find((c: { type: string }) => c.type === "PodScheduled");

async function createNamespace(cluster: TestCluster): Promise<void> {
  await cluster.store.create(resource("namespaces"), {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: NS },
  });
  await untilStore(
    cluster,
    () => cluster.store.find(resource("serviceaccounts"), NS, "default"),
    `the default ServiceAccount of ${NS}`,
  );
}

async function untilPhase(cluster: TestCluster, name: string, ...phases: string[]): Promise<KObject> {
  return untilStore(
    cluster,
    () => {
      const p = podOf(cluster, name);
      return phases.includes(p?.status?.phase) ? p : undefined;
    },
    () => `pod ${name} in ${phases.join("/")}; now ${JSON.stringify(podOf(cluster, name)?.status)}`,
    WAIT,
  );
}

/** Waits for the scheduler's verdict that a pod cannot go anywhere, and returns its message. */
async function untilUnschedulable(cluster: TestCluster, name: string): Promise<string> {
  const c = await untilStore(
    cluster,
    () => {
      const s = scheduled(podOf(cluster, name));
      return s?.status === "False" && s.reason === "Unschedulable" ? s : undefined;
    },
    () => `pod ${name} Unschedulable; now ${JSON.stringify(podOf(cluster, name)?.status)}`,
    WAIT,
  );
  return c.message;
}

/**
 * The allocation of a claim as it was once reserved for the pod (with the resourceclaim controller the
 * allocation goes as soon as the pod is done, so it is caught on the mirror's events, not read after).
 */
function untilReservedFor(
  cluster: TestCluster,
  claim: string,
  podName: string,
): Promise<{ device: string; driver: string; pool: string; request: string }[]> {
  return untilStore(
    cluster,
    () => {
      const c = claimOf(cluster, claim);
      const uid = podOf(cluster, podName)?.metadata.uid;
      const reserved = (c?.status?.reservedFor ?? []).some(
        (r: { resource: string; name: string; uid: string }) =>
          r.resource === "pods" && r.name === podName && r.uid === uid,
      );
      return reserved ? c?.status?.allocation?.devices?.results : undefined;
    },
    () =>
      `claim ${claim} allocated and reserved for ${podName}; now ${JSON.stringify(claimOf(cluster, claim)?.status)}`,
    WAIT,
  );
}

const deviceNodes = (log: string) => log.split("\n").filter((l) => l.startsWith("/dev/nvidia"));

describe.skipIf(!BACKENDS.includes("real"))("[real] DRA: the stand-in driver, 2 GPUs on one node", () => {
  const cluster = useCluster("real", options());
  beforeAll(async () => {
    await installDraDriver(cluster());
    await createNamespace(cluster());
  }, T);

  test(
    "resource.k8s.io/v1 is served (the beta versions are not); the driver's objects are as a check reads them",
    async () => {
      const c = cluster();
      const group = JSON.parse(await kubectl(c, "get", "--raw", "/apis/resource.k8s.io"));
      expect(group.versions.map((v: { version: string }) => v.version)).toEqual(["v1"]);
      expect(c.store.find(deviceClasses, undefined, GPU_DEVICE_CLASS)?.spec.selectors).toEqual([
        { cel: { expression: 'device.driver == "gpu.nvidia.com"' } },
      ]);
      const slices = c.store.list(resourceSlices).items;
      expect(slices.map((s) => [s.spec.driver, s.spec.nodeName, s.spec.pool.name])).toEqual([
        [NVIDIA_GPU_DRIVER, GPU_NODE, GPU_NODE],
      ]);
      const devices = slices[0]!.spec.devices;
      expect(devices.map((d: { name: string }) => d.name)).toEqual(["gpu-0", "gpu-1"]);
      expect(devices[1].attributes.uuid).toEqual({ string: gpuUuid(GPU_NODE, 1) });
      expect(devices[1].attributes.productName.string).toContain("H100");
      const deployment = c.store.get(deployments, DRA_DRIVER_NS, DRA_CONTROLLER);
      expect(deployment.status.availableReplicas).toBe(1);
      const ds = c.store.get(daemonSets, DRA_DRIVER_NS, DRA_KUBELET_PLUGIN);
      expect([ds.status.desiredNumberScheduled, ds.status.numberReady]).toEqual([1, 1]);
      const pods = c.store.list(PODS, { namespace: DRA_DRIVER_NS }).items;
      expect(pods.map((p) => p.status?.phase)).toEqual(["Running", "Running"]);
      const plugin = pods.find(
        (p) => p.metadata.labels?.["app.kubernetes.io/component"] === "kubelet-plugin",
      );
      expect(plugin?.spec.nodeName).toBe(GPU_NODE);
    },
    T,
  );

  test(
    "the scheduler allocates the claim; the pod sees its GPU's device nodes, then the claim is released",
    async () => {
      const c = cluster();
      await c.store.create(resourceClaims, gpuClaim(NS, "gpu-claim-1"));
      await c.store.create(PODS, pod("dra-gpu-test-1", { claim: "gpu-claim-1" }));
      const results = await untilReservedFor(c, "gpu-claim-1", "dra-gpu-test-1");
      expect(results).toHaveLength(1);
      const [r] = results;
      expect({ driver: r!.driver, pool: r!.pool, request: r!.request }).toEqual({
        driver: NVIDIA_GPU_DRIVER,
        pool: GPU_NODE,
        request: "gpu",
      });
      const done = await untilPhase(c, "dra-gpu-test-1", "Succeeded", "Failed");
      expect(done.status.phase).toBe("Succeeded");
      expect(done.spec.nodeName).toBe(GPU_NODE);
      const log = await kubectl(c, "logs", "-n", NS, "dra-gpu-test-1");
      const index = r!.device.replace("gpu-", "");
      expect(deviceNodes(log)).toEqual([
        "/dev/nvidia-uvm",
        "/dev/nvidia-uvm-tools",
        `/dev/nvidia${index}`,
        "/dev/nvidiactl",
      ]);
      expect(log).toContain("DRA GPU allocation successful");
      // The resourceclaim controller: a done pod's reservation lifted, the claim deallocated and its
      // delete protection gone, so the claim can be deleted.
      await untilStore(
        c,
        () => {
          const claim = claimOf(c, "gpu-claim-1");
          return (
            claim &&
            !claim.status?.allocation &&
            (claim.status?.reservedFor ?? []).length === 0 &&
            (claim.metadata.finalizers ?? []).length === 0
          );
        },
        () => `gpu-claim-1 released; now ${JSON.stringify(claimOf(c, "gpu-claim-1"))}`,
        WAIT,
      );
      await c.store.delete(resourceClaims, NS, "gpu-claim-1");
      await untilStore(c, () => !claimOf(c, "gpu-claim-1"), "gpu-claim-1 gone", WAIT);
    },
    T,
  );

  test(
    "a claim-less pod on the GPU node sees no /dev/nvidia*, nor does a claim pod's container that does not name the claim",
    async () => {
      const c = cluster();
      await c.store.create(PODS, pod("dra-no-claim", { nodeName: GPU_NODE, script: NO_GPU }));
      await c.store.create(resourceClaims, gpuClaim(NS, "gpu-claim-2"));
      await c.store.create(
        PODS,
        pod("dra-two-containers", { claim: "gpu-claim-2", plain: { plain: NO_GPU } }),
      );
      const isolated = await untilPhase(c, "dra-no-claim", "Succeeded", "Failed");
      expect(isolated.status.phase).toBe("Succeeded");
      expect(await kubectl(c, "logs", "-n", NS, "dra-no-claim")).toBe("PASS: no GPU visible\n");
      const two = await untilPhase(c, "dra-two-containers", "Succeeded", "Failed");
      expect(two.status.phase).toBe("Succeeded");
      expect(
        deviceNodes(await kubectl(c, "logs", "-n", NS, "dra-two-containers", "-c", "gpu-test")),
      ).toHaveLength(4);
      expect(await kubectl(c, "logs", "-n", NS, "dra-two-containers", "-c", "plain")).toBe(
        "PASS: no GPU visible\n",
      );
    },
    T,
  );

  test(
    "a claim pod bound past the scheduler (spec.nodeName) never starts: its claim is not allocated for it",
    async () => {
      const c = cluster();
      await c.store.create(resourceClaims, gpuClaim(NS, "gpu-claim-3"));
      await c.store.create(PODS, pod("dra-pinned", { claim: "gpu-claim-3", nodeName: GPU_NODE }));
      const event = await untilStore(
        c,
        () =>
          c.store
            .list(resource("events"), { namespace: NS })
            .items.find(
              (e) => e.involvedObject?.name === "dra-pinned" && e.reason === "FailedPrepareDynamicResources",
            ),
        "the FailedPrepareDynamicResources event of dra-pinned",
        WAIT,
      );
      expect(event.type).toBe("Warning");
      expect(event.message).toMatch(
        /^Failed to prepare dynamic resources: prepare dynamic resources: pod dra-pinned \(.+\) is not allowed to use ResourceClaim gpu-claim-3 \(.+\)$/,
      );
      const p = podOf(c, "dra-pinned")!;
      expect(p.status.phase).toBe("Pending");
      expect(p.status.containerStatuses?.[0]?.state).toEqual({ waiting: { reason: "ContainerCreating" } });
      expect(claimOf(c, "gpu-claim-3")?.status?.allocation).toBeUndefined();
      await c.store.delete(PODS, NS, "dra-pinned");
      await untilStore(c, () => !podOf(c, "dra-pinned"), "dra-pinned gone", WAIT);
    },
    T,
  );

  test(
    "more claims than devices: the extra pod is Unschedulable until a holder goes, then gets the freed GPU",
    async () => {
      const c = cluster();
      for (const i of [1, 2]) {
        await c.store.create(resourceClaims, gpuClaim(NS, `hold-${i}`));
        await c.store.create(PODS, pod(`holder-${i}`, { claim: `hold-${i}`, image: HOLDER }));
      }
      await untilPhase(c, "holder-1", "Running");
      await untilPhase(c, "holder-2", "Running");
      const held = [1, 2].map(
        (i) => claimOf(c, `hold-${i}`)?.status?.allocation?.devices?.results?.[0]?.device,
      );
      expect([...held].sort()).toEqual(["gpu-0", "gpu-1"]);

      await c.store.create(resourceClaims, gpuClaim(NS, "gpu-claim-4"));
      await c.store.create(PODS, pod("dra-extra", { claim: "gpu-claim-4" }));
      const message = await untilUnschedulable(c, "dra-extra");
      expect(message).toContain("cannot allocate all claims");
      expect(podOf(c, "dra-extra")?.spec.nodeName).toBeUndefined();
      expect(claimOf(c, "gpu-claim-4")?.status?.allocation).toBeUndefined();

      await c.store.delete(PODS, NS, "holder-1");
      const done = await untilPhase(c, "dra-extra", "Succeeded", "Failed");
      expect(done.status.phase).toBe("Succeeded");
      const index = held[0]!.replace("gpu-", "");
      expect(deviceNodes(await kubectl(c, "logs", "-n", NS, "dra-extra"))).toContain(`/dev/nvidia${index}`);
      await c.store.delete(PODS, NS, "holder-2");
    },
    T,
  );
});

/** What each broken (or absent) state shows a check, read from the cluster once installed. */
const BROKEN: { state: DraDriverState; expectIt(c: TestCluster): void }[] = [
  {
    state: "noResourceSlices",
    expectIt(c) {
      expect(c.store.list(resourceSlices).items).toEqual([]);
      expect(c.store.get(deployments, DRA_DRIVER_NS, DRA_CONTROLLER).status.availableReplicas).toBe(1);
      expect(c.store.get(daemonSets, DRA_DRIVER_NS, DRA_KUBELET_PLUGIN).status.numberReady).toBe(1);
    },
  },
  {
    state: "controllerScaledToZero",
    expectIt(c) {
      const d = c.store.get(deployments, DRA_DRIVER_NS, DRA_CONTROLLER);
      expect([d.spec.replicas, d.status.availableReplicas ?? 0]).toEqual([0, 0]);
      expect(c.store.get(daemonSets, DRA_DRIVER_NS, DRA_KUBELET_PLUGIN).status.numberReady).toBe(1);
      expect(c.store.list(resourceSlices).items).toHaveLength(1);
    },
  },
  {
    state: "controllerUnavailable",
    expectIt(c) {
      const d = c.store.get(deployments, DRA_DRIVER_NS, DRA_CONTROLLER);
      expect([d.spec.replicas, d.status.availableReplicas ?? 0, d.status.unavailableReplicas]).toEqual([
        1, 0, 1,
      ]);
      expect(c.store.get(daemonSets, DRA_DRIVER_NS, DRA_KUBELET_PLUGIN).status.numberReady).toBe(1);
    },
  },
  {
    state: "pluginNotReady",
    expectIt(c) {
      const ds = c.store.get(daemonSets, DRA_DRIVER_NS, DRA_KUBELET_PLUGIN);
      expect([ds.status.desiredNumberScheduled, ds.status.numberReady]).toEqual([1, 0]);
      expect(c.store.get(deployments, DRA_DRIVER_NS, DRA_CONTROLLER).status.availableReplicas).toBe(1);
    },
  },
  {
    state: "absent",
    expectIt(c) {
      expect(c.store.find(resource("namespaces"), undefined, DRA_DRIVER_NS)).toBeUndefined();
      expect(c.store.list(deviceClasses).items).toEqual([]);
      expect(c.store.list(resourceSlices).items).toEqual([]);
    },
  },
];

for (const { state, expectIt } of BROKEN)
  describe.skipIf(!BACKENDS.includes("real"))(`[real] DRA: the stand-in driver, ${state}`, () => {
    const cluster = useCluster("real", options());
    beforeAll(async () => {
      await installDraDriver(cluster(), { state });
      await createNamespace(cluster());
    }, T);

    test(
      state === "noResourceSlices" || state === "absent"
        ? "what a check reads; a claim pod is Unschedulable"
        : "what a check reads",
      async () => {
        const c = cluster();
        expectIt(c);
        if (state !== "noResourceSlices" && state !== "absent") return;
        await c.store.create(resourceClaims, gpuClaim(NS, "gpu-claim"));
        await c.store.create(PODS, pod("dra-gpu-test", { claim: "gpu-claim" }));
        const message = await untilUnschedulable(c, "dra-gpu-test");
        // 1.36.3's texts: "0/2 nodes are available: request gpu: device class gpu.nvidia.com does not
        // exist. …", and "0/2 nodes are available: 2 cannot allocate all claims. …".
        expect(message).toMatch(
          state === "absent" ? /device class gpu\.nvidia\.com does not exist/ : /cannot allocate all claims/,
        );
      },
      T,
    );
  });
