/**
 * The Kubeflow Trainer objects of nccl-all-reduce-bw, built as objects (pure): a TrainingRuntime of
 * OpenMPI over SSH — a launcher running nccl-tests' all_reduce_perf through mpirun, one worker per GPU
 * node running sshd with all of that node's GPUs — in an EKS (EFA) or GKE (GPUDirect-TCPXO) variant,
 * and the TrainJob that runs it. Every image that runs the test is the operator's --nccl-image.
 */
import type { KubeObject } from "../../kube/client.ts";
import { TRAINER_GROUP, TRAINER_VERSION } from "./_nccl.ts";

export const TEST_BINARY = "all_reduce_perf";
export const MIN_MESSAGE_SIZE = "1K";
export const MAX_MESSAGE_SIZE = "16G";
/** EKS without EFA adapters: the largest message the original measured over plain TCP. */
export const MAX_MESSAGE_SIZE_NO_EFA = "4G";
/** Where Trainer's MPI plugin mounts the SSH key Secret (copied to /root/.ssh with strict modes). */
export const SSH_AUTH_MOUNT = "/tmp/mpi-keys";
/** The volume Trainer's MPI plugin adds for that Secret; the init containers mount it by this name. */
export const SSH_AUTH_VOLUME = "mpi-ssh-auth";
/** The replicated jobs Trainer's MPI plugin knows by name, and the container it configures in each. */
export const LAUNCHER = "launcher";
export const WORKER = "node";
export const MPI_CONTAINER = "node";

export const JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name";
export const REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name";

/**
 * The longest TrainJob name JobSet accepts for this runtime: its pods' hostnames
 * `<trainjob>-launcher-0-0` must be DNS-1035 labels (63 characters).
 */
export const TRAINJOB_NAME_MAX = 63 - `-${LAUNCHER}-0-0`.length;

/**
 * The TrainJob's name, `<base>-<runID>`: the original's base (nccl-all-reduce-tj) when it fits
 * TRAINJOB_NAME_MAX, else the shorter nccl-allreduce-tj (a 32-character run ID leaves 17).
 */
export function trainJobName(name: (base: string) => string): string {
  const full = name("nccl-all-reduce-tj");
  return full.length <= TRAINJOB_NAME_MAX ? full : name("nccl-allreduce-tj");
}

export const runtimeName = (name: (base: string) => string): string => name("nccl-all-reduce-runtime");

export const GKE = {
  acceleratorLabel: "cloud.google.com/gke-accelerator",
  accelerator: "nvidia-h100-mega-80gb",
  tcpxoImage: "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.20",
  tcpxoContainer: "tcpxo-daemon",
} as const;

export interface NcclRun {
  namespace: string;
  runtimeName: string;
  trainJobName: string;
  labels: Readonly<Record<string, string>>;
  /** The operator's --nccl-image (nccl-tests, OpenMPI, sshd). */
  image: string;
  gpusPerNode: number;
  workers: number;
  /** The run's --node-selector, for the launcher (the workers go where the platform's GPUs are). */
  launcherNodeSelector?: Record<string, string> | undefined;
}

export type PlatformShape =
  | { platform: "eks"; instanceType: string; efa: number }
  | { platform: "gke"; networks: string[] };

type Obj = Record<string, unknown>;

const TOLERATE_ALL = [{ operator: "Exists" }];

/** The launcher's init container and the workers': the keys out of the Secret mount, modes SSH accepts. */
function sshKeysInit(image: string, privateKey: boolean): Obj {
  const files = privateKey ? ["id_rsa", "authorized_keys"] : ["authorized_keys"];
  const script = [
    "set -e",
    "mkdir -p /root/.ssh",
    ...files.map((f) => `cp ${SSH_AUTH_MOUNT}/${f} /root/.ssh/${f}`),
    "chmod 700 /root/.ssh",
    `chmod 600 ${files.map((f) => `/root/.ssh/${f}`).join(" ")}`,
  ].join("\n");
  return {
    name: "ssh-keys",
    image,
    command: ["/bin/sh", "-c", script],
    volumeMounts: [
      { name: SSH_AUTH_VOLUME, mountPath: SSH_AUTH_MOUNT, readOnly: true },
      { name: "ssh-config", mountPath: "/root/.ssh" },
    ],
  };
}

const LAUNCHER_RESOURCES = { limits: { cpu: "2", memory: "128Mi" } };

/** mpirun's arguments shared by both platforms: the rank count, SSH without host-key prompts, then `exports`. */
function mpirunArgs(run: NcclRun, exports: string[], extra: string[]): string[] {
  return [
    "-np",
    String(run.workers * run.gpusPerNode),
    "--allow-run-as-root",
    "--bind-to",
    "none",
    "--mca",
    "plm_rsh_agent",
    "ssh",
    "--mca",
    "plm_rsh_args",
    "-o StrictHostKeyChecking=no -o ConnectionAttempts=10",
    ...extra,
    ...exports.flatMap((e) => ["-x", e]),
  ];
}

