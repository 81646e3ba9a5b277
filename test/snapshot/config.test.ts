/** `aicr snapshot --config` in remote mode: placement from the file is the operator's choice; a bad file sends nothing. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { requestsSince } from "../support/requests.ts";
import {
  AGENT_IMAGE,
  freshNamespace,
  lastSeq,
  runSnapshot,
  snapshotCluster,
  TEST_MS,
  untilNoRunObjects,
  writes,
} from "./_harness.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "aicr-config-snap-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
const configFile = (snapshot: string): string => {
  const file = join(dir, `config-${++files}.yaml`);
  writeFileSync(file, `apiVersion: aicr.run/v1\nkind: AICRConfig\nspec:\n  snapshot:\n${snapshot}`);
  return file;
};

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: snapshotCluster });
    let admin: string;
    beforeAll(() => {
      admin = cluster().kubeconfigFor("admin");
    });

    /** The nodeSelector of every agent Job created in `ns` since request `from`. */
    const jobSelectors = (ns: string, from: number) =>
      writes(cluster(), from)
        .filter((e) => e.method === "POST" && e.path === `/apis/batch/v1/namespaces/${ns}/jobs`)
        .map(
          (e) =>
            (e.body as { spec: { template: { spec: { nodeSelector?: Record<string, string> } } } }).spec
              .template.spec.nodeSelector,
        );

    test(
      "nodeSelector from the file places the agent on that node, with no GPU auto-targeting",
      async () => {
        const ns = await freshNamespace(cluster(), "config-placement");
        const file = configFile(
          `    agent:\n      namespace: ${ns}\n      image: ${AGENT_IMAGE}\n      nodeSelector:\n        kubernetes.io/hostname: cpu-node-1\n    format: json\n`,
        );
        const since = lastSeq(cluster());
        const r = await runSnapshot(admin, ["--config", file]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).not.toContain("auto-targeting GPU nodes");
        expect(r.stderr).toContain("running on cpu-node-1");
        expect(jobSelectors(ns, since)).toEqual([{ "kubernetes.io/hostname": "cpu-node-1" }]);
        const doc = parseSnapshot(r.stdout, "stdout");
        expect(JSON.parse(r.stdout).kind).toBe("Snapshot");
        expect(doc.metadata["source-node"]).toBe("cpu-node-1");
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "--node-selector on the command line replaces the file's selector (not added to it)",
      async () => {
        const ns = await freshNamespace(cluster(), "config-override");
        const file = configFile(
          `    namespace: ${ns}\n    image: ${AGENT_IMAGE}\n    nodeSelector:\n      kubernetes.io/hostname: cpu-node-1\n      zone: nowhere\n`,
        );
        const since = lastSeq(cluster());
        const r = await runSnapshot(admin, [
          "--config",
          file,
          "--node-selector",
          "kubernetes.io/hostname=gpu-node-1",
        ]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).not.toContain("auto-targeting GPU nodes");
        expect(jobSelectors(ns, since)).toEqual([{ "kubernetes.io/hostname": "gpu-node-1" }]);
        expect(parseSnapshot(r.stdout, "stdout").metadata["source-node"]).toBe("gpu-node-1");
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "a config error (a key, a type, a value its flag refuses) exits 2 with zero requests",
      async () => {
        const before = cluster().log.entries.length;
        for (const [body, text] of [
          [
            "    agent:\n      nodeSelectr: {a: b}\n",
            'spec.snapshot.agent.nodeSelectr: unknown key for "aicr snapshot": did you mean "nodeSelector"?',
          ],
          [
            "    agent:\n      nodeSelector: true\n",
            "spec.snapshot.agent.nodeSelector: expected a map of strings",
          ],
          ["    agent:\n      nodeSelector:\n        bad key: x\n", "--node-selector"],
          ["    runId: 20260101-000000-0000000000000000\n", "--run-id cannot be set in a config file"],
        ] as const) {
          const file = configFile(`    namespace: config-bad\n    image: ${AGENT_IMAGE}\n${body}`);
          const r = await runSnapshot(admin, ["--config", file]);
          expect(r.code, r.stderr).toBe(2);
          expect(r.stderr).toContain("[INVALID_REQUEST]");
          expect(r.stderr).toContain(text);
          expect(r.stdout).toBe("");
        }
        expect(requestsSince(cluster(), before)).toEqual([]);
      },
      TEST_MS,
    );
  });
