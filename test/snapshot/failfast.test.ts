/** Fail fast: a cause the cluster already knows ends the run with its reason and exit code, and cleanup still runs. */
import { beforeAll, describe, expect, test } from "bun:test";
import { KubeClient } from "../../src/kube/client.ts";
import { ApiStatusError } from "../cluster/errors.ts";
import type { KObject } from "../cluster/objects.ts";
import type { ResourceType } from "../cluster/resources.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { until } from "../support/until.ts";
import {
  AGENT_IMAGE,
  type Cluster,
  FAILING_IMAGE,
  freshNamespace,
  HANGING_IMAGE,
  lastSeq,
  QUIET_IMAGE,
  runIdOf,
  runSnapshot,
  snapshotCluster,
  TEST_MS,
  UNPULLABLE_IMAGE,
  untilNoRunObjects,
  untilNoRunPods,
} from "./_harness.ts";

/**
 * An admission controller that refuses the pods a Job creates in `ns`, and lets any other pod through
 * (the gate's dry-run pod has no owner): on the fake, an admission hook throwing what a validating
 * webhook answers; on the real apiserver, a ValidatingAdmissionPolicy, in force once a dry-run create
 * of a Job-owned pod is refused. Returns the refusal's text, as the apiserver words it, and the undo.
 */
