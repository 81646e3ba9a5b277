/**
 * A Kubeflow Trainer v2 stand-in for a real test cluster, for nccl-all-reduce-bw:
 *
 *   - the CRDs trainjobs and trainingruntimes (trainer.kubeflow.org/v1alpha1), with the TrainJob name
 *     rule of the real CRD (an RFC 1035 label of at most 63 characters);
 *   - a small controller in the test process that does what Trainer's MPI runtime and JobSet do for a
 *     TrainJob: reads its TrainingRuntime (same namespace) and creates the pods of each replicated job
 *     from its pod template — `launcher` once, `node` once per `spec.trainer.numNodes` — named and
 *     labelled as JobSet names them (`<trainjob>-<job>-0-<i>-<suffix>`, hostname without the suffix,
 *     jobset.sigs.k8s.io/jobset-name and …/replicatedjob-name), the MPI plugin's SSH volume added,
 *     owned by the TrainJob so the garbage collector removes them with it;
 *   - an nccl-tests stand-in executable (a shell script) that the process runtime runs for the test
 *     image: the launcher's `mpirun … all_reduce_perf …` prints an nccl-tests table whose last row has
 *     the configured bus bandwidth and exits with the configured code; a worker's sshd runs until its
 *     pod is deleted; anything else (the SSH key init containers) exits 0.
 *
 *   const bin = await ncclTestsBinary();                         // before the cluster starts
 *   startTestCluster("real", { nodes: ncclClusterNodes(), runtime: () => ncclRuntime(bin) });
 *   const trainer = await installTrainer(cluster);               // CRDs + controller
 *   bin.set({ busBw: 200 });                                     // broken: low bandwidth
 *   bin.set({ exitCode: 1 });                                    // broken: the launcher fails
 *   trainer.pause();                                             // broken: no controller at work
 *   await trainer.stop(); bin.remove();
 *
 * Absent variants: no installTrainer (no CRDs), no --nccl-image (the check's option), one GPU node
 * (ncclClusterNodes({ gpuNodes: 1 }) or a cordoned one).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until } from "../../support/until.ts";
import { processRuntime } from "../controllers/process-runtime.ts";
import type { ContainerRuntime } from "../controllers/runtime.ts";
import { ApiStatusError } from "../errors.ts";
import { operandRuntime } from "../gpu-operator.ts";
import { node } from "../nodes.ts";
import type { KObject } from "../objects.ts";
import { looseCrd } from "../real/crds.ts";
import type { TestCluster } from "../testbed.ts";
import { standinApi } from "./_standin-api.ts";

export const TRAINER_API = "trainer.kubeflow.org/v1alpha1";
/** The image the tests pass as --nccl-image; the process runtime runs the stand-in executable for it. */
export const NCCL_TEST_IMAGE = "registry.example/nccl-tests:standin";
export const EKS_INSTANCE_TYPE = "p5.48xlarge";

/** The TrainJob name rule of the real CRD: an RFC 1035 label of at most 63 characters. */
const NAME_RULES = [
  {
    rule: "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
    message: "metadata.name must match RFC 1035 DNS label format",
  },
  { rule: "size(self.metadata.name) <= 63", message: "metadata.name must be no more than 63 characters" },
];

/** One of Trainer's CRDs in its loose form (looseCrd), with the name rules where the real one has them. */
const crd = (plural: string, kind: string, nameRule: boolean): KObject =>
  looseCrd({
    group: "trainer.kubeflow.org",
    version: "v1alpha1",
    plural,
    kind,
    scope: "Namespaced",
    ...(nameRule ? { rules: NAME_RULES } : {}),
  });

export const TRAINER_CRDS: KObject[] = [
  crd("trainjobs", "TrainJob", true),
  crd("trainingruntimes", "TrainingRuntime", false),
];

/** A test cluster's nodes: `gpuNodes` 8-GPU nodes of one EKS instance type (with `efa` adapters each) and a CPU node. */
export function ncclClusterNodes(
  o: { gpuNodes?: number; efa?: number; instanceType?: string } = {},
): KObject[] {
  const gpu = Array.from({ length: o.gpuNodes ?? 2 }, (_, i) => {
    const n = node(`gpu-node-${i + 1}`, {
      gpus: 8,
      labels: { "node.kubernetes.io/instance-type": o.instanceType ?? EKS_INSTANCE_TYPE },
    });
    if (o.efa) {
      const status = n.status as { capacity: Record<string, string>; allocatable: Record<string, string> };
      status.capacity["vpc.amazonaws.com/efa"] = String(o.efa);
      status.allocatable["vpc.amazonaws.com/efa"] = String(o.efa);
    }
    return n;
  });
  return [...gpu, node("cpu-node-1")];
}

