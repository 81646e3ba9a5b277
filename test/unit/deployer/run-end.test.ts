/** The proof that ends a run (deployer/run-end.ts), fed its facts in every order. */
import { describe, expect, test } from "bun:test";
import { AicrError } from "../../../src/core/errors.ts";
import type { ResultConfigMap } from "../../../src/deployer/result.ts";
import { awaitRunEnd, provenanceOf, type RunEndInputs } from "../../../src/deployer/run-end.ts";
import type { AgentExit, JobOutcome, PodState } from "../../../src/deployer/wait.ts";
import type { Snapshot } from "../../../src/snapshot/schema.ts";
import { rejection } from "../../support/reject.ts";

const RUN = { runId: "20261202-100000-00000000000000aa", jobUid: "job-1" };

const doc = (metadata: Record<string, string>): Snapshot => ({
  apiVersion: "aicr.run/v1",
  kind: "Snapshot",
  metadata,
  measurements: [],
});
const stamped = (pod: string, extra: Record<string, string> = {}) =>
  doc({ "run-id": RUN.runId, "job-uid": RUN.jobUid, "pod-uid": pod, ...extra });

const cm = (rv: string, d: Snapshot): ResultConfigMap & { doc: Snapshot } => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "out", namespace: "ns", resourceVersion: rv },
  data: { "snapshot.yaml": `rv ${rv}` },
  doc: d,
});

const pod = (uid: string): PodState => ({ metadata: { name: `p-${uid}`, uid } });
const exit = (uid: string, exitCode = 0, message?: string): AgentExit => ({
  pod: pod(uid),
  exitCode,
  ...(message ? { message } : {}),
});

/** Facts the test settles by hand, and what the judge asked for. */
function facts(o: { writes?: ResultConfigMap[]; read?: ResultConfigMap | Error } = {}) {
  const exitP = Promise.withResolvers<AgentExit>();
  const job = Promise.withResolvers<JobOutcome>();
  const writes = [...(o.writes ?? [])];
  const calls = { reads: 0, parses: 0 };
  const inputs: RunEndInputs = {
    run: () => RUN,
    exit: exitP.promise,
    completion: job.promise,
    writes: () => writes,
    read: async () => {
      calls.reads++;
      if (o.read instanceof Error) throw o.read;
      if (!o.read) throw new Error("nothing to read");
      return o.read;
    },
    parse: (c) => {
      calls.parses++;
      return { document: (c as { doc: Snapshot }).doc, content: c.data?.["snapshot.yaml"] ?? "" };
    },
    output: "ns/out",
  };
  return { inputs, exit: exitP, job, writes, calls };
}

describe("provenanceOf", () => {
  test("proven, another pod of this Job, unnamed, foreign", () => {
    expect(provenanceOf(stamped("p1"), RUN, "p1")).toBe("proven");
    expect(provenanceOf(stamped("p0"), RUN, "p1")).toBe("other-pod");
    expect(provenanceOf(doc({}), RUN, "p1")).toBe("unnamed");
    expect(provenanceOf(doc({ "run-id": RUN.runId }), RUN, "p1")).toBe("unnamed");
    expect(provenanceOf(stamped("p1", { "run-id": "20261202-100000-00000000000000bb" }), RUN, "p1")).toBe(
      "foreign",
    );
    expect(provenanceOf(stamped("p1", { "job-uid": "job-2" }), RUN, "p1")).toBe("foreign");
  });
});

