import { describe, expect, test } from "bun:test";
import { nameWithRunId } from "../../../../src/run/names.ts";
import {
  gkeInterfaces,
  gkeTcpxoDevices,
  launcherSelector,
  type NcclRun,
  TRAINJOB_NAME_MAX,
  trainingRuntime,
  trainJob,
  trainJobName,
} from "../../../../src/validate/checks/_nccl-templates.ts";

const RUN: NcclRun = {
  namespace: "aicr-nccl-all-reduce-bw-R",
  runtimeName: "nccl-all-reduce-runtime-R",
  trainJobName: "nccl-allreduce-tj-R",
  labels: { "aicr.run/run-id": "R" },
  image: "registry.example/nccl-tests:2.16",
  gpusPerNode: 8,
  workers: 2,
};

/** The golden's ssh-keys init container: the same in both jobs but for its script. */
const sshKeys = (script: string) => ({
  name: "ssh-keys",
  image: "registry.example/nccl-tests:2.16",
  command: ["/bin/sh", "-c", script],
  volumeMounts: [
    { name: "mpi-ssh-auth", mountPath: "/tmp/mpi-keys", readOnly: true },
    { name: "ssh-config", mountPath: "/root/.ssh" },
  ],
});

/** The EKS TrainingRuntime with 32 EFA adapters per node, as the builder must produce it. */
const EKS_EFA_GOLDEN = {
  apiVersion: "trainer.kubeflow.org/v1alpha1",
  kind: "TrainingRuntime",
  metadata: {
    name: "nccl-all-reduce-runtime-R",
    namespace: "aicr-nccl-all-reduce-bw-R",
    labels: { "aicr.run/run-id": "R", "trainer.kubeflow.org/framework": "mpi" },
  },
  spec: {
    mlPolicy: {
      mpi: {
        mpiImplementation: "OpenMPI",
        numProcPerNode: 8,
        runLauncherAsNode: false,
        sshAuthMountPath: "/tmp/mpi-keys",
      },
    },
    template: {
      spec: {
        network: { enableDNSHostnames: true, publishNotReadyAddresses: true },
        successPolicy: { operator: "All", targetReplicatedJobs: ["launcher"] },
        replicatedJobs: [
          {
            name: "launcher",
            replicas: 1,
            template: {
              spec: {
                template: {
                  metadata: { labels: { "aicr.run/run-id": "R" } },
                  spec: {
                    tolerations: [{ operator: "Exists" }],
                    initContainers: [
                      sshKeys(
                        "set -e\nmkdir -p /root/.ssh\ncp /tmp/mpi-keys/id_rsa /root/.ssh/id_rsa\ncp /tmp/mpi-keys/authorized_keys /root/.ssh/authorized_keys\nchmod 700 /root/.ssh\nchmod 600 /root/.ssh/id_rsa /root/.ssh/authorized_keys",
                      ),
                    ],
                    containers: [
                      {
                        name: "node",
                        image: "registry.example/nccl-tests:2.16",
                        command: [
                          "/opt/amazon/openmpi/bin/mpirun",
                          "-np",
                          "16",
                          "--allow-run-as-root",
                          "--bind-to",
                          "none",
                          "--mca",
                          "plm_rsh_agent",
                          "ssh",
                          "--mca",
                          "plm_rsh_args",
                          "-o StrictHostKeyChecking=no -o ConnectionAttempts=10",
                          "-x",
                          "LD_LIBRARY_PATH",
                          "-x",
                          "PATH",
                          "-x",
                          "NCCL_DEBUG=WARN",
                          "-x",
                          "FI_PROVIDER=efa",
                          "-x",
                          "FI_EFA_USE_DEVICE_RDMA=1",
                          "-x",
                          "FI_EFA_FORK_SAFE=1",
                          "-x",
                          "NCCL_SOCKET_IFNAME=eth0",
                          "-x",
                          "NCCL_IGNORE_DISABLED_P2P=1",
                          "/opt/nccl-tests/build/all_reduce_perf",
                          "-b",
                          "1K",
                          "-e",
                          "16G",
                          "-f",
                          "2",
                          "-g",
                          "1",
                        ],
                        resources: { limits: { cpu: "2", memory: "128Mi" } },
                        volumeMounts: [{ name: "ssh-config", mountPath: "/root/.ssh" }],
                      },
                    ],
                    volumes: [{ name: "ssh-config", emptyDir: {} }],
                  },
                },
              },
            },
          },
          {
            name: "node",
            template: {
              spec: {
                template: {
                  metadata: { labels: { "aicr.run/run-id": "R" } },
                  spec: {
                    nodeSelector: { "node.kubernetes.io/instance-type": "p5.48xlarge" },
                    tolerations: [{ operator: "Exists" }],
                    initContainers: [
                      sshKeys(
                        "set -e\nmkdir -p /root/.ssh\ncp /tmp/mpi-keys/authorized_keys /root/.ssh/authorized_keys\nchmod 700 /root/.ssh\nchmod 600 /root/.ssh/authorized_keys",
                      ),
                    ],
                    containers: [
                      {
                        name: "node",
                        image: "registry.example/nccl-tests:2.16",
                        command: ["/usr/sbin/sshd", "-De"],
                        resources: {
                          requests: { "nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32" },
                          limits: { "nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32" },
                        },
                        securityContext: { capabilities: { add: ["IPC_LOCK"] } },
                        volumeMounts: [
                          { name: "ssh-config", mountPath: "/root/.ssh" },
                          { name: "dshm", mountPath: "/dev/shm" },
                        ],
                      },
                    ],
                    volumes: [
                      { name: "ssh-config", emptyDir: {} },
                      { name: "dshm", emptyDir: { medium: "Memory" } },
                    ],
                  },
                },
              },
            },
          },
        ],
      },
    },
  },
};