export interface NcclResult {
  /** The out-of-place bus bandwidth of the table's last row, GB/s (default 350). */
  busBw?: number;
  /** The launcher's exit code (default 0); non-zero prints an MPI failure instead of the table. */
  exitCode?: number;
  /** false: the launcher prints no data row (default true). */
  rows?: boolean;
}

export interface NcclTestsBinary {
  /** The executable the process runtime runs for NCCL_TEST_IMAGE. */
  path: string;
  /** What the next launcher prints and how it exits. */
  set(result: NcclResult): void;
  remove(): void;
}

const SCRIPT = `#!/bin/sh
# nccl-tests stand-in: the launcher's mpirun prints a table, a worker's sshd waits, the rest exits 0.
dir=$(dirname "$0")
case " $* " in
  *all_reduce_perf*)
    . "$dir/result.env"
    if [ "$EXIT" != "0" ]; then
      echo "--------------------------------------------------------------------------"
      echo "mpirun noticed that process rank 3 with PID 0 on node gpu-node-1 exited on signal 11 (Segmentation fault)."
      echo "--------------------------------------------------------------------------"
      exit "$EXIT"
    fi
    echo "# nThread 1 nGpus 1 minBytes 1024 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: 20"
    echo "#                                                              out-of-place                       in-place"
    echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
    echo "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)"
    if [ "$ROWS" = "1" ]; then
      echo "        1024           256     float     sum      -1    38.51    0.03    0.05      0    37.96    0.03    0.05      0"
      printf " 17179869184    4294967296     float     sum      -1    66012  260.25  %7s      0    65874  260.80  %7s      0\\n" "$BUSBW" "$BUSBW"
    fi
    echo "# Out of bounds values : 0 OK"
    echo "# Avg bus bandwidth    : 1.00"
    exit 0
    ;;
  *sshd*|*" -De "*)
    exec sleep 2147483647
    ;;
esac
exit 0
`;

