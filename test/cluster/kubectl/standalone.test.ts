/**
 * `npm run cluster` (fake) and `npm run cluster:real` (the real control plane): the spawned process
 * prints KUBECONFIG first, kubectl of the same release and the compiled aicr work against it, and
 * SIGTERM stops everything.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseSnapshot } from "../../../src/snapshot/schema.ts";
import { KUBERNETES_VERSION } from "../../control-plane/build.ts";
import { AICR, baseEnv, ensureBuilt, ROOT } from "../../e2e/_aicr.ts";
import { until } from "../../support/until.ts";
import { BACKENDS } from "../testbed.ts";
import { kubectl } from "./kubectl.ts";

const SCRIPT = join(import.meta.dir, "..", "standalone.ts");
const IMAGE = "ghcr.io/nvidia/aicr:fake";
const NS = "standalone";
const LONG = 240_000;
const NAMESPACED = "serviceaccounts,roles,rolebindings,jobs,pods,configmaps";
const CLUSTER_WIDE = "clusterroles,clusterrolebindings";

/** Collects a stream as text; `firstLine` resolves with its first line. */
function collect(stream: ReadableStream<Uint8Array>) {
  let text = "";
  let resolveLine: (line: string) => void = () => {};
  const firstLine = new Promise<string>((r) => {
    resolveLine = r;
  });
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      text += decoder.decode(chunk, { stream: true });
      if (text.includes("\n")) resolveLine(text.split("\n")[0]!);
    }
    resolveLine(text);
  })();
  return { firstLine, text: () => text };
}