const testArgs = (max: string): string[] => ["-b", MIN_MESSAGE_SIZE, "-e", max, "-f", "2", "-g", "1"];

function launcherPod(run: NcclRun, container: Obj): Obj {
  return {
    metadata: { labels: { ...run.labels } },
    spec: {
      ...(run.launcherNodeSelector && Object.keys(run.launcherNodeSelector).length > 0
        ? { nodeSelector: { ...run.launcherNodeSelector } }
        : {}),
      tolerations: TOLERATE_ALL,
      initContainers: [sshKeysInit(run.image, true)],
      containers: [
        {
          name: MPI_CONTAINER,
          image: run.image,
          ...container,
          resources: LAUNCHER_RESOURCES,
          volumeMounts: [{ name: "ssh-config", mountPath: "/root/.ssh" }],
        },
      ],
      volumes: [{ name: "ssh-config", emptyDir: {} }],
    },
  };
}

function eksPods(run: NcclRun, shape: { instanceType: string; efa: number }): { launcher: Obj; worker: Obj } {
  const max = shape.efa > 0 ? MAX_MESSAGE_SIZE : MAX_MESSAGE_SIZE_NO_EFA;
  const exports = [
    "LD_LIBRARY_PATH",
    "PATH",
    "NCCL_DEBUG=WARN",
    "FI_PROVIDER=efa",
    "FI_EFA_USE_DEVICE_RDMA=1",
    "FI_EFA_FORK_SAFE=1",
    "NCCL_SOCKET_IFNAME=eth0",
    "NCCL_IGNORE_DISABLED_P2P=1",
  ];
  const launcher = launcherPod(run, {
    command: [
      "/opt/amazon/openmpi/bin/mpirun",
      ...mpirunArgs(run, exports, []),
      `/opt/nccl-tests/build/${TEST_BINARY}`,
      ...testArgs(max),
    ],
  });
  const devices: Record<string, string> = { "nvidia.com/gpu": String(run.gpusPerNode) };
  if (shape.efa > 0) devices["vpc.amazonaws.com/efa"] = String(shape.efa);
  const worker = {
    metadata: { labels: { ...run.labels } },
    spec: {
      nodeSelector: { "node.kubernetes.io/instance-type": shape.instanceType },
      tolerations: TOLERATE_ALL,
      initContainers: [sshKeysInit(run.image, false)],
      containers: [
        {
          name: MPI_CONTAINER,
          image: run.image,
          command: ["/usr/sbin/sshd", "-De"],
          resources: { requests: { ...devices }, limits: { ...devices } },
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
  };
  return { launcher, worker };
}

/** networking.gke.io/interfaces: eth0 on the default network, eth1… on the GPU NIC networks in order. */
export function gkeInterfaces(networks: readonly string[]): string {
  return JSON.stringify([
    { interfaceName: "eth0", network: "default" },
    ...networks.map((network, i) => ({ interfaceName: `eth${i + 1}`, network })),
  ]);
}

/** devices.gke.io/container.tcpxo-daemon: the GPUs and the driver and DMA devices the daemon uses. */
export function gkeTcpxoDevices(gpus: number): string {
  const paths = [
    ...Array.from({ length: gpus }, (_, i) => `/dev/nvidia${i}`),
    "/dev/nvidiactl",
    "/dev/nvidia-uvm",
    "/dev/dmabuf_import_helper",
  ];
  return paths.map((p) => `- path: ${p}\n`).join("");
}

/** The GKE worker's start: sshd (installed only when the image lacks it), the host's TCPXO NCCL settings for SSH sessions. */
const GKE_WORKER_START = [
  "set -e",
  "if ! command -v sshd >/dev/null 2>&1 && [ ! -x /usr/sbin/sshd ]; then",
  "  apt-get update && apt-get install -y --no-install-recommends openssh-server",
  "fi",
  "mkdir -p /var/run/sshd /root/.ssh && chmod 0755 /var/run/sshd && chmod 700 /root/.ssh",
  `cp ${SSH_AUTH_MOUNT}/* /root/.ssh/ && chmod 600 /root/.ssh/id_rsa`,
  "NCCL_LIB_DIR=/usr/local/nvidia/lib64 . /usr/local/nvidia/lib64/nccl-env-profile.sh",
  "env | grep -E '^(NCCL|CUDA)_' > /root/.ssh/environment || true",
  'echo "PermitUserEnvironment yes" >> /etc/ssh/sshd_config',
  "exec /usr/sbin/sshd -De",
].join("\n");

function gkePods(run: NcclRun, shape: { networks: string[] }): { launcher: Obj; worker: Obj } {
  const launcher = launcherPod(run, {
    command: [
      "/usr/local/mpi/bin/mpirun",
      ...mpirunArgs(
        run,
        ["LD_LIBRARY_PATH", "NCCL_DEBUG=WARN", "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY=/dev/aperture_devices"],
        ["--mca", "oob_tcp_if_include", "eth0", "--mca", "btl_tcp_if_include", "eth0"],
      ),
      `/usr/local/bin/${TEST_BINARY}_mpi`,
      ...testArgs(MAX_MESSAGE_SIZE),
    ],
  });
  const gpus = { "nvidia.com/gpu": String(run.gpusPerNode) };
  const worker = {
    metadata: {
      labels: { ...run.labels },
      annotations: {
        [`devices.gke.io/container.${GKE.tcpxoContainer}`]: gkeTcpxoDevices(run.gpusPerNode),
        "networking.gke.io/default-interface": "eth0",
        "networking.gke.io/interfaces": gkeInterfaces(shape.networks),
      },
    },
    spec: {
      nodeSelector: { [GKE.acceleratorLabel]: GKE.accelerator },
      tolerations: [...TOLERATE_ALL, { key: "nvidia.com/gpu", operator: "Equal", value: "present" }],
      initContainers: [
        {
          name: GKE.tcpxoContainer,
          image: GKE.tcpxoImage,
          // A native sidecar: it runs beside the worker for the pod's life.
          restartPolicy: "Always",
          command: [
            "/bin/sh",
            "-c",
            `chmod 755 /fts/entrypoint_rxdm_container.sh && exec /fts/entrypoint_rxdm_container.sh --num_hops=2 --num_nics ${run.gpusPerNode}`,
          ],
          env: [{ name: "LD_LIBRARY_PATH", value: "/usr/local/nvidia/lib64" }],
          securityContext: { capabilities: { add: ["NET_ADMIN", "NET_BIND_SERVICE"] } },
          volumeMounts: [
            { name: "tcpxo-libraries", mountPath: "/usr/local/nvidia", readOnly: true },
            { name: "tcpxo-sys", mountPath: "/hostsysfs" },
            { name: "tcpxo-proc-sys", mountPath: "/hostprocsysfs" },
          ],
        },
      ],
      containers: [
        {
          name: MPI_CONTAINER,
          image: run.image,
          command: ["/bin/sh", "-c", GKE_WORKER_START],
          resources: { requests: { ...gpus }, limits: { ...gpus } },
          securityContext: { capabilities: { add: ["IPC_LOCK"] } },
          volumeMounts: [
            { name: "dshm", mountPath: "/dev/shm" },
            { name: "tcpxo-libraries", mountPath: "/usr/local/nvidia", readOnly: true },
            { name: "tcpxo-aperture-devices", mountPath: "/dev/aperture_devices" },
          ],
        },
      ],
      volumes: [
        { name: "dshm", emptyDir: { medium: "Memory" } },
        { name: "tcpxo-libraries", hostPath: { path: "/home/kubernetes/bin/nvidia" } },
        { name: "tcpxo-sys", hostPath: { path: "/sys" } },
        { name: "tcpxo-proc-sys", hostPath: { path: "/proc/sys" } },
        { name: "tcpxo-aperture-devices", hostPath: { path: "/dev/aperture_devices" } },
      ],
    },
  };
  return { launcher, worker };
}

/** The TrainingRuntime: Trainer's MPI policy, a JobSet of one launcher and the workers, done when the launcher is. */
export function trainingRuntime(run: NcclRun, shape: PlatformShape): KubeObject {
  const { launcher, worker } = shape.platform === "eks" ? eksPods(run, shape) : gkePods(run, shape);
  return {
    apiVersion: TRAINER_VERSION,
    kind: "TrainingRuntime",
    metadata: {
      name: run.runtimeName,
      namespace: run.namespace,
      labels: { ...run.labels, [`${TRAINER_GROUP}/framework`]: "mpi" },
    },
    spec: {
      mlPolicy: {
        mpi: {
          mpiImplementation: "OpenMPI",
          numProcPerNode: run.gpusPerNode,
          runLauncherAsNode: false,
          sshAuthMountPath: SSH_AUTH_MOUNT,
        },
      },
      template: {
        spec: {
          network: { enableDNSHostnames: true, publishNotReadyAddresses: true },
          successPolicy: { operator: "All", targetReplicatedJobs: [LAUNCHER] },
          replicatedJobs: [
            { name: LAUNCHER, replicas: 1, template: { spec: { template: launcher } } },
            { name: WORKER, template: { spec: { template: worker } } },
          ],
        },
      },
    },
  };
}

/** The TrainJob: the runtime by reference, one training node per GPU node. */
export function trainJob(run: NcclRun): KubeObject {
  return {
    apiVersion: TRAINER_VERSION,
    kind: "TrainJob",
    metadata: { name: run.trainJobName, namespace: run.namespace, labels: { ...run.labels } },
    spec: {
      runtimeRef: { name: run.runtimeName, apiGroup: TRAINER_GROUP, kind: "TrainingRuntime" },
      trainer: { numNodes: run.workers },
    },
  };
}

/** The label selector of the TrainJob's launcher pod (JobSet's labels). */
export const launcherSelector = (trainJobName: string): string =>
  `${JOBSET_NAME_LABEL}=${trainJobName},${REPLICATED_JOB_LABEL}=${LAUNCHER}`;