/** Writes the stand-in executable and its default result (350 GB/s, exit 0) to a fresh directory. */
export function ncclTestsBinary(): NcclTestsBinary {
  const dir = mkdtempSync(join(tmpdir(), "aicr-nccl-standin-"));
  const path = join(dir, "nccl-tests");
  writeFileSync(path, SCRIPT, { mode: 0o755 });
  const set = (r: NcclResult) =>
    writeFileSync(
      join(dir, "result.env"),
      `BUSBW=${(r.busBw ?? 350).toFixed(2)}\nEXIT=${r.exitCode ?? 0}\nROWS=${r.rows === false ? 0 : 1}\n`,
    );
  set({});
  return { path, set, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The kubelet's runtime: NCCL_TEST_IMAGE runs the stand-in, every other image the operand fallback. */
export const ncclRuntime = (bin: NcclTestsBinary): ContainerRuntime =>
  processRuntime({ images: { [NCCL_TEST_IMAGE]: bin.path }, fallback: operandRuntime });

type Obj = Record<string, any>;

export interface TrainerStandIn {
  /** The TrainJobs the controller acted on (namespace/name), and what it could not do. */
  handled: string[];
  errors: string[];
  /** Stops acting on new TrainJobs (a Trainer whose controller is down) until resume(). */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

const randomSuffix = () => Math.random().toString(36).slice(2, 7).padEnd(5, "x");

/** The pods JobSet would create for one replicated job of the TrainJob. */
export function podsFor(tj: Obj, runtime: Obj, job: Obj): KObject[] {
  const name: string = tj.metadata.name;
  const namespace: string = tj.metadata.namespace;
  const count: number =
    job.name === "node" ? Number(tj.spec?.trainer?.numNodes ?? 1) : Number(job.replicas ?? 1);
  const template: Obj = structuredClone(job.template?.spec?.template ?? {});
  const sshPath: string | undefined = runtime.spec?.mlPolicy?.mpi?.sshAuthMountPath;
  const spec: Obj = template.spec ?? {};
  // The MPI plugin's SSH Secret volume (an emptyDir here), mounted into the `node` containers.
  if (sshPath) {
    spec.volumes = [...(spec.volumes ?? []), { name: "mpi-ssh-auth", emptyDir: {} }];
    for (const c of spec.containers ?? [])
      if (c.name === "node" && !(c.volumeMounts ?? []).some((m: Obj) => m.mountPath === sshPath))
        c.volumeMounts = [
          ...(c.volumeMounts ?? []),
          { name: "mpi-ssh-auth", mountPath: sshPath, readOnly: true },
        ];
  }
  spec.restartPolicy ??= "Never";
  return Array.from({ length: count }, (_, i) => {
    const hostname = `${name}-${job.name}-0-${i}`;
    return {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: `${hostname}-${randomSuffix()}`,
        namespace,
        labels: {
          ...(template.metadata?.labels ?? {}),
          "jobset.sigs.k8s.io/jobset-name": name,
          "jobset.sigs.k8s.io/replicatedjob-name": job.name,
          "jobset.sigs.k8s.io/job-index": "0",
          "trainer.kubeflow.org/trainjob-ancestor-step": "trainer",
        },
        annotations: { ...(template.metadata?.annotations ?? {}) },
        ownerReferences: [
          {
            apiVersion: TRAINER_API,
            kind: "TrainJob",
            name,
            uid: tj.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: { ...structuredClone(spec), hostname, subdomain: name },
    };
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Installs the CRDs (Established and served) and starts the controller: every 250 ms it lists the
 * TrainJobs of every namespace and, once for each new one, creates its pods; the pods of a TrainJob
 * that is gone it deletes itself. (They are owned by the TrainJob too, but the garbage collector learns
 * a new CRD only at its next discovery sync, every 30 s in kube-controller-manager: a cluster would wait
 * up to that long for the first cleanup. JobSet deletes a finished set's pods through its Jobs; this is
 * the shortcut, written down.) A pod refused because the
 * namespace's default ServiceAccount is not there yet is tried again, as the Job controller would.
 */
export async function installTrainer(cluster: TestCluster): Promise<TrainerStandIn> {
  const { http, installCrd } = standinApi(cluster);
  for (const c of TRAINER_CRDS) await installCrd(c);
  const seen = new Set<string>();
  /** The pods made for each TrainJob (by UID), deleted once it is gone. */
  const made = new Map<string, { namespace: string; names: string[] }>();
  const state: TrainerStandIn & { paused: boolean } = {
    handled: [],
    errors: [],
    paused: false,
    pause: () => {
      state.paused = true;
    },
    resume: () => {
      state.paused = false;
    },
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
  let stopped = false;

  const createPod = async (pod: KObject) => {
    const path = `/api/v1/namespaces/${pod.metadata.namespace}/pods`;
    await until(
      async () => {
        try {
          await http.request("POST", path, pod);
          return true;
        } catch (e) {
          // The ServiceAccount admission plugin refuses pods until the namespace's default one exists.
          if (e instanceof ApiStatusError && /serviceaccount/i.test(e.message)) throw e;
          if (e instanceof ApiStatusError && e.code === 409) return true;
          state.errors.push(`pod ${pod.metadata.name}: ${(e as Error).message}`);
          return "refused";
        }
      },
      `pod ${pod.metadata.namespace}/${pod.metadata.name} created`,
      { ms: 30_000, everyMs: 200 },
    );
  };

  const reconcile = async (tj: Obj) => {
    const ns: string = tj.metadata.namespace;
    const ref = tj.spec?.runtimeRef ?? {};
    if (
      ref.kind !== "TrainingRuntime" ||
      (ref.apiGroup ?? "trainer.kubeflow.org") !== "trainer.kubeflow.org"
    ) {
      state.errors.push(`TrainJob ${ns}/${tj.metadata.name}: unsupported runtimeRef ${JSON.stringify(ref)}`);
      return;
    }
    let runtime: Obj;
    try {
      runtime = (await http.request(
        "GET",
        `/apis/${TRAINER_API}/namespaces/${ns}/trainingruntimes/${ref.name}`,
      )) as Obj;
    } catch (e) {
      state.errors.push(`TrainJob ${ns}/${tj.metadata.name}: runtime ${ref.name}: ${(e as Error).message}`);
      return;
    }
    state.handled.push(`${ns}/${tj.metadata.name}`);
    const mine = { namespace: ns, names: [] as string[] };
    made.set(tj.metadata.uid, mine);
    for (const job of runtime.spec?.template?.spec?.replicatedJobs ?? [])
      for (const pod of podsFor(tj, runtime, job)) {
        mine.names.push(pod.metadata.name ?? "");
        await createPod(pod);
      }
  };

  const tick = async () => {
    const list = (await http.request("GET", `/apis/${TRAINER_API}/trainjobs`)) as { items?: Obj[] };
    const live = new Set((list.items ?? []).map((tj) => tj.metadata.uid as string));
    for (const [uid, pods] of made) {
      if (live.has(uid)) continue;
      made.delete(uid);
      for (const name of pods.names)
        await http.request("DELETE", `/api/v1/namespaces/${pods.namespace}/pods/${name}`).catch(() => {}); // already gone (the garbage collector, or the namespace)
    }
    for (const tj of list.items ?? []) {
      if (state.paused || seen.has(tj.metadata.uid) || tj.metadata.deletionTimestamp) continue;
      seen.add(tj.metadata.uid);
      void reconcile(tj).catch((e) =>
        state.errors.push(`TrainJob ${tj.metadata.name}: ${(e as Error).message}`),
      );
    }
  };

  const loop = (async () => {
    while (!stopped) {
      await tick().catch((e) => state.errors.push(`list: ${(e as Error).message}`));
      await sleep(250);
    }
  })();
  return state;
}
