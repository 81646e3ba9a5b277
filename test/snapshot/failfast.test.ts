/** Fail fast: a cause the cluster already knows ends the run with its reason and exit code, and cleanup still runs. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ApiStatusError } from "../cluster/errors.ts";
import type { KObject } from "../cluster/objects.ts";
import type { ResourceType } from "../cluster/resources.ts";
import type { Cluster } from "../cluster/server.ts";
import {
  AGENT_IMAGE,
  FAILING_IMAGE,
  freshNamespace,
  HANGING_IMAGE,
  lastSeq,
  QUIET_IMAGE,
  runIdOf,
  runObjects,
  runSnapshot,
  snapshotCluster,
  TEST_MS,
  UNPULLABLE_IMAGE,
  untilNoRunPods,
} from "./_harness.ts";

let cluster: Cluster;
let admin: string;
beforeAll(async () => {
  cluster = await snapshotCluster();
  admin = cluster.kubeconfigFor("admin");
});
afterAll(async () => {
  await cluster.stop();
});

/** Every cause is reported long before the 5-minute default timeout: a timeout here would be exit 5. */
async function expectCleanedUp(ns: string, stderr: string): Promise<void> {
  expect(stderr).toMatch(/cleaned up \([0-9.]+s\) deleted=6/); // the agent never wrote its staging ConfigMap
  expect(runObjects(cluster, ns)).toEqual([]);
  await untilNoRunPods(cluster, ns);
}

test(
  "unpullable image: exit 3 naming the image and --image-pull-secret, cleanup done",
  async () => {
    const ns = freshNamespace(cluster, "ff-pull");
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
    const ns = freshNamespace(cluster, "ff-sched");
    const r = await runSnapshot(admin, ["-n", ns, "--image", AGENT_IMAGE, "--node-selector", "pool=nowhere"]);
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
    const ns = freshNamespace(cluster, "ff-auto");
    // The GPU node is full: the injected selector matches, but nothing fits.
    const r = await runSnapshot(admin, ["-n", ns, "--image", AGENT_IMAGE, "--requests", "cpu=64"]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(
      'node selector {"nvidia.com/gpu.present":"true"} (injected by GPU auto-targeting)',
    );
    await expectCleanedUp(ns, r.stderr);
  },
  TEST_MS,
);

test(
  "Job FailedCreate (a webhook refusing the Job's pods): exit 4 with the admission message, cleanup done",
  async () => {
    const ns = freshNamespace(cluster, "ff-webhook");
    // Like a validating webhook keyed on Job ownership: the gate's dry-run pod (no owner) passes.
    const webhook = (r: ResourceType, obj: KObject) => {
      if (r.plural !== "pods" || obj.metadata.namespace !== ns) return;
      if (!(obj.metadata.ownerReferences ?? []).some((o) => o.kind === "Job")) return;
      throw new ApiStatusError(
        403,
        "Forbidden",
        'admission webhook "deny-jobs.example.com" denied the request: Job pods are not allowed here',
      );
    };
    cluster.store.admission.push(webhook);
    try {
      const r = await runSnapshot(admin, ["-n", ns, "--image", AGENT_IMAGE]);
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toContain("the Job could not create the agent pod");
      expect(r.stderr).toContain('admission webhook "deny-jobs.example.com" denied the request');
      await expectCleanedUp(ns, r.stderr);
    } finally {
      cluster.store.admission.splice(cluster.store.admission.indexOf(webhook), 1);
    }
  },
  TEST_MS,
);

test(
  "container exit ≠ 0: exit 8 with the termination message and the last 50 agent log lines, cleanup done",
  async () => {
    const ns = freshNamespace(cluster, "ff-exit");
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
    const ns = freshNamespace(cluster, "ff-quiet");
    const since = lastSeq(cluster);
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
    const mine = cluster.log.entries.filter((e) => e.seq > since && e.user === "admin" && e.verb === "watch");
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
    const ns = freshNamespace(cluster, "ff-timeout");
    const r = await runSnapshot(admin, ["-n", ns, "--image", HANGING_IMAGE, "--timeout", "1s"]);
    expect(r.code, r.stderr).toBe(5);
    expect(r.stderr).toContain("[TIMEOUT]");
    expect(r.stderr).toContain("cleaned up");
    expect(runObjects(cluster, ns)).toEqual([]);
    await untilNoRunPods(cluster, ns);
  },
  TEST_MS,
);
