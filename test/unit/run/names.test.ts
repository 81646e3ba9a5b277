import { describe, expect, test } from "bun:test";
import { carriesInvocationLabels, runLabels, runPodSelector } from "../../../src/run/labels.ts";
import { nameWithRunId, runNames, stagingConfigMapName } from "../../../src/run/names.ts";
import { thrown } from "../../support/reject.ts";

const RUN = "20260821-142233-9f3a1c0b7e2d4a55";

describe("nameWithRunId", () => {
  const rows: [string, string, string, string][] = [
    ["short prefix", "aicr", RUN, `aicr-${RUN}`],
    ["exactly at the 30-character budget", "a".repeat(30), RUN, `${"a".repeat(30)}-${RUN}`],
    ["over budget is cut", "a".repeat(40), RUN, `${"a".repeat(30)}-${RUN}`],
    ["trailing dash trimmed", "agent-", RUN, `agent-${RUN}`],
    ["cut lands on a dash", `${"a".repeat(29)}-b`, RUN, `${"a".repeat(29)}-${RUN}`],
    ["only dashes degrade to the bare run ID", "----", RUN, RUN],
    ["empty prefix", "", RUN, RUN],
    ["empty run ID keeps the prefix", "aicr-", "", "aicr"],
  ];
  for (const [what, prefix, runId, want] of rows) {
    test(what, () => {
      const got = nameWithRunId(prefix, runId);
      expect(got).toBe(want);
      expect(got.length).toBeLessThanOrEqual(63);
      expect(got.endsWith("-")).toBe(false);
    });
  }
});

describe("runNames", () => {
  test("defaults: every name ends in the run ID; staging does not collide with validate's aicr-snapshot-<runID>", () => {
    expect(runNames({ runId: RUN })).toEqual({
      job: `aicr-${RUN}`,
      serviceAccount: `aicr-${RUN}`,
      clusterRole: `aicr-node-reader-${RUN}`,
      stagingConfigMap: `aicr-agent-snapshot-${RUN}`,
    });
    expect(stagingConfigMapName(RUN)).not.toBe(`aicr-snapshot-${RUN}`);
  });

  test("prefixes: dots are fine, three times 63 characters is cut", () => {
    expect(runNames({ runId: RUN, jobPrefix: "aicr.agent" }).job).toBe(`aicr.agent-${RUN}`);
    expect(runNames({ runId: RUN, serviceAccountPrefix: "a".repeat(189) }).serviceAccount).toBe(
      `${"a".repeat(30)}-${RUN}`,
    );
  });

  const bad: [string, { jobPrefix?: string; serviceAccountPrefix?: string }, string][] = [
    ["underscore", { jobPrefix: "agent_" }, "--job-name"],
    ["upper case", { jobPrefix: "Agent" }, "--job-name"],
    ["leading dash", { serviceAccountPrefix: "-agent" }, "--service-account-name"],
    ["a slash", { serviceAccountPrefix: "a/b" }, "--service-account-name"],
  ];
  for (const [what, input, flag] of bad) {
    test(`rejects ${what}, naming the flag and the value`, () => {
      const err = thrown(() => runNames({ runId: RUN, ...input }));
      expect(err.code).toBe("INVALID_REQUEST");
      expect(err.message).toContain(flag);
      expect(err.message).toContain(JSON.stringify(input.jobPrefix ?? input.serviceAccountPrefix));
    });
  }
});

describe("run labels", () => {
  const id = { runId: RUN, invocationId: "0123456789abcdef" };
  test("five labels, fresh map each call", () => {
    const a = runLabels(id);
    expect(a).toEqual({
      "app.kubernetes.io/name": "aicr",
      "app.kubernetes.io/managed-by": "aicr",
      "app.kubernetes.io/component": "snapshot-agent",
      "aicr.run/run-id": RUN,
      "aicr.run/invocation-id": "0123456789abcdef",
    });
    a.x = "y";
    expect(runLabels(id)).not.toHaveProperty("x");
  });
  test("the pod selector narrows by app and run only", () => {
    expect(runPodSelector(RUN)).toBe(`app.kubernetes.io/name=aicr,aicr.run/run-id=${RUN}`);
  });
  test("authorship needs all five labels of this invocation and non-empty IDs", () => {
    expect(carriesInvocationLabels(runLabels(id), id)).toBe(true);
    expect(carriesInvocationLabels({ ...runLabels(id), "aicr.run/invocation-id": "other" }, id)).toBe(false);
    // A validation object of this invocation is as much its own as an agent object.
    expect(
      carriesInvocationLabels({ ...runLabels(id), "app.kubernetes.io/component": "validation" }, id),
    ).toBe(true);
    expect(carriesInvocationLabels({ ...runLabels(id), "app.kubernetes.io/managed-by": "helm" }, id)).toBe(
      false,
    );
    expect(carriesInvocationLabels(undefined, id)).toBe(false);
    expect(
      carriesInvocationLabels(runLabels({ runId: "", invocationId: "" }), { runId: "", invocationId: "" }),
    ).toBe(false);
  });
});