describe("awaitRunEnd", () => {
  test("the write arrives first, then the pod's exit 0: proven from the event, no read", async () => {
    const f = facts({ writes: [cm("5", stamped("p1"))] });
    f.exit.resolve(exit("p1"));
    const end = await awaitRunEnd(f.inputs);
    expect(end).toMatchObject({ ok: true, by: "pod", content: "rv 5" });
    expect(f.calls.reads).toBe(0);
  });

  test("the exit arrives first, no write seen: one read proves it; the Job's condition is never waited for", async () => {
    const f = facts({ read: cm("6", stamped("p1")) });
    f.exit.resolve(exit("p1"));
    expect(await awaitRunEnd(f.inputs)).toMatchObject({ ok: true, by: "pod", content: "rv 6" });
    expect(f.calls.reads).toBe(1);
  });

  test("a later write of another pod hides this pod's: the older event still proves it", async () => {
    const f = facts({ writes: [cm("5", stamped("p1")), cm("7", stamped("p2"))] });
    f.exit.resolve(exit("p1"));
    expect(await awaitRunEnd(f.inputs)).toMatchObject({ ok: true, by: "pod", content: "rv 5" });
    expect(f.calls.reads).toBe(0);
  });

  test("the container fails after writing: the run fails with its exit, whatever was written", async () => {
    const f = facts({ writes: [cm("5", stamped("p1"))] });
    f.exit.resolve(exit("p1", 3, "collector failed"));
    const end = await awaitRunEnd(f.inputs);
    expect(end).toMatchObject({ ok: false, condition: { message: "collector failed" } });
    expect(end.ok ? undefined : end.pod?.metadata.uid).toBe("p1");
  });

  test("a document naming no pod waits for the Job's condition, then is taken", async () => {
    const f = facts({ read: cm("6", doc({})) });
    f.exit.resolve(exit("p1"));
    const ending = awaitRunEnd(f.inputs);
    let settled = false;
    void ending.then(() => (settled = true));
    await Bun.sleep(5);
    expect(settled).toBe(false);
    f.job.resolve({ succeeded: true });
    expect(await ending).toMatchObject({ ok: true, by: "job", content: "rv 6" });
  });

  test("a replaced pod's document (another pod of this Job) is not this pod's proof: the Job decides", async () => {
    const f = facts({ read: cm("6", stamped("p0")) });
    f.exit.resolve(exit("p1"));
    const ending = awaitRunEnd(f.inputs);
    f.job.resolve({ succeeded: false, reason: "BackoffLimitExceeded", message: "limit" });
    expect(await ending).toMatchObject({ ok: false, condition: { reason: "BackoffLimitExceeded" } });
  });

  test("the Job's condition before any pod event: Failed fails, Complete takes the run's latest write", async () => {
    const failed = facts();
    failed.job.resolve({ succeeded: false, reason: "DeadlineExceeded" });
    expect(await awaitRunEnd(failed.inputs)).toMatchObject({
      ok: false,
      condition: { reason: "DeadlineExceeded" },
    });

    const done = facts({ writes: [cm("5", stamped("p1")), cm("8", stamped("x", { "run-id": "other" }))] });
    done.job.resolve({ succeeded: true });
    expect(await awaitRunEnd(done.inputs)).toMatchObject({ ok: true, by: "job", content: "rv 5" });
  });

  test("after the Job completes, a document of another run is refused (CONFLICT), never returned", async () => {
    const f = facts({ read: cm("9", stamped("x", { "run-id": "20261202-100000-00000000000000bb" })) });
    f.job.resolve({ succeeded: true });
    const err = await rejection(awaitRunEnd(f.inputs));
    expect(err).toMatchObject({ code: "CONFLICT" });
    expect(String((err as Error).message)).toContain("20261202-100000-00000000000000bb");
  });

  test("each write is parsed once however many facts look at it", async () => {
    const f = facts({ writes: [cm("5", doc({}))], read: cm("5", doc({})) });
    f.exit.resolve(exit("p1"));
    const ending = awaitRunEnd(f.inputs);
    f.job.resolve({ succeeded: true });
    await ending;
    // The event's document twice (proof, then the Job's choice) and the read's once: two parses.
    expect(f.calls.parses).toBe(2);
  });

  test("a failed read (NOT_FOUND) after the exit ends the run with it", async () => {
    const f = facts({
      read: new AicrError("NOT_FOUND", "the agent finished but ConfigMap ns/out does not exist"),
    });
    f.exit.resolve(exit("p1"));
    expect((await rejection(awaitRunEnd(f.inputs))).code).toBe("NOT_FOUND");
  });
});