type Obj = Record<string, any>;
const template = (rt: Obj, job: "launcher" | "node"): Obj =>
  rt.spec.template.spec.replicatedJobs.find((j: Obj) => j.name === job).template.spec.template;

describe("EKS", () => {
  test("with EFA: the golden object (the operator's image everywhere, p5 selector, EFA requested, 16G)", () => {
    expect(trainingRuntime(RUN, { platform: "eks", instanceType: "p5.48xlarge", efa: 32 })).toEqual(
      EKS_EFA_GOLDEN,
    );
  });

  test("without EFA: no EFA request and the largest message 4G; nothing else changes", () => {
    const want: Obj = structuredClone(EKS_EFA_GOLDEN);
    const worker = template(want, "node").spec.containers[0];
    delete worker.resources.requests["vpc.amazonaws.com/efa"];
    delete worker.resources.limits["vpc.amazonaws.com/efa"];
    const cmd: string[] = template(want, "launcher").spec.containers[0].command;
    cmd[cmd.indexOf("-e") + 1] = "4G";
    expect(trainingRuntime(RUN, { platform: "eks", instanceType: "p5.48xlarge", efa: 0 })).toEqual(
      want as never,
    );
  });

  test("the run's --node-selector goes on the launcher only", () => {
    const rt = trainingRuntime(
      { ...RUN, launcherNodeSelector: { pool: "system" } },
      { platform: "eks", instanceType: "p5.48xlarge", efa: 0 },
    );
    expect(template(rt, "launcher").spec.nodeSelector).toEqual({ pool: "system" });
    expect(template(rt, "node").spec.nodeSelector).toEqual({
      "node.kubernetes.io/instance-type": "p5.48xlarge",
    });
  });
});

