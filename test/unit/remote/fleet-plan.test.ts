import { describe, expect, test } from "bun:test";
import { planAgentRun } from "../../../src/deployer/deployer.ts";
import { buildNodeJob } from "../../../src/deployer/fleet-deployer.ts";
import { FleetDispatcher } from "../../../src/deployer/fleet-dispatch.ts";
import {
  fleetFailure,
  fleetReport,
  formatFleetProgress,
  multiDocument,
  nodeFileName,
  sampleEvenly,
  selectFleetNodes,
} from "../../../src/remote/_fleet-plan.ts";
import { runLabels } from "../../../src/run/labels.ts";
import { fleetNodeNames } from "../../../src/run/names.ts";
import { thrown } from "../../support/reject.ts";

const RUN = "20260101-000000-0123456789abcdef";

describe("fleet names", () => {
  test("<prefix>-<runID>-<index> within 63 characters; the prefix is cut, never the index", () => {
    expect(fleetNodeNames({ runId: RUN }, 7)).toEqual({
      job: `aicr-${RUN}-7`,
      stagingConfigMap: expect.stringMatching(new RegExp(`-${RUN}-7$`)),
    });
    const long = fleetNodeNames({ runId: RUN, jobPrefix: "a".repeat(60) }, 999);
    expect(long.job.length).toBeLessThanOrEqual(63);
    expect(long.job.endsWith(`-${RUN}-999`)).toBe(true);
    expect(long.stagingConfigMap.length).toBeLessThanOrEqual(63);
    expect(() => fleetNodeNames({ runId: RUN, jobPrefix: "Bad_" }, 0)).toThrow(/--job-name/);
  });
});

describe("node selection", () => {
  const nodes = Array.from({ length: 10 }, (_, i) => `n${i}`);
  test("sorted, deduplicated; --sample evenly spaced and deterministic", () => {
    expect(selectFleetNodes(["b", "a", "b"], {}, "x")).toEqual(["a", "b"]);
    expect(sampleEvenly(nodes, 3)).toEqual(["n0", "n3", "n6"]);
    expect(sampleEvenly(nodes, 20)).toEqual(nodes);
    expect(selectFleetNodes([...nodes].reverse(), { sample: 5 }, "x")).toEqual([
      "n0",
      "n2",
      "n4",
      "n6",
      "n8",
    ]);
  });
  test("--max-nodes refuses with the count; none is NOT_FOUND", () => {
    expect(() => selectFleetNodes(nodes, { maxNodes: 4 }, "x")).toThrow(/10 nodes.*--max-nodes 4/);
    expect(selectFleetNodes(nodes, { maxNodes: 4, sample: 4 }, "x")).toHaveLength(4);
    expect(thrown(() => selectFleetNodes([], {}, "pool=a")).code).toBe("NOT_FOUND");
  });
});

describe("fleet.json and outputs", () => {
  const ok = { node: "b", status: "ok" as const, job: "j-1" };
  const bad = {
    node: "a",
    status: "failed" as const,
    job: "j-0",
    error: { code: "NOT_FOUND", message: "no node" },
  };
  test("records in node order with counts; partial failure is INTERNAL naming N of M", () => {
    const r = fleetReport(RUN, [ok, bad]);
    expect(r).toMatchObject({ kind: "FleetSnapshot", runId: RUN, nodes: 2, ok: 1, failed: 1 });
    expect(r.results.map((x) => x.node)).toEqual(["a", "b"]);
    const f = fleetFailure(r);
    expect(f?.code).toBe("INTERNAL");
    expect(f?.message).toContain("1 of 2 nodes failed: a");
    expect(fleetFailure(fleetReport(RUN, [ok]))).toBeUndefined();
  });
  test("file names are node names only; multi-document YAML has one --- per node", () => {
    expect(nodeFileName("gpu-1.example", "yaml")).toBe("gpu-1.example.yaml");
    expect(() => nodeFileName("../etc", "yaml")).toThrow();
    expect(
      multiDocument([
        { node: "b", content: "x: 2\n" },
        { node: "a", content: "x: 1" },
      ]),
    ).toBe("---\nx: 1\n---\nx: 2\n");
  });
  test("progress line: counts and ETA", () => {
    expect(formatFleetProgress({ total: 10, done: 4, failed: 1, running: 3 }, 5000)).toBe(
      "fleet: 4/10 done, 3 running, 2 pending, 1 failed; 5s so far, ETA 5s",
    );
    expect(formatFleetProgress({ total: 2, done: 0, failed: 0, running: 2 }, 1000)).toContain("ETA unknown");
  });
});

describe("node Job and dispatcher", () => {
  test("each Job pinned by required node affinity on the hostname, writing its own staging ConfigMap", () => {
    const config = {
      namespace: "ns",
      identity: { runId: RUN, invocationId: "i" },
      labels: runLabels({ runId: RUN, invocationId: "i" }),
      image: "img",
      privileged: true,
    };
    const { job, names } = buildNodeJob(
      config,
      planAgentRun(config),
      { serviceAccountName: "sa", owner: undefined },
      "gpu-3",
      3,
    );
    expect(job.metadata.name).toBe(`aicr-${RUN}-3`);
    expect(
      job.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
        .nodeSelectorTerms,
    ).toEqual([{ matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: ["gpu-3"] }] }]);
    expect(job.spec.template.spec.containers[0]?.args).toContain(`cm://ns/${names.stagingConfigMap}`);
  });
  test("events are routed by Job UID; early ones held (latest only) and replayed on register", () => {
    const d = new FleetDispatcher();
    const pod = (uid: string, phase: string) =>
      ({
        metadata: { name: "p", ownerReferences: [{ kind: "Job", uid, controller: true }] },
        status: { phase },
      }) as never;
    d.pod(pod("u1", "Pending"), "ADDED");
    d.pod(pod("u1", "Running"), "MODIFIED");
    d.pod(pod("u2", "Running"), "ADDED");
    expect(d.held).toBe(2);
    const seen: string[] = [];
    d.register("u1", { pod: (p) => seen.push((p.status as { phase: string }).phase), job: () => {} });
    expect(seen).toEqual(["Running"]);
    d.pod(pod("u1", "Succeeded"), "MODIFIED");
    expect(seen).toEqual(["Running", "Succeeded"]);
    d.unregister("u1");
    d.pod(pod("u1", "Failed"), "MODIFIED");
    expect(seen).toHaveLength(2);
  });
});