async function run(args: string[], kubeconfig: string) {
  const proc = Bun.spawn([AICR, ...args], {
    cwd: ROOT,
    env: baseEnv({ KUBECONFIG: kubeconfig }),
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

for (const backend of BACKENDS) {
  const script = backend === "real" ? "npm run cluster:real" : "npm run cluster";
  describe(`[${backend}] ${script} (standalone.ts${backend === "real" ? " --real" : ""})`, () => {
    let proc: ReturnType<typeof Bun.spawn> & { stdout: ReadableStream<Uint8Array> };
    let out: ReturnType<typeof collect>;
    let err: ReturnType<typeof collect>;
    let kubeconfig: string;
    const tmp = mkdtempSync(join(tmpdir(), "aicr-standalone-"));
    /** A check the fake cannot pass (the reason is given where it is used); it runs on the real apiserver. */
    const realOnly = test.skipIf(backend === "fake");

    /** Every object of the run, namespaced and cluster-wide, as kubectl lists them. */
    const objectsOfRun = async (id: string): Promise<string> => {
      const sel = `aicr.run/run-id=${id}`;
      const a = await kubectl(kubeconfig, ["get", NAMESPACED, "-A", "-l", sel, "-o", "name"]);
      const b = await kubectl(kubeconfig, ["get", CLUSTER_WIDE, "-l", sel, "-o", "name"]);
      expect({ a: a.code, b: b.code, err: a.stderr + b.stderr }).toEqual({ a: 0, b: 0, err: "" });
      return a.stdout + b.stdout;
    };
    /**
     * Waits until no object of the run is left: a Job deleted in the foreground and its pods end a
     * moment after aicr returns. The spawned cluster has no store to subscribe to, so kubectl asks
     * again until the answer is empty.
     */
    const nothingLeft = (id: string) =>
      until(() => objectsOfRun(id), `no object of run ${id} left`, {
        ms: 60_000,
        everyMs: 200,
        accept: (s) => s === "",
      });

    beforeAll(async () => {
      await ensureBuilt();
      proc = Bun.spawn([process.execPath, SCRIPT, ...(backend === "real" ? ["--real"] : [])], {
        stdout: "pipe",
        stderr: "pipe",
        stdin: "ignore",
        // Its own temporary directory: what it leaves after stopping is then plain to see.
        env: { ...process.env, TMPDIR: tmp },
      }) as typeof proc;
      out = collect(proc.stdout);
      err = collect(proc.stderr as ReadableStream<Uint8Array>);
      const line = await out.firstLine;
      if (!/^KUBECONFIG=\/.+/.test(line))
        throw new Error(`first stdout line is not KUBECONFIG=<path>: ${JSON.stringify(line)}\n${err.text()}`);
      kubeconfig = line.slice("KUBECONFIG=".length);
    }, LONG);
    afterAll(async () => {
      if (proc && proc.exitCode === null) {
        proc.kill("SIGTERM");
        await proc.exited;
      }
    }, LONG);

    test(
      "prints KUBECONFIG first; kubectl lists its nodes (one GPU node tainted)",
      async () => {
        const nodes = await kubectl(kubeconfig, ["get", "nodes", "-o", "name"]);
        expect(nodes.stdout).toBe("node/cpu-node-1\nnode/gpu-node-1\nnode/gpu-node-2\n");
        const gpu = await kubectl(kubeconfig, [
          "get",
          "nodes",
          "-l",
          "nvidia.com/gpu.present=true",
          "-o",
          "json",
        ]);
        const items = JSON.parse(gpu.stdout).items;
        expect(
          items.map(
            (n: { status: { allocatable: Record<string, string> } }) =>
              n.status.allocatable["nvidia.com/gpu"],
          ),
        ).toEqual(["8", "8"]);
        expect(items[1].spec.taints).toEqual([
          { key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" },
        ]);
      },
      LONG,
    );

    test(
      "kubectl version shows the server's version",
      async () => {
        const res = await kubectl(kubeconfig, ["version", "-o", "json"]);
        expect(res.code).toBe(0);
        const { serverVersion } = JSON.parse(res.stdout);
        expect(serverVersion.gitVersion).toBe(
          backend === "real" ? KUBERNETES_VERSION : `${KUBERNETES_VERSION}-aicr-fake`,
        );
      },
      LONG,
    );

    // fake: /openapi/v3 is 404.
    realOnly(
      "kubectl get --raw /openapi/v3",
      async () => {
        const res = await kubectl(kubeconfig, ["get", "--raw", "/openapi/v3"]);
        expect(res.code).toBe(0);
        expect(Object.keys(JSON.parse(res.stdout).paths)).toContain("apis/nvidia.com/v1");
      },
      LONG,
    );

    // fake: SelfSubjectRulesReview is not served.
    realOnly(
      "kubectl auth can-i --list",
      async () => {
        const res = await kubectl(kubeconfig, ["auth", "can-i", "--list"]);
        expect(res.code).toBe(0);
        expect(res.stdout).toMatch(/^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
      },
      LONG,
    );

    // fake: SelfSubjectReview is not served.
    realOnly(
      "kubectl auth whoami",
      async () => {
        const res = await kubectl(kubeconfig, ["auth", "whoami"]);
        expect(res.code).toBe(0);
        expect(res.stdout).toMatch(/^Username\s+admin$/m);
        expect(res.stdout).toMatch(/^Groups\s+\[system:masters system:authenticated\]$/m);
      },
      LONG,
    );

    // fake: kubectl's typed generators send protobuf, answered 415.
    realOnly(
      "kubectl create sa x",
      async () => {
        const res = await kubectl(kubeconfig, ["create", "sa", "x"]);
        expect(res).toMatchObject({ code: 0, stdout: "serviceaccount/x created\n" });
      },
      LONG,
    );

    test(
      `aicr snapshot --image ${IMAGE}, then aicr validate: both succeed and leave no run object`,
      async () => {
        const snap = await run(["snapshot", "-n", NS, "--image", IMAGE], kubeconfig);
        expect({ code: snap.code, err: snap.code ? snap.stderr : "" }).toEqual({ code: 0, err: "" });
        const snapId = snap.stderr.match(/runID=(\S+)/)?.[1];
        expect(snapId).toBeDefined();
        const doc = parseSnapshot(snap.stdout, "snapshot");
        expect(doc.metadata["run-id"]).toBe(snapId!);
        expect(String(doc.metadata["source-node"])).toMatch(/^gpu-node-[12]$/);
        await nothingLeft(snapId!);

        const val = await run(
          ["validate", "-r", join(ROOT, "examples/recipe.yaml"), "-n", NS, "--image", IMAGE],
          kubeconfig,
        );
        expect({ code: val.code, err: val.code ? val.stderr : "" }).toEqual({ code: 0, err: "" });
        const report = JSON.parse(val.stdout).results;
        expect(report.summary).toMatchObject({ tests: 8, passed: 8, failed: 0 });
        const valId = val.stderr.match(/^validate run: runID=(\S+)$/m)?.[1];
        expect(valId).toBeDefined();
        await nothingLeft(valId!);
      },
      LONG,
    );

    test(
      "SIGTERM stops it: exit 0, and its temporary directory is left empty (no CA key, kubeconfig or data)",
      async () => {
        proc.kill("SIGTERM");
        expect(await proc.exited).toBe(0);
        expect(out.text()).toContain("# SIGTERM: stopping");
        // Nothing left behind: no PKI (the CA key), no kubeconfigs, no etcd data.
        await until(() => readdirSync(tmp).length === 0, `${tmp} empty after the stop`, 30_000);
        rmSync(tmp, { recursive: true, force: true });
      },
      LONG,
    );
  });
}
