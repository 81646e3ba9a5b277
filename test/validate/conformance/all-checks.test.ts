/**
 * All sixteen checks through the compiled binary on the real control plane, with every stand-in of a GPU
 * cluster's services (_all-standins.ts) and examples/recipe-conformance.yaml: one cluster, its stand-ins
 * absent first, then healthy, then broken, so the tests run in this order.
 *
 *   absent   the nodes only: each check skips with its reason, or fails saying what is missing
 *   healthy  as a least-privilege operator (render-rbac's caller ClusterRole): every check passes, the
 *            CNCF evidence and the phase ConfigMaps while the run lasts, nothing left, stand-ins untouched;
 *            a user without that role stops at the gate; Ctrl-C mid-check leaves nothing
 *   broken   each check fails with the original's reason; a failed deployment phase skips the others
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import type { KObject } from "../../cluster/objects.ts";
import { resource } from "../../cluster/resources.ts";
import { adminClient } from "../../cluster/standins/_host.ts";
import { EKS_INSTANCE_TYPE, NCCL_TEST_IMAGE } from "../../cluster/standins/trainer.ts";
import { CLUSTER_HOOK_MS } from "../../cluster/testbed.ts";
import { AICR, baseEnv, type Result, ROOT } from "../../e2e/_aicr.ts";
import { useCluster } from "../../support/cluster.ts";
import { until } from "../../support/until.ts";
import { ctrf, IMAGE, NS } from "../_harness.ts";
import { type AllStandins, allStandinsCluster, installAllStandins } from "./_all-standins.ts";

const RECIPE = join(ROOT, "examples/recipe-conformance.yaml");
const SNAPSHOT = join(ROOT, "test/validate/fixtures/snapshot-h100-eks.yaml");
/** A bound on a stuck run only: every case ends on its own long before. */
const RUN_MS = 600_000;
const INSTANCE_TYPE = "node.kubernetes.io/instance-type";

const DEPLOYMENT = ["operator-health", "expected-resources", "gpu-operator-version", "check-nvidia-smi"];
const PERFORMANCE = ["nccl-all-reduce-bw"];
const CONFORMANCE = [
  "gpu-operator-health",
  "platform-health",
  "dra-support",
  "secure-accelerator-access",
  "gang-scheduling",
  "accelerator-metrics",
  "ai-service-metrics",
  "inference-gateway",
  "pod-autoscaling",
  "cluster-autoscaling",
  "robust-controller",
];

const durations: [string, number][] = [];
/** Each check's own duration in a run (its CTRF row), for the summary printed at the end. */
const noteChecks = (run: string, r: Result) => {
  for (const t of ctrf(r).tests as (Row & { duration?: number })[])
    if (t.suite[0] !== "readiness" && t.status !== "skipped")
      durations.push([`    ${run}: ${t.name} ${t.status}`, t.duration ?? 0]);
};
let counter = 0;
/** A run ID in the real format, distinct per run. */
function newRunId(): string {
  counter++;
  const hex = `${(Date.now() % 0xffffffff).toString(16).padStart(8, "0")}${counter.toString(16).padStart(8, "0")}`;
  return `20261202-180000-${hex}`;
}

interface Spawned {
  proc: ReturnType<typeof Bun.spawn>;
  done: Promise<Result>;
}

/** `aicr validate <args> -k <user's kubeconfig> -n aicr-validation --image IMAGE`, the checks' waits scaled. */
function spawnValidate(
  kubeconfig: string,
  args: string[],
  o: { waitScale?: number; cwd?: string } = {},
): Spawned {
  const proc = Bun.spawn([AICR, "validate", ...args, "-k", kubeconfig, "-n", NS, "--image", IMAGE], {
    cwd: o.cwd ?? ROOT,
    env: baseEnv(o.waitScale ? { AICR_CHECK_WAIT_SCALE: String(o.waitScale) } : {}),
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  const done = (async () => {
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout as ReadableStream).text(),
      new Response(proc.stderr as ReadableStream).text(),
      proc.exited,
    ]);
    return { code, stdout, stderr };
  })();
  return { proc, done };
}