describe("GKE (TCPXO)", () => {
  const networks = Array.from({ length: 8 }, (_, i) => `demo-gpu-nic-${i}`);
  const rt = trainingRuntime(RUN, { platform: "gke", networks });

  test("the worker: accelerator selector, gpu toleration, the TCPXO sidecar and its device and network annotations", () => {
    const worker = template(rt, "node");
    expect(worker.metadata.annotations).toEqual({
      "devices.gke.io/container.tcpxo-daemon": gkeTcpxoDevices(8),
      "networking.gke.io/default-interface": "eth0",
      "networking.gke.io/interfaces": gkeInterfaces(networks),
    });
    expect(JSON.parse(worker.metadata.annotations["networking.gke.io/interfaces"])).toEqual([
      { interfaceName: "eth0", network: "default" },
      ...networks.map((network, i) => ({ interfaceName: `eth${i + 1}`, network })),
    ]);
    expect(gkeTcpxoDevices(2)).toBe(
      "- path: /dev/nvidia0\n- path: /dev/nvidia1\n- path: /dev/nvidiactl\n- path: /dev/nvidia-uvm\n- path: /dev/dmabuf_import_helper\n",
    );
    expect(worker.spec.nodeSelector).toEqual({ "cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb" });
    expect(worker.spec.tolerations).toEqual([
      { operator: "Exists" },
      { key: "nvidia.com/gpu", operator: "Equal", value: "present" },
    ]);
    const [sidecar] = worker.spec.initContainers;
    expect(sidecar).toMatchObject({
      name: "tcpxo-daemon",
      image: "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.20",
      restartPolicy: "Always",
      securityContext: { capabilities: { add: ["NET_ADMIN", "NET_BIND_SERVICE"] } },
    });
    expect(worker.spec.volumes.filter((v: Obj) => v.hostPath).map((v: Obj) => v.hostPath.path)).toEqual([
      "/home/kubernetes/bin/nvidia",
      "/sys",
      "/proc/sys",
      "/dev/aperture_devices",
    ]);
    const main = worker.spec.containers[0];
    expect(main).toMatchObject({
      name: "node",
      image: RUN.image,
      resources: { requests: { "nvidia.com/gpu": "8" }, limits: { "nvidia.com/gpu": "8" } },
      securityContext: { capabilities: { add: ["IPC_LOCK"] } },
    });
    expect(main.command[2]).toContain("nccl-env-profile.sh");
    expect(main.command[2]).toContain("exec /usr/sbin/sshd -De");
  });

  test("the launcher: the operator's image, mpirun on eth0, all_reduce_perf_mpi up to 16G over 16 ranks", () => {
    const launcher = template(rt, "launcher");
    expect(launcher.spec.initContainers[0].image).toBe(RUN.image);
    const c = launcher.spec.containers[0];
    expect(c).toMatchObject({
      name: "node",
      image: RUN.image,
      resources: { limits: { cpu: "2", memory: "128Mi" } },
    });
    expect(c.command[0]).toBe("/usr/local/mpi/bin/mpirun");
    expect(c.command.slice(1, 3)).toEqual(["-np", "16"]);
    expect(c.command.join(" ")).toContain("--mca oob_tcp_if_include eth0 --mca btl_tcp_if_include eth0");
    expect(c.command.slice(-9)).toEqual([
      "/usr/local/bin/all_reduce_perf_mpi",
      "-b",
      "1K",
      "-e",
      "16G",
      "-f",
      "2",
      "-g",
      "1",
    ]);
  });
});

test("the TrainJob: the runtime by reference, one node per worker, the run's labels", () => {
  expect(trainJob(RUN)).toEqual({
    apiVersion: "trainer.kubeflow.org/v1alpha1",
    kind: "TrainJob",
    metadata: { name: "nccl-allreduce-tj-R", namespace: RUN.namespace, labels: { "aicr.run/run-id": "R" } },
    spec: {
      runtimeRef: { name: RUN.runtimeName, apiGroup: "trainer.kubeflow.org", kind: "TrainingRuntime" },
      trainer: { numNodes: 2 },
    },
  });
  expect(launcherSelector("tj")).toBe(
    "jobset.sigs.k8s.io/jobset-name=tj,jobset.sigs.k8s.io/replicatedjob-name=launcher",
  );
});

test("the TrainJob's name leaves room for JobSet's `<name>-launcher-0-0` hostname (63)", () => {
  const runId = "20261202-120000-0123456789abcdef";
  const name = trainJobName((base) => nameWithRunId(base, runId));
  expect(name).toBe(`nccl-allreduce-tj-${runId}`);
  expect(name.length).toBe(TRAINJOB_NAME_MAX);
  expect(`${name}-launcher-0-0`.length).toBe(63);
  expect(trainJobName((base) => `${base}-short`)).toBe("nccl-all-reduce-tj-short");
});
