import { afterEach, describe, expect, test } from "bun:test";
import type { KObject } from "../store.ts";
import { startControllers } from "./index.ts";
import type { RunFunction } from "./runtime.ts";
import { condition, events, jobSpec, R, testStore, waitFor } from "./testing.ts";

let stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.map((s) => s()));
  stops = [];
});

function setup(run: RunFunction = async () => ({ exitCode: 0 }), timing = {}) {
  const { store, clock } = testStore();
  const c = startControllers(store, {
    runtime: run,
    clock,
    timing: { podFailureBackoff: { initialMs: 0, maxMs: 0 }, ...timing },
  });
  stops.push(() => c.stop());
  return { store, clock };
}

const finished = (type: string) => (j: KObject | undefined) => condition(j, type)?.status === "True" && j;
const podsOf = (store: ReturnType<typeof setup>["store"], job: KObject) =>
  store
    .list(R.pods, { namespace: "ns" })
    .items.filter((p) => p.metadata.ownerReferences?.[0]?.uid === job.metadata.uid);

describe("job controller", () => {
  test("runs a pod to completion with the real labels, owner reference and conditions", async () => {
    const { store } = setup();
    const job = store.create(R.jobs, jobSpec("aicr-run1"));
    const done = await waitFor(
      store,
      () => finished("Complete")(store.find(R.jobs, "ns", "aicr-run1")),
      "Complete",
    );
    const [pod] = podsOf(store, job);
    expect(pod!.metadata.name).toMatch(/^aicr-run1-[a-z0-9]{5}$/);
    expect(pod!.metadata.labels).toEqual({
      app: "aicr",
      "batch.kubernetes.io/controller-uid": job.metadata.uid!,
      "batch.kubernetes.io/job-name": "aicr-run1",
      "controller-uid": job.metadata.uid!,
      "job-name": "aicr-run1",
    });
    expect(pod!.metadata.ownerReferences).toEqual([
      {
        apiVersion: "batch/v1",
        kind: "Job",
        name: "aicr-run1",
        uid: job.metadata.uid!,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(done.status.succeeded).toBe(1);
    expect(done.status.active).toBeUndefined();
    expect(done.status.startTime).toBeString();
    expect(done.status.completionTime).toBeString();
    const types = done.status.conditions.map(
      (c: { type: string; reason: string }) => `${c.type}/${c.reason}`,
    );
    expect(types).toEqual(["SuccessCriteriaMet/CompletionsReached", "Complete/CompletionsReached"]);
    expect(condition(done, "Complete").message).toBe("Reached expected number of succeeded pods");
    const reasons = events(store, "aicr-run1").map((e) => e.reason);
    expect(reasons).toEqual(["SuccessfulCreate", "Completed"]);
  });

  test("more failures than backoffLimit fail the Job with BackoffLimitExceeded", async () => {
    const { store } = setup(async () => ({ exitCode: 2 }));
    const job = store.create(R.jobs, jobSpec("flaky", { backoffLimit: 2 }));
    const failed = await waitFor(
      store,
      () => finished("Failed")(store.find(R.jobs, "ns", "flaky")),
      "Failed",
    );
    expect(failed.status.failed).toBe(3);
    expect(podsOf(store, job)).toHaveLength(3);
    expect(condition(failed, "FailureTarget")?.reason).toBe("BackoffLimitExceeded");
    expect(condition(failed, "Failed")).toMatchObject({
      status: "True",
      reason: "BackoffLimitExceeded",
      message: "Job has reached the specified backoff limit",
    });
    expect(failed.status.completionTime).toBeUndefined();
    expect(events(store, "flaky").at(-1)?.reason).toBe("BackoffLimitExceeded");
  });

  test("a running pod deleted before it succeeds counts as failed: backoffLimit 0 fails the Job, no replacement", async () => {
    const { store } = setup(
      (ctx) =>
        new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve({ exitCode: 143 }))),
    );
    const job = store.create(R.jobs, jobSpec("deleted-pod"));
    await waitFor(store, () => podsOf(store, job)[0]?.status?.phase === "Running", "Running pod");
    store.delete(R.pods, "ns", podsOf(store, job)[0]!.metadata.name!);
    const failed = await waitFor(
      store,
      () => finished("Failed")(store.find(R.jobs, "ns", "deleted-pod")),
      "Failed",
    );
    expect(failed.status.failed).toBe(1);
    expect(condition(failed, "Failed")?.reason).toBe("BackoffLimitExceeded");
    expect(podsOf(store, job)).toHaveLength(0);
  });

  test("activeDeadlineSeconds fails the Job with DeadlineExceeded and deletes its running pod", async () => {
    let aborted = false;
    const { store, clock } = setup(
      (ctx) =>
        new Promise((resolve) =>
          ctx.signal.addEventListener("abort", () => {
            aborted = true;
            resolve({ exitCode: 137 });
          }),
        ),
    );
    const job = store.create(R.jobs, jobSpec("slow", { activeDeadlineSeconds: 30 }));
    await waitFor(store, () => podsOf(store, job)[0]?.status?.phase === "Running", "Running pod");
    clock.advance(30_000);
    const failed = await waitFor(store, () => finished("Failed")(store.find(R.jobs, "ns", "slow")), "Failed");
    expect(condition(failed, "Failed")).toMatchObject({
      reason: "DeadlineExceeded",
      message: "Job was active longer than specified deadline",
    });
    expect(podsOf(store, job)).toHaveLength(0);
    expect(aborted).toBe(true);
  });

  test("ttlSecondsAfterFinished deletes the finished Job and, through the GC, its pods", async () => {
    const { store, clock } = setup();
    const job = store.create(R.jobs, jobSpec("short", { ttlSecondsAfterFinished: 60 }));
    await waitFor(store, () => finished("Complete")(store.find(R.jobs, "ns", "short")), "Complete");
    expect(podsOf(store, job)).toHaveLength(1);
    clock.advance(59_000);
    expect(store.find(R.jobs, "ns", "short")).toBeDefined();
    clock.advance(1_000);
    await waitFor(
      store,
      () => !store.find(R.jobs, "ns", "short") && podsOf(store, job).length === 0,
      "Job and pods gone",
    );
  });

  test("suspend holds pod creation; resuming starts it", async () => {
    const { store } = setup();
    const job = store.create(R.jobs, jobSpec("held", { suspend: true }));
    const suspended = await waitFor(
      store,
      () => finished("Suspended")(store.find(R.jobs, "ns", "held")),
      "Suspended",
    );
    expect(condition(suspended, "Suspended")).toMatchObject({
      reason: "JobSuspended",
      message: "Job suspended",
    });
    expect(suspended.status.startTime).toBeUndefined();
    expect(podsOf(store, job)).toHaveLength(0);
    store.mutate(R.jobs, "ns", "held", (j) => ({ ...j, spec: { ...j.spec, suspend: false } }));
    const done = await waitFor(
      store,
      () => finished("Complete")(store.find(R.jobs, "ns", "held")),
      "Complete",
    );
    expect(condition(done, "Suspended")).toMatchObject({ status: "False", reason: "JobResumed" });
    expect(events(store, "held").map((e) => e.reason)).toEqual([
      "Suspended",
      "Resumed",
      "SuccessfulCreate",
      "Completed",
    ]);
  });

  test("a pod rejected by admission is a FailedCreate event, retried with backoff until it succeeds", async () => {
    const { store, clock } = setup(undefined, { syncBackoff: { initialMs: 1000, maxMs: 8000 } });
    store.create(R.jobs, jobSpec("early", {}, { serviceAccountName: "late" }));
    const [ev] = await waitFor(
      store,
      () => {
        const f = events(store, "early").filter((e) => e.reason === "FailedCreate");
        return f.length > 0 && f;
      },
      "FailedCreate",
    );
    expect(ev!.type).toBe("Warning");
    expect(ev!.message).toMatch(
      /^Error creating: pods "early-[a-z0-9]{5}" is forbidden: error looking up service account ns\/late: serviceaccount "late" not found$/,
    );
    expect(ev!.source).toEqual({ component: "job-controller" });
    store.create(R.sa, { metadata: { name: "late", namespace: "ns" } });
    clock.advance(1000);
    await waitFor(
      store,
      () => finished("Complete")(store.find(R.jobs, "ns", "early")),
      "Complete after retry",
    );
  });

  test("PodSecurity rejection is recorded with the apiserver's message", async () => {
    const { store } = setup();
    store.mutate(R.ns, undefined, "ns", (n) => ({
      ...n,
      metadata: {
        ...n.metadata,
        labels: { ...n.metadata.labels, "pod-security.kubernetes.io/enforce": "restricted" },
      },
    }));
    store.create(R.jobs, jobSpec("priv", {}, { hostPID: true }));
    const ev = await waitFor(
      store,
      () => events(store, "priv").find((e) => e.reason === "FailedCreate"),
      "FailedCreate",
    );
    expect(ev.message).toMatch(
      /^Error creating: pods "priv-[a-z0-9]{5}" is forbidden: violates PodSecurity "restricted:latest": host namespaces \(hostPID=true\), allowPrivilegeEscalation != false/,
    );
  });

  test("a forged pod carrying the Job's labels is not counted", async () => {
    const { store } = setup();
    const job = store.create(R.jobs, jobSpec("real", { suspend: true }));
    await waitFor(store, () => finished("Suspended")(store.find(R.jobs, "ns", "real")), "Suspended");
    const forged = store.create(R.pods, {
      metadata: { name: "forged", namespace: "ns", labels: job.spec.template.metadata.labels },
      spec: { nodeName: "elsewhere", containers: [{ name: "x", image: "x" }] },
    });
    store.mutate(R.pods, "ns", forged.metadata.name!, (p) => ({ ...p, status: { phase: "Succeeded" } }), {
      subresource: "status",
    });
    store.mutate(R.jobs, "ns", "real", (j) => ({ ...j, spec: { ...j.spec, suspend: false } }));
    const done = await waitFor(
      store,
      () => finished("Complete")(store.find(R.jobs, "ns", "real")),
      "Complete",
    );
    expect(done.status.succeeded).toBe(1);
    expect(podsOf(store, job)).toHaveLength(1);
    expect(events(store, "real").filter((e) => e.reason === "SuccessfulCreate")).toHaveLength(1);
  });
});
