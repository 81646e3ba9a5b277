/** The runs list for people (runsText, objectText): pure; listRuns itself is tested against a cluster. */
import { describe, expect, test } from "bun:test";
import { objectText, runsText } from "../../../src/runs/list.ts";
import type { RunView } from "../../../src/runs/types.ts";
import { rawControls } from "../../support/raw-controls.ts";

const ATTACK = "\x1b]0;pwned\x07\x1b[2J";
const SHOWN = "\\u001b]0;pwned\\u0007\\u001b[2J";
const NOW = new Date("2026-01-02T04:04:05Z");

const run = (over: Partial<RunView> = {}): RunView => ({
  runId: "20260102-030405-0123456789abcdef",
  created: "2026-01-02T03:04:05.000Z",
  command: "snapshot",
  namespace: "gpu-operator",
  job: "complete",
  podLive: false,
  anchors: [],
  objects: [
    { apiVersion: "batch/v1", kind: "Job", namespace: "gpu-operator", name: "aicr-x", uid: "u1", owners: [] },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      name: "aicr-node-reader-x",
      uid: "u2",
      owners: [],
    },
  ],
  ...over,
});

describe("runsText", () => {
  test("one aligned line per run, its objects indented", () => {
    expect(runsText([run()], NOW)).toBe(
      [
        "RUN ID                            AGE  COMMAND   NAMESPACE     JOB       POD  OBJECTS",
        "20260102-030405-0123456789abcdef  1h   snapshot  gpu-operator  complete  -    2",
        "    Job/gpu-operator/aicr-x",
        "    ClusterRole/aicr-node-reader-x",
      ].join("\n"),
    );
    expect(runsText([], NOW)).toBe("no aicr runs found");
  });

  test("names from the cluster holding terminal escapes are shown escaped, never raw", () => {
    const text = runsText(
      [
        run({
          runId: `r${ATTACK}`,
          namespace: `ns${ATTACK}`,
          objects: [
            {
              apiVersion: "v1",
              kind: "Pod",
              namespace: "ns",
              name: `p\u202e${ATTACK}`,
              uid: "u",
              owners: [],
            },
          ],
        }),
      ],
      NOW,
    );
    expect(rawControls(text)).toEqual([]);
    expect(text).toContain(`r${SHOWN}`);
    expect(text).toContain(`ns${SHOWN}`);
    expect(text).toContain(`    Pod/ns/p\\u202e${SHOWN}`);
    expect(objectText({ kind: "Job", namespace: "a\nb", name: "c" })).toBe("Job/a\\nb/c");
  });
});