async function denyJobPods(
  cluster: Cluster,
  ns: string,
): Promise<{ message: string; remove(): Promise<void> }> {
  const fake = cluster.fake;
  if (fake) {
    const message =
      'admission webhook "deny-jobs.example.com" denied the request: Job pods are not allowed here';
    const webhook = (r: ResourceType, obj: KObject) => {
      if (r.plural !== "pods" || obj.metadata.namespace !== ns) return;
      if (!(obj.metadata.ownerReferences ?? []).some((o) => o.kind === "Job")) return;
      throw new ApiStatusError(403, "Forbidden", message);
    };
    fake.store.admission.push(webhook);
    return {
      message,
      remove: async () => void fake.store.admission.splice(fake.store.admission.indexOf(webhook), 1),
    };
  }
  cluster.addUser("aicr-test-setup", ["system:masters"]);
  const client = KubeClient.connect({ kubeconfig: cluster.kubeconfigFor("aicr-test-setup"), env: {} });
  const name = `deny-job-pods-${ns}`;
  const api = "admissionregistration.k8s.io/v1";
  await client.create({
    apiVersion: api,
    kind: "ValidatingAdmissionPolicy",
    metadata: { name },
    spec: {
      failurePolicy: "Fail",
      matchConstraints: {
        resourceRules: [
          { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] },
        ],
      },
      validations: [
        {
          expression:
            "!has(object.metadata.ownerReferences) || !object.metadata.ownerReferences.exists(o, o.kind == 'Job')",
          message: "Job pods are not allowed here",
        },
      ],
    },
  });
  await client.create({
    apiVersion: api,
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name },
    spec: {
      policyName: name,
      validationActions: ["Deny"],
      matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } } },
    },
  });
  const probe = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "admission-probe",
      namespace: ns,
      ownerReferences: [
        { apiVersion: "batch/v1", kind: "Job", name: "probe", uid: "00000000-0000-0000-0000-000000000000" },
      ],
    },
    spec: { containers: [{ name: "c", image: "probe" }] },
  };
  // The policy is enforced once the apiserver's admission plugin has compiled it: probed, not timed.
  await until(
    () =>
      client.create(probe, { dryRun: true }).then(
        () => false,
        (e: Error) => {
          if (e.message.includes(`ValidatingAdmissionPolicy '${name}'`)) return true;
          throw e;
        },
      ),
    `the ValidatingAdmissionPolicy ${name} enforced`,
  );
  return {
    message: `ValidatingAdmissionPolicy '${name}' with binding '${name}' denied request: Job pods are not allowed here`,
    async remove() {
      for (const kind of ["ValidatingAdmissionPolicyBinding", "ValidatingAdmissionPolicy"])
        await client.delete({ apiVersion: api, kind, name });
      client.close();
    },
  };
}

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: snapshotCluster });
    let admin: string;
    beforeAll(() => {
      admin = cluster().kubeconfigFor("admin");
    });

    /** Every cause is reported long before the 5-minute default timeout: a timeout here would be exit 5. */
    async function expectCleanedUp(ns: string, stderr: string): Promise<void> {
      expect(stderr).toMatch(/cleaned up \([0-9.]+s; [0-9.]+s in all\) deleted=6/); // the agent never wrote its staging ConfigMap
      await untilNoRunObjects(cluster(), ns);
      await untilNoRunPods(cluster(), ns);
    }

    test(
      "unpullable image: exit 3 naming the image and --image-pull-secret, cleanup done",
      async () => {
        const ns = await freshNamespace(cluster(), "ff-pull");
        const r = await runSnapshot(admin, ["-n", ns, "--image", UNPULLABLE_IMAGE]);
        expect(r.code, r.stderr).toBe(3);
        expect(r.stderr).toContain("[NOT_FOUND]");
        expect(r.stderr).toContain(`the agent image "${UNPULLABLE_IMAGE}" cannot be pulled`);
        expect(r.stderr).toContain("--image-pull-secret");
        await expectCleanedUp(ns, r.stderr);
      },
      TEST_MS,
    );

    test(
      "unschedulable: exit 3 naming the selector and tolerations, cleanup done",
      async () => {
        const ns = await freshNamespace(cluster(), "ff-sched");
        const r = await runSnapshot(admin, [
          "-n",
          ns,
          "--image",
          AGENT_IMAGE,
          "--node-selector",
          "pool=nowhere",
        ]);
        expect(r.code, r.stderr).toBe(3);
        expect(r.stderr).toContain("no node can run the agent pod");
        expect(r.stderr).toContain("didn't match Pod's node affinity/selector");
        expect(r.stderr).toContain('node selector {"pool":"nowhere"}');
        expect(r.stderr).toContain("tolerations every taint (default)");
        expect(r.stderr).not.toContain("injected by GPU auto-targeting");
        await expectCleanedUp(ns, r.stderr);
      },
      TEST_MS,
    );

    test(
      "unschedulable after auto-targeting: the remedy says the selector was injected",
      async () => {
        const ns = await freshNamespace(cluster(), "ff-auto");
        // More CPU than the GPU node has: the injected selector matches, but nothing fits. (The limit is
        // raised too: a request above the default 2-CPU limit is an invalid pod to kube-apiserver.)
        const r = await runSnapshot(admin, [
          "-n",
          ns,
          "--image",
          AGENT_IMAGE,
          "--requests",
          "cpu=64",
          "--limits",
          "cpu=64",
        ]);
        expect(r.code, r.stderr).toBe(3);
        expect(r.stderr).toContain(
          'node selector {"nvidia.com/gpu.present":"true"} (injected by GPU auto-targeting)',
        );
        await expectCleanedUp(ns, r.stderr);
      },
      TEST_MS,
    );

    test(
      "Job FailedCreate (admission refusing the Job's pods): exit 4 with the admission message, cleanup done",
      async () => {
        const ns = await freshNamespace(cluster(), "ff-webhook");
        // Keyed on Job ownership: the gate's dry-run pod (no owner) passes.
        const denial = await denyJobPods(cluster(), ns);
        try {
          const r = await runSnapshot(admin, ["-n", ns, "--image", AGENT_IMAGE]);
          expect(r.code, r.stderr).toBe(4);
          expect(r.stderr).toContain("the Job could not create the agent pod");
          expect(r.stderr).toContain(denial.message);
          await expectCleanedUp(ns, r.stderr);
        } finally {
          await denial.remove();
        }
      },
      TEST_MS,
    );

    test(
      "container exit ≠ 0: exit 8 with the termination message and the last 50 agent log lines, cleanup done",
      async () => {
        const ns = await freshNamespace(cluster(), "ff-exit");
        const r = await runSnapshot(admin, ["-n", ns, "--image", FAILING_IMAGE]);
        expect(r.code, r.stderr).toBe(8);
        expect(r.stderr).toContain("[INTERNAL]");
        expect(r.stderr).toContain("exit code 1");
        expect(r.stderr).toContain("collector GPU failed: nvidia-smi not found");
        expect(r.stderr).toContain("--- last 50 agent log lines ---");
        const tail = r.stderr.slice(r.stderr.indexOf("--- last 50 agent log lines ---"));
        expect(tail).toContain('"msg":"step 60"');
        expect(tail).not.toContain('"msg":"step 10"}');
        expect(tail).toContain("nvidia-smi not found");
        expect(r.stderr).toContain("[agent] step 1");
        expect(runIdOf(r.stderr)).toBeTruthy();
        await expectCleanedUp(ns, r.stderr);
      },
      TEST_MS,
    );

    test(
      "an agent silent longer than the HTTP idle timeout: its log stream and the run's watches stay open",
      async () => {
        const ns = await freshNamespace(cluster(), "ff-quiet");
        const since = lastSeq(cluster());
        // Bun's idle timer (default 5 minutes) at 1 s, so the agent's 10 s of silence exceeds it (the timer
        // is coarse: it fires within 4-8 s).
        const r = await runSnapshot(admin, ["-n", ns, "--image", QUIET_IMAGE], {
          BUN_CONFIG_HTTP_IDLE_TIMEOUT: "1",
        });
        expect(r.code, r.stderr).toBe(8);
        expect(r.stderr).toContain("[agent] quiet agent: going silent");
        expect(r.stderr).toContain("[agent] quiet agent: speaking again");
        expect(r.stderr).toContain("quiet agent done");
        // Each wait was one watch: none ended early and was reopened.
        const mine = cluster().log.entries.filter(
          (e) => e.seq > since && e.user === "admin" && e.verb === "watch",
        );
        const waited = [
          `/api/v1/namespaces/${ns}/pods`,
          `/apis/batch/v1/namespaces/${ns}/jobs`,
          `/api/v1/namespaces/${ns}/configmaps`,
        ];
        for (const path of waited) expect(mine.filter((e) => e.path === path)).toHaveLength(1);
        await expectCleanedUp(ns, r.stderr);
      },
      TEST_MS,
    );

    test(
      "--timeout runs out while the agent is still running: exit 5, cleanup done",
      async () => {
        const ns = await freshNamespace(cluster(), "ff-timeout");
        const r = await runSnapshot(admin, ["-n", ns, "--image", HANGING_IMAGE, "--timeout", "1s"]);
        expect(r.code, r.stderr).toBe(5);
        // One deadline, one TIMEOUT: it names --timeout and where the run stood (the agent's pod, running).
        const timeouts = r.stderr.split("\n").filter((l) => l.includes("[TIMEOUT]"));
        expect(timeouts).toHaveLength(1);
        // (On a loaded machine the pod may not have started within the second: either stage is right.)
        expect(timeouts[0]).toMatch(
          /\[TIMEOUT\] the agent did not finish within --timeout 1s: (waiting for the agent in pod \S+ to finish|waiting for the agent pod to start); (pod \S+ is|no pod of this run's Job was seen)/,
        );
        expect(r.stderr).toContain("cleaned up");
        await untilNoRunObjects(cluster(), ns);
        await untilNoRunPods(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "while it waits, the run says for what, what it last saw and the time left (not a terminal: plain lines)",
      async () => {
        const ns = await freshNamespace(cluster(), "ff-progress");
        const r = await runSnapshot(admin, ["-n", ns, "--image", HANGING_IMAGE, "--timeout", "3s"], {
          AICR_PROGRESS_INTERVAL_MS: "200",
        });
        expect(r.code, r.stderr).toBe(5);
        const lines = r.stderr.split("\n");
        const timeoutAt = lines.findIndex((l) => l.includes("[TIMEOUT]"));
        expect(timeoutAt, r.stderr).toBeGreaterThan(0);
        // Waiting lines come before the TIMEOUT; one names the run's pod (pending or its agent running, quiet).
        const waiting = lines.slice(0, timeoutAt).filter((l) => /; (\d+m)?\d+s left$/.test(l));
        expect(waiting.length, r.stderr).toBeGreaterThan(0);
        expect(
          waiting.some((l) =>
            /^(waiting for the agent pod to start: pod \S+ is|agent in pod \S+ running, quiet for)/.test(l),
          ),
          r.stderr,
        ).toBe(true);
        // Phase lines carry their own step's time and the run's.
        expect(r.stderr).toMatch(/permissions checked \([0-9.]+s; [0-9.]+s in all\)/);
        expect(r.stderr).not.toContain("\x1b"); // stderr is no terminal: no status-line escapes
        await untilNoRunObjects(cluster(), ns);
        await untilNoRunPods(cluster(), ns);
      },
      TEST_MS,
    );
  });