type Row = ReturnType<typeof ctrf>["tests"][number];
const rowsOf = (r: Result, suite: string): Row[] => ctrf(r).tests.filter((t) => t.suite[0] === suite);
const statuses = (r: Result, suite: string) => rowsOf(r, suite).map((t) => [t.name, t.status]);

/** Each check's row of the suite, in the recipe's order, its status and message as expected. */
function expectVerdicts(r: Result, suite: string, want: Record<string, [string, string | RegExp]>): void {
  const rows = rowsOf(r, suite);
  expect(rows.map((t) => t.name)).toEqual(Object.keys(want));
  for (const t of rows) {
    const [status, message] = want[t.name] ?? ["?", ""];
    const got = { name: t.name, status: t.status, message: t.message ?? "" };
    if (typeof message === "string") expect(got).toEqual({ name: t.name, status, message });
    else {
      expect({ ...got, message: "" }).toEqual({ name: t.name, status, message: "" });
      expect({ name: t.name, message: got.message }).toEqual({
        name: t.name,
        message: expect.stringMatching(message),
      });
    }
  }
}

describe("[real] all sixteen checks through the binary, every stand-in", () => {
  let standins: AllStandins | undefined;
  // Before useCluster's: the stand-ins' servers and controllers stop while the cluster is up.
  afterAll(() => standins?.stop(), CLUSTER_HOOK_MS);
  afterAll(() => {
    console.log(durations.map(([name, ms]) => `${(ms / 1000).toFixed(1).padStart(6)} s  ${name}`).join("\n"));
  });
  const cluster = useCluster("real", { start: allStandinsCluster });

  const admin = () => adminClient(cluster());
  /** A member of system:masters of its own, so its requests are told apart from the stand-ins' admin. */
  const validateAdmin = () => {
    cluster().addUser("validate-admin", ["system:masters"]);
    return cluster().kubeconfigFor("validate-admin");
  };

  /** Every object of any listable kind that carries the run's ID label, and the run's namespaces. */
  async function leftOf(id: string): Promise<string[]> {
    const client = admin();
    try {
      const out: string[] = [];
      const groups = await client.getPath<{
        groups: { preferredVersion: { groupVersion: string } }[];
      }>("/apis");
      const versions = ["v1", ...groups.groups.map((g) => g.preferredVersion.groupVersion)];
      for (const gv of versions) {
        const base = gv === "v1" ? "/api/v1" : `/apis/${gv}`;
        const doc = await client
          .getPath<{ resources: { name: string; kind: string; verbs: string[] }[] }>(base)
          .catch(() => ({ resources: [] }));
        for (const r of doc.resources) {
          if (r.name.includes("/") || !r.verbs.includes("list")) continue;
          const list = await client
            .getPath<{ items?: KObject[] }>(
              `${base}/${r.name}?labelSelector=${encodeURIComponent(`aicr.run/run-id=${id}`)}`,
            )
            .catch(() => ({ items: [] }));
          for (const o of list.items ?? [])
            out.push(`${r.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name}`);
        }
      }
      for (const n of cluster().store.list(resource("namespaces")).items)
        if (n.metadata.name?.startsWith("aicr-") && n.metadata.name.endsWith(`-${id}`))
          out.push(`Namespace ${n.metadata.name} (${n.status?.phase})`);
      return [...new Set(out)].sort();
    } finally {
      client.close();
    }
  }

  /** Nothing of the run is left, its namespaces' deletion finished included (bounded). */
  async function untilNothingLeft(id: string): Promise<void> {
    let left: string[] = [];
    await until(
      async () => {
        left = await leftOf(id);
        return left.length === 0;
      },
      () => `nothing of run ${id} left; left: ${left.join(", ")}`,
      { ms: 120_000, everyMs: 1000 },
    );
  }

  function timed<T>(name: string, fn: () => Promise<T>): () => Promise<T> {
    return async () => {
      const t = performance.now();
      try {
        return await fn();
      } finally {
        durations.push([name, performance.now() - t]);
      }
    };
  }

  describe("stand-ins absent: the nodes only", () => {
    test(
      "4. each check skips with its reason where the original skips, else fails saying what is missing",
      timed("4 absent (performance + conformance)", async () => {
        const id = newRunId();
        const r = await spawnValidate(
          validateAdmin(),
          [
            ...["-r", RECIPE, "-s", SNAPSHOT, "-t", "json", "--run-id", id],
            ...["--phase", "performance", "--phase", "conformance", "--nccl-image", NCCL_TEST_IMAGE],
          ],
          { waitScale: 0.1 },
        ).done;
        expect({ code: r.code, stderr: r.code === 8 ? "" : r.stderr }).toEqual({ code: 8, stderr: "" });
        expect(rowsOf(r, "deployment")).toEqual([]);
        expectVerdicts(r, "performance", {
          "nccl-all-reduce-bw": [
            "skipped",
            "skipped: Kubeflow Trainer is not installed (no CRD trainjobs.trainer.kubeflow.org, trainingruntimes.trainer.kubeflow.org)",
          ],
        });
        expectVerdicts(r, "conformance", {
          "gpu-operator-health": [
            "failed",
            "the GPU Operator is not installed: no Deployment gpu-operator/gpu-operator (none labelled app.kubernetes.io/name=gpu-operator); ClusterPolicy cluster-policy not found; DaemonSet gpu-operator/nvidia-dcgm-exporter not found",
          ],
          // Every issue, the last one too: the row's message is the whole verdict, not a 512-character line.
          "platform-health": [
            "failed",
            /^21 platform issue\(s\): namespace cert-manager: not found; .*; Deployment karpenter\/karpenter \(karpenter\): not found$/,
          ],
          "dra-support": [
            "skipped",
            "the NVIDIA DRA driver is not installed: no pods in namespace nvidia-dra-driver and no Deployment nvidia-dra-driver/nvidia-dra-driver-gpu-controller",
          ],
          // Never skipped: without DRA its claim pod cannot be scheduled.
          "secure-accelerator-access": [
            "failed",
            /^the GPU test pod dra-gpu-test-\S+ cannot run: pod is unschedulable: .*device class gpu\.nvidia\.com does not exist/,
          ],
          "gang-scheduling": [
            "skipped",
            "the KAI scheduler is not installed: Deployment kai-scheduler/kai-scheduler-default not found",
          ],
          "accelerator-metrics": [
            "failed",
            "Service gpu-operator/nvidia-dcgm-exporter not found: the DCGM exporter is not deployed",
          ],
          "ai-service-metrics": [
            "failed",
            "no Prometheus Service with port 9090 in namespace monitoring (labels tried: app.kubernetes.io/name=prometheus, then self-monitor=true)",
          ],
          // Skipped only without a kgateway component; the recipe has one.
          "inference-gateway": [
            "failed",
            /^GatewayClass kgateway not found; Gateway kgateway-system\/inference-gateway not found; /,
          ],
          "pod-autoscaling": [
            "skipped",
            "no DCGM exporter pod (label app=nvidia-dcgm-exporter) in any namespace: no GPU metrics to autoscale on",
          ],
          "cluster-autoscaling": [
            "skipped",
            "no Karpenter, and the first node's providerID (none) is neither aws:// (EKS) nor gce:// (GKE): no cluster autoscaler to test",
          ],
          // Skipped only without a dynamo-platform or kubeflow-trainer component; the recipe has one.
          "robust-controller": [
            "failed",
            "the Dynamo operator is not installed: Deployment dynamo-system/dynamo-platform-dynamo-operator-controller-manager not found",
          ],
        });
        await untilNothingLeft(id);
      }),
      RUN_MS,
    );
  });

  describe("every stand-in healthy", () => {
    beforeAll(async () => {
      const t = performance.now();
      standins = await installAllStandins(cluster());
      durations.push(["install every stand-in", performance.now() - t]);
    }, CLUSTER_HOOK_MS);

    test(
      "1, 2, 6. as an operator holding only render-rbac's caller ClusterRole: all 16 checks pass, the CNCF evidence is written, each phase's CTRF ConfigMap lives while the run does, nothing is left, the stand-ins are untouched",
      timed("1+2+6 healthy, all 16 (least-privilege operator)", async () => {
        const id = newRunId();
        const dir = mkdtempSync(join(tmpdir(), "aicr-all-checks-"));
        const unsubscribe = watchPhaseReports(id);
        try {
          const kubeconfig = await leastPrivilegeOperator(dir);
          const before = await standinInventory();
          const from = cluster().log.entries.length;
          const r = await spawnValidate(kubeconfig, [
            ...["-r", RECIPE, "-s", SNAPSHOT, "-t", "json", "--run-id", id],
            ...["--nccl-image", NCCL_TEST_IMAGE, "--cncf-submission", join(dir, "cncf")],
          ]).done;
          expect({ code: r.code, stderr: r.code === 0 ? "" : r.stderr }).toEqual({ code: 0, stderr: "" });
          expect(statuses(r, "deployment")).toEqual(DEPLOYMENT.map((n) => [n, "passed"]));
          expect(statuses(r, "performance")).toEqual(PERFORMANCE.map((n) => [n, "passed"]));
          expect(statuses(r, "conformance")).toEqual(CONFORMANCE.map((n) => [n, "passed"]));
          noteChecks("healthy", r);
          expectCncfEvidence(r, join(dir, "cncf"));
          // 2: each phase's report was its ConfigMap while the run lasted, and went with it.
          expect(phaseReports.map((p) => [p.name, p.tests])).toEqual([
            [`aicr-ctrf-${id}-deployment`, DEPLOYMENT],
            [`aicr-ctrf-${id}-performance`, PERFORMANCE],
            [`aicr-ctrf-${id}-conformance`, CONFORMANCE],
          ]);
          await untilNothingLeft(id);
          expect(
            cluster()
              .store.list(resource("configmaps"), { namespace: NS })
              .items.filter((c) => c.metadata.name?.startsWith("aicr-ctrf-")),
          ).toEqual([]);
          expect(runWritesOutside(from, id, ["aicr-operator"])).toEqual([]);
          // The deployment checks' shared identity and each isolated check's own acted, and RBAC refused none.
          const identities = cluster()
            .log.entries.slice(from)
            .filter((e) => /^system:serviceaccount:aicr-[a-z0-9-]+:aicr-[a-z0-9-]+$/.test(e.user))
            .filter((e) => e.user.endsWith(`-${id}`));
          expect(new Set(identities.map((e) => e.user.split(":")[3]))).toEqual(
            new Set(["validator", ...PERFORMANCE, ...CONFORMANCE].map((c) => `aicr-${c}-${id}`)),
          );
          // One 403 is the point of robust-controller: the Dynamo webhook's denial of its invalid resource.
          const denial = `POST /apis/nvidia.com/v1alpha1/namespaces/aicr-robust-controller-${id}/dynamographdeployments`;
          expect(
            identities
              .filter((e) => e.status === 403)
              .map((e) => `${e.user.split(":")[3]} ${e.method} ${e.path}`),
          ).toEqual([`aicr-robust-controller-${id} ${denial}`]);
          expect(await standinInventory()).toEqual(before);
        } finally {
          unsubscribe();
          rmSync(dir, { recursive: true, force: true });
        }
        await standins?.retireAddedNodes();
      }),
      RUN_MS,
    );

    test(
      "6. a user without the caller ClusterRole: exit 4 at the gate, every missing permission and grant listed, nothing written",
      timed("6 no rights: the gate", async () => {
        cluster().addUser("aicr-nobody", []);
        const from = cluster().log.entries.length;
        const r = await spawnValidate(cluster().kubeconfigFor("aicr-nobody"), [
          ...["-r", RECIPE, "-s", SNAPSHOT, "-t", "json", "--nccl-image", NCCL_TEST_IMAGE],
        ]).done;
        expect(r.code).toBe(4);
        expect(r.stderr).toMatch(
          /\[UNAUTHORIZED\] missing \d+ permission\(s\) the validation run needs; nothing was created/,
        );
        for (const line of [
          'the caller (your kubeconfig identity) cannot "create" namespaces (cluster-scoped)',
          'the caller (your kubeconfig identity) cannot "create" clusterroles.rbac.authorization.k8s.io (cluster-scoped)',
          `the caller (your kubeconfig identity) cannot "list" resourceslices.resource.k8s.io (cluster-scoped), which check dra-support's ClusterRole grants: creating it would be refused as privilege escalation`,
          `the caller (your kubeconfig identity) cannot "create" trainjobs.trainer.kubeflow.org (namespace "aicr-nccl-all-reduce-bw-`,
        ])
          expect(r.stderr).toContain(line);
        const writes = cluster()
          .log.entries.slice(from)
          .filter((e) => e.user === "aicr-nobody" && !["GET", "HEAD"].includes(e.method))
          .filter((e) => !e.path.includes("accessreviews") && !e.path.includes("selfsubjectreviews"));
        expect(writes.map((e) => `${e.method} ${e.path}`)).toEqual([]);
      }),
      RUN_MS,
    );

    test(
      "5. Ctrl-C mid-check: once a check's namespace exists and its probe pod runs, SIGINT ends the run with exit 9 and everything it made is gone, its namespaces too",
      timed("5 Ctrl-C mid-check", async () => {
        const id = newRunId();
        const probeNs = `aicr-pod-autoscaling-${id}`;
        const run = spawnValidate(validateAdmin(), [
          ...["-r", RECIPE, "-s", SNAPSHOT, "-t", "json", "--run-id", id, "--phase", "conformance"],
        ]);
        const running = () =>
          cluster()
            .store.list(resource("pods"), { namespace: probeNs })
            .items.some((p) => p.status?.phase === "Running");
        await Promise.race([
          until(running, `a Running probe pod in ${probeNs}`, { ms: 120_000, on: storeFeed() }),
          run.done.then((r) => {
            throw new Error(`the run ended before its probe pod ran: exit ${r.code}\n${r.stderr}`);
          }),
        ]);
        // Every check of the phase is under way: the GPU-holding ones one after another, the rest beside them.
        expect(
          cluster().store.find(resource("namespaces"), undefined, `aicr-dra-support-${id}`),
        ).toBeDefined();
        run.proc.kill("SIGINT");
        const r = await run.done;
        expect({ code: r.code, stderr: r.code === 9 ? "" : r.stderr }).toEqual({ code: 9, stderr: "" });
        await untilNothingLeft(id);
        await standins?.retireAddedNodes();
      }),
      RUN_MS,
    );
  });

  describe("every stand-in broken the way its check is meant to catch", () => {
    beforeAll(async () => {
      const t = performance.now();
      await standins?.breakAll();
      durations.push(["break every stand-in", performance.now() - t]);
    }, CLUSTER_HOOK_MS);

    test(
      "3. each conformance check fails with the original's reason; nccl-all-reduce-bw fails naming the bandwidth; a failed deployment check skips the later phases",
      timed("3 broken: conformance, performance and the full recipe at once", async () => {
        const ids = [newRunId(), newRunId(), newRunId()] as const;
        const common = ["-r", RECIPE, "-s", SNAPSHOT, "-t", "json", "--nccl-image", NCCL_TEST_IMAGE];
        // Beside the conformance run: the full recipe, then the performance phase alone (NCCL's workers
        // take every GPU of each node, which check-nvidia-smi's pods need one of).
        const [conformance, [full, performance]] = await Promise.all([
          spawnValidate(validateAdmin(), [...common, "--run-id", ids[0], "--phase", "conformance"], {
            waitScale: 0.1,
          }).done,
          (async () => {
            // check-nvidia-smi on the two p5 nodes: Karpenter's (cordoned) GPU nodes would be tried too,
            // and a pod that cannot be scheduled there is reported `other`.
            const full = await spawnValidate(
              validateAdmin(),
              [...common, "--run-id", ids[2], "--node-selector", `${INSTANCE_TYPE}=${EKS_INSTANCE_TYPE}`],
              { waitScale: 0.1 },
            ).done;
            const performance = await spawnValidate(
              validateAdmin(),
              [...common, "--run-id", ids[1], "--phase", "performance"],
              { waitScale: 0.1 },
            ).done;
            return [full, performance] as const;
          })(),
        ]);
        for (const r of [conformance, performance, full])
          expect({ code: r.code, stderr: r.code === 8 ? "" : r.stderr }).toEqual({ code: 8, stderr: "" });
        noteChecks("broken", conformance);
        noteChecks("broken", performance);
        expectVerdicts(conformance, "conformance", {
          "gpu-operator-health": [
            "failed",
            "ClusterPolicy cluster-policy is not ready: state notReady, expected ready",
          ],
          "platform-health": [
            "failed",
            "1 platform issue(s): Deployment cert-manager/cert-manager (cert-manager): not found",
          ],
          "dra-support": [
            "failed",
            "Deployment nvidia-dra-driver/nvidia-dra-driver-gpu-controller is not available: 0 available replicas (expected at least 1)",
          ],
          "secure-accelerator-access": [
            "failed",
            /^a pod without a ResourceClaim sees GPU devices on node gpu-node-[12]: \/dev\/nvidia-uvm, \/dev\/nvidia0, \/dev\/nvidiactl \(expected none\)$/,
          ],
          "gang-scheduling": [
            "failed",
            /^the gang's pods did not all finish within 30 s: gang-worker-0-\S+ \(phase \w+, node gpu-node-[12]\); gang-worker-1-\S+ \(phase Pending, node \(none\)\)$/,
          ],
          "accelerator-metrics": [
            "failed",
            "the DCGM exporter does not serve required metric(s): DCGM_FI_DEV_POWER_USAGE",
          ],
          "ai-service-metrics": [
            "failed",
            /^Prometheus answered GET http:\/\/[\d.]+:\d+\/api\/v1\/query\?query=DCGM_FI_DEV_GPU_UTIL with HTTP 500, expected 200$/,
          ],
          "inference-gateway": [
            "failed",
            "Gateway kgateway-system/inference-gateway is not Programmed: False (AddressNotAssigned: no address assigned to the Gateway's proxy)",
          ],
          "pod-autoscaling": [
            "failed",
            /^no custom GPU metric \(gpu_utilization, gpu_memory_used, gpu_power_usage\) has values for pods in gpu-operator or dynamo-system after 12 round\(s\) 1s apart/,
          ],
          "cluster-autoscaling": [
            "failed",
            /^NodePool gpu-pool: no new node labelled karpenter\.sh\/nodepool=gpu-pool within 18s \(\d+, baseline \d+\): the autoscaler did not add GPU capacity for the pending pods/,
          ],
          "robust-controller": [
            "failed",
            /^the API server accepted .*DynamoGraphDeployment.*: Dynamo's validating webhook did not reject it \(deleted again\)$/,
          ],
        });
        expectVerdicts(performance, "performance", {
          "nccl-all-reduce-bw": [
            "failed",
            'NCCL all-reduce bus bandwidth 200.00 GB/s is below the constraint ">= 300" (at least 270.00 GB/s with the 10% tolerance)',
          ],
        });
        expect(
          rowsOf(full, "deployment").map((t) => [t.name, t.status, t.status === "passed" ? "" : t.message]),
        ).toEqual([
          ["operator-health", "failed", "ClusterPolicy not ready: cluster-policy (notReady)"],
          ["expected-resources", "passed", ""],
          ["gpu-operator-version", "passed", ""],
          ["check-nvidia-smi", "passed", ""],
        ]);
        for (const suite of ["performance", "conformance"])
          expect(rowsOf(full, suite).map((t) => [t.name, t.status, t.message])).toEqual(
            (suite === "performance" ? PERFORMANCE : CONFORMANCE).map((n) => [
              n,
              "skipped",
              "skipped due to previous phase failure",
            ]),
          );
        for (const id of ids) await untilNothingLeft(id);
      }),
      RUN_MS,
    );
  });

  /** The store's changes, as a feed `until` re-checks on. */
  const storeFeed = () => ({ subscribe: (l: () => void) => cluster().store.subscribe(() => l()) });

  /** Each phase's CTRF ConfigMap of the run, as the store's watch saw it added: name, its tests. */
  let phaseReports: { name: string; tests: string[] }[] = [];
  function watchPhaseReports(id: string): () => void {
    phaseReports = [];
    return cluster().store.subscribe((e) => {
      const name = e.object.metadata.name ?? "";
      if (e.type !== "ADDED" || e.object.kind !== "ConfigMap" || !name.startsWith(`aicr-ctrf-${id}-`)) return;
      const report = JSON.parse(String(e.object.data?.["report.json"] ?? "{}"));
      phaseReports.push({
        name,
        tests: (report.results?.tests ?? []).map((t: { name: string }) => t.name),
      });
    });
  }

  /**
   * render-rbac --recipe through the binary, its caller.yaml's ClusterRole applied and bound (cluster
   * wide: it holds the namespace-scoped grants too) to the user aicr-operator; that user's kubeconfig.
   */
  async function leastPrivilegeOperator(dir: string): Promise<string> {
    const rendered = Bun.spawnSync([AICR, "render-rbac", "--recipe", RECIPE, "--dir", dir], {
      env: baseEnv(),
      stdout: "pipe",
      stderr: "pipe",
    });
    expect({ code: rendered.exitCode, stderr: rendered.stderr.toString() }).toMatchObject({ code: 0 });
    const out = readdirSync(dir).find((d) => d.startsWith("validate-rbac-"));
    const files = readdirSync(join(dir, out ?? "")).sort();
    expect(files).toEqual(
      ["caller", "validator", ...PERFORMANCE, ...CONFORMANCE].map((f) => `${f}.yaml`).sort(),
    );
    const role = parse(readFileSync(join(dir, out ?? "", "caller.yaml"), "utf8")) as KObject;
    expect(role.kind).toBe("ClusterRole");
    const client = admin();
    try {
      await client.create(role as never);
      await client.create({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: "aicr-validate-caller" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role.metadata.name },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "aicr-operator" }],
      });
    } finally {
      client.close();
    }
    cluster().addUser("aicr-operator", []);
    return cluster().kubeconfigFor("aicr-operator");
  }

  /** The evidence files: one per requirement with a test left, each test's evidence blocks in it. */
  function expectCncfEvidence(r: Result, dir: string): void {
    const rows = rowsOf(r, "conformance");
    expect(readdirSync(dir).sort()).toEqual([
      "accelerator-metrics.md",
      "cluster-autoscaling.md",
      "dra-support.md",
      "gang-scheduling.md",
      "inference-gateway.md",
      "pod-autoscaling.md",
      "robust-operator.md",
      "secure-accelerator-access.md",
    ]);
    const byFile: Record<string, string[]> = {
      "accelerator-metrics.md": ["accelerator-metrics", "ai-service-metrics"],
      "cluster-autoscaling.md": ["cluster-autoscaling"],
      "dra-support.md": ["dra-support"],
      "gang-scheduling.md": ["gang-scheduling"],
      "inference-gateway.md": ["inference-gateway"],
      "pod-autoscaling.md": ["pod-autoscaling"],
      "robust-operator.md": ["robust-controller"],
      "secure-accelerator-access.md": ["secure-accelerator-access"],
    };
    for (const [file, tests] of Object.entries(byFile)) {
      const text = readFileSync(join(dir, file), "utf8");
      expect([...text.matchAll(/^## .*$/gm)].map((m) => m[0])).toEqual(tests.map((t) => `## ${t}`));
      for (const name of tests) {
        const blocks = (rows.find((t) => t.name === name)?.stdout ?? []).filter((l) =>
          /^--- .+ ---$/.test(l),
        );
        expect({ name, blocks: blocks.length > 0 }).toEqual({ name, blocks: true });
        for (const b of blocks)
          expect({ file, block: text.includes(`\n${b}\n`) }).toEqual({ file, block: true });
      }
      // The diagnostics are left out.
      expect(text).not.toContain("## gpu-operator-health");
      expect(text).not.toContain("## platform-health");
    }
  }

  const STANDIN_NAMESPACES = [
    "cert-manager",
    "gpu-operator",
    "nvidia-dra-driver",
    "kai-scheduler",
    "monitoring",
    "kgateway-system",
    "dynamo-system",
    "karpenter",
  ];
  const NAMESPACED_KINDS = [
    ["apps/v1", "deployments"],
    ["apps/v1", "daemonsets"],
    ["v1", "services"],
    ["v1", "endpoints"],
    ["discovery.k8s.io/v1", "endpointslices"],
    ["gateway.networking.k8s.io/v1", "gateways"],
    ["gateway.networking.k8s.io/v1", "httproutes"],
  ];
  const CLUSTER_KINDS = [
    ["apiextensions.k8s.io/v1", "customresourcedefinitions"],
    ["nvidia.com/v1", "clusterpolicies"],
    ["gateway.networking.k8s.io/v1", "gatewayclasses"],
    ["karpenter.sh/v1", "nodepools"],
    ["resource.k8s.io/v1", "deviceclasses"],
    ["resource.k8s.io/v1", "resourceslices"],
    ["scheduling.run.ai/v2", "queues"],
    ["apiregistration.k8s.io/v1", "apiservices"],
    ["admissionregistration.k8s.io/v1", "validatingwebhookconfigurations"],
  ];

  /** The stand-ins' objects: each one's UID and generation (a changed spec, a replaced object, a gone one). */
  async function standinInventory(): Promise<Record<string, string>> {
    const client = admin();
    const out: Record<string, string> = {};
    const add = (plural: string, o: KObject) => {
      out[`${plural} ${o.metadata.namespace ?? ""}/${o.metadata.name}`] =
        `${o.metadata.uid}@${o.metadata.generation ?? "-"}`;
    };
    const path = (gv: string) => (gv === "v1" ? "/api/v1" : `/apis/${gv}`);
    try {
      for (const ns of STANDIN_NAMESPACES)
        for (const [gv, plural] of NAMESPACED_KINDS)
          for (const o of (
            await client.getPath<{ items: KObject[] }>(`${path(gv!)}/namespaces/${ns}/${plural}`)
          ).items)
            add(plural!, o);
      for (const [gv, plural] of CLUSTER_KINDS)
        for (const o of (await client.getPath<{ items: KObject[] }>(`${path(gv!)}/${plural}`)).items)
          add(plural!, o);
      return out;
    } finally {
      client.close();
    }
  }

  /**
   * The writes of the run's identities (its caller, the validators' and the checks' ServiceAccounts)
   * since request `from` that touched anything but the run's own: its namespaces (the validation
   * namespace and aicr-<check>-<runID>), its cluster-scoped RBAC (named with the run ID) and access reviews.
   */
  function runWritesOutside(from: number, id: string, callers: string[]): string[] {
    const ours = (user: string) =>
      callers.includes(user) ||
      user.startsWith(`system:serviceaccount:${NS}:`) ||
      new RegExp(`^system:serviceaccount:aicr-[a-z0-9-]+-${id}:`).test(user);
    const inRun = (e: { path: string; method: string; body?: unknown }) => {
      if (/\/(selfsubject|subject|localsubject)accessreviews$|\/selfsubjectreviews$/.test(e.path))
        return true;
      const ns = e.path.match(/\/namespaces\/([^/]+)/)?.[1];
      const name = (e.body as { metadata?: { name?: string } } | undefined)?.metadata?.name ?? "";
      const target = ns ?? (e.method === "POST" ? name : (e.path.split("/").pop() ?? ""));
      if (e.path === "/api/v1/namespaces" && e.method === "POST")
        return name === NS || name.endsWith(`-${id}`);
      return target === NS || target.endsWith(`-${id}`) || (!ns && (name || target).includes(id));
    };
    return cluster()
      .log.entries.slice(from)
      .filter((e) => ours(e.user) && !["GET", "HEAD"].includes(e.method) && !inRun(e))
      .map((e) => `${e.user} ${e.method} ${e.path} ${e.status}`);
  }
});
