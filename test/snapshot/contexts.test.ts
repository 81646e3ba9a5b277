/**
 * Several clusters in one invocation: `aicr snapshot --context a --context b -o out/` and
 * `--all-contexts`, against two fake clusters named by one kubeconfig. Fake backend only: two real
 * control planes (each with its kubelet) at once are too heavy for the 2-core test machine.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import type { LoggedRequest } from "../cluster/request-log.ts";
import { AICR, baseEnv } from "../e2e/_aicr.ts";
import { useCluster } from "../support/cluster.ts";
import {
  AGENT_IMAGE,
  type Cluster,
  freshNamespace,
  HANGING_IMAGE,
  lastSeq,
  runIdOf,
  runSnapshot,
  snapshotCluster,
  spawnSnapshot,
  TEST_MS,
  untilNoRunObjects,
  writes,
} from "./_harness.ts";

interface KubeconfigDoc {
  clusters: { name: string; cluster: Record<string, unknown> }[];
  users: { name: string; user: Record<string, unknown> }[];
  contexts: { name: string; context: { cluster: string; user: string; namespace?: string } }[];
}

/** One kubeconfig naming each cluster as its own context (cluster, user and context renamed). */
function mergedKubeconfig(
  dir: string,
  file: string,
  parts: { name: string; path: string; namespace: string }[],
) {
  const merged: KubeconfigDoc & Record<string, unknown> = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [],
    users: [],
    contexts: [],
    "current-context": parts[0]?.name,
  };
  for (const p of parts) {
    const doc = parse(readFileSync(p.path, "utf8")) as KubeconfigDoc;
    merged.clusters.push({ name: p.name, cluster: doc.clusters[0]?.cluster ?? {} });
    merged.users.push({ name: `${p.name}-user`, user: doc.users[0]?.user ?? {} });
    merged.contexts.push({
      name: p.name,
      context: { cluster: p.name, user: `${p.name}-user`, namespace: p.namespace },
    });
  }
  const path = join(dir, file);
  writeFileSync(path, stringify(merged), { mode: 0o600 });
  return path;
}

const jobPost = (ns: string, since: number) => (e: LoggedRequest) =>
  e.seq > since &&
  e.method === "POST" &&
  e.path === `/apis/batch/v1/namespaces/${ns}/jobs` &&
  e.status === 201;
const jobDelete = (ns: string, since: number) => (e: LoggedRequest) =>
  e.seq > since && e.method === "DELETE" && e.path.startsWith(`/apis/batch/v1/namespaces/${ns}/jobs/`);

/** The order, across both clusters, in which each one's agent Job was created and deleted. */
function jobTimeline(sides: { tag: string; cluster: Cluster; ns: string }[]): {
  order: string[];
  settled: Promise<unknown>;
} {
  const order: string[] = [];
  const waits = sides.flatMap(({ tag, cluster, ns }) => {
    const since = lastSeq(cluster);
    return [
      cluster.log.waitFor(jobPost(ns, since)).then(() => order.push(`${tag}:create`)),
      cluster.log.waitFor(jobDelete(ns, since)).then(() => order.push(`${tag}:delete`)),
    ];
  });
  return { order, settled: Promise.all(waits) };
}

describe("[fake] two clusters, one invocation", () => {
  const a = useCluster("fake", { start: snapshotCluster });
  const b = useCluster("fake", { start: snapshotCluster });
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "aicr-contexts-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const img = ["--image", AGENT_IMAGE];

  async function setup(tag: string, bUser = "admin") {
    const nsA = await freshNamespace(a(), `${tag}-a`);
    const nsB = await freshNamespace(b(), `${tag}-b`);
    if (bUser !== "admin") b().addUser(bUser, []);
    const kubeconfig = mergedKubeconfig(dir, `${tag}.kubeconfig`, [
      { name: "a", path: a().kubeconfigFor("admin"), namespace: nsA },
      { name: "b", path: b().kubeconfigFor(bUser), namespace: nsB },
    ]);
    const cwd = mkdtempSync(join(dir, `${tag}-cwd-`));
    return { nsA, nsB, kubeconfig, cwd };
  }

  for (const [label, selection] of [
    ["--context a --context b", ["--context", "a", "--context", "b"]],
    ["--all-contexts", ["--all-contexts"]],
  ] as const)
    test(
      `${label} -o out/: both captured at once, one run ID, a file each, nothing left`,
      async () => {
        const { nsA, nsB, kubeconfig, cwd } = await setup(label.startsWith("--all") ? "all" : "two");
        const timeline = jobTimeline([
          { tag: "a", cluster: a(), ns: nsA },
          { tag: "b", cluster: b(), ns: nsB },
        ]);
        const r = await runSnapshot(kubeconfig, [...selection, ...img, "-o", "out/"], {}, cwd);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toBe("");
        await timeline.settled;
        // Overlap: each cluster's Job was created before the other's was deleted.
        const at = (e: string) => timeline.order.indexOf(e);
        expect(at("a:create"), timeline.order.join(" ")).toBeLessThan(at("b:delete"));
        expect(at("b:create"), timeline.order.join(" ")).toBeLessThan(at("a:delete"));
        const runId = runIdOf(r.stderr);
        for (const [ctx, ns] of [
          ["a", nsA],
          ["b", nsB],
        ] as const) {
          const doc = parseSnapshot(readFileSync(join(cwd, "out", `${ctx}.yaml`), "utf8"), `${ctx}.yaml`);
          expect(doc.metadata["run-id"]).toBe(runId);
          expect(r.stderr).toContain(`[${ctx}] `);
          expect(r.stderr).toMatch(new RegExp(`\\[${ctx}\\] .*cleaned up`));
          // The context's own namespace from the kubeconfig.
          expect(r.stderr).toContain(ns);
        }
        expect(r.stderr).toMatch(/CONTEXT\s+SERVER\s+STATUS\s+DURATION\s+RESULT/);
        expect(r.stderr).toMatch(/\na\s+http\S+\s+ok\s+\S+s\s+out\/a\.yaml/);
        expect(r.stderr).toMatch(/\nb\s+http\S+\s+ok\s+\S+s\s+out\/b\.yaml/);
        expect(r.stderr).toContain("2 of 2 contexts succeeded");
        // One run ID line for the invocation.
        expect(r.stderr.match(/snapshot agent run: runID=/g)?.length).toBe(1);
        await untilNoRunObjects(a(), nsA);
        await untilNoRunObjects(b(), nsB);
      },
      TEST_MS,
    );

  test(
    "--all-nodes with two contexts: a fleet per cluster, written to out/<context>/ with its fleet.json",
    async () => {
      const { nsA, nsB, kubeconfig, cwd } = await setup("fleets");
      const r = await runSnapshot(
        kubeconfig,
        ["--context", "a", "--context", "b", "--all-nodes", ...img, "-o", "out/"],
        {},
        cwd,
      );
      expect(r.code, r.stderr).toBe(0);
      const runId = runIdOf(r.stderr);
      for (const ctx of ["a", "b"]) {
        const fleet = JSON.parse(readFileSync(join(cwd, "out", ctx, "fleet.json"), "utf8")) as {
          runId: string;
          ok: number;
          failed: number;
        };
        expect(fleet).toMatchObject({ runId, ok: 1, failed: 0 });
        const doc = parseSnapshot(
          readFileSync(join(cwd, "out", ctx, "gpu-node-1.yaml"), "utf8"),
          `${ctx}/gpu-node-1.yaml`,
        );
        expect(doc.metadata["run-id"]).toBe(runId);
      }
      expect(r.stderr).toMatch(/\na\s+http\S+\s+ok\s+\S+s\s+out\/a\//);
      expect(r.stderr).toContain("2 of 2 contexts succeeded");
      await untilNoRunObjects(a(), nsA);
      await untilNoRunObjects(b(), nsB);
    },
    TEST_MS,
  );

  test(
    "b refused at its gate (a user without rights): a is still captured; the summary and exit 8 say so; nothing left",
    async () => {
      const { nsA, nsB, kubeconfig, cwd } = await setup("gate", "nobody");
      const sinceB = lastSeq(b());
      const r = await runSnapshot(
        kubeconfig,
        ["--context", "a", "--context", "b", ...img, "-o", "out/", "--log-json"],
        {},
        cwd,
      );
      expect(r.code, r.stderr).toBe(8);
      expect(existsSync(join(cwd, "out", "a.yaml"))).toBe(true);
      expect(existsSync(join(cwd, "out", "b.yaml"))).toBe(false);
      const lines = r.stderr
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const summary = lines.find((l) => l.msg === "contexts summary") as {
        contexts: { context: string; status: string; code?: string; output?: string }[];
      };
      expect(summary.contexts.map((c) => [c.context, c.status])).toEqual([
        ["a", "ok"],
        ["b", "failed"],
      ]);
      expect(summary.contexts[0]?.output).toBe("out/a.yaml");
      expect(summary.contexts[1]?.code).toBe("UNAUTHORIZED");
      // b's own error line says which context it belongs to.
      expect(lines.find((l) => l.level === "error" && l.context === "b")).toBeDefined();
      const final = lines.at(-1) as Record<string, unknown>;
      expect(final.msg).toBe("1 of 2 contexts failed: b");
      expect(final.code).toBe("INTERNAL");
      // The gate refused before anything was written to b.
      expect(writes(b(), sinceB)).toEqual([]);
      await untilNoRunObjects(a(), nsA);
      await untilNoRunObjects(b(), nsB);
    },
    TEST_MS,
  );

  test("an unknown context: exit 2 with the nearest name, zero requests to either cluster", async () => {
    const { kubeconfig, cwd } = await setup("unknown");
    const [sinceA, sinceB] = [lastSeq(a()), lastSeq(b())];
    const r = await runSnapshot(
      kubeconfig,
      ["--context", "a", "--context", "bb", ...img, "-o", "out/"],
      {},
      cwd,
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('context "bb" is not in the kubeconfig');
    expect(r.stderr).toContain('did you mean "b"?');
    expect(lastSeq(a())).toBe(sinceA);
    expect(lastSeq(b())).toBe(sinceB);
    expect(existsSync(join(cwd, "out"))).toBe(false);
  });

  test.each([
    ["stdout", () => [], "several contexts need an output directory"],
    // In the last context's namespace: what a single-context run would accept.
    ["cm://", (ns: string) => ["-o", `cm://${ns}/snap`], "takes one snapshot"],
    ["a file name", () => ["-o", "snap.yaml"], "several contexts need a directory"],
    ["--all-contexts with --context", () => ["--all-contexts", "--context", "a"], "cannot be combined"],
    ["--local", () => ["--local"], "not --local"],
  ])("%s: exit 2 before any request to either cluster", async (_what, extraFor, message) => {
    const { kubeconfig, cwd, nsB } = await setup("refused");
    const extra: string[] = extraFor(nsB);
    const [sinceA, sinceB] = [lastSeq(a()), lastSeq(b())];
    const selection = extra.includes("--all-contexts") ? [] : ["--context", "a", "--context", "b"];
    const r = await runSnapshot(kubeconfig, [...selection, ...extra, ...img], {}, cwd);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(message);
    expect(lastSeq(a())).toBe(sinceA);
    expect(lastSeq(b())).toBe(sinceB);
  });

  test(
    "SIGINT while both agents run: every context stops and cleans up, exit 9",
    async () => {
      const { nsA, nsB, kubeconfig, cwd } = await setup("cancel");
      const [sinceA, sinceB] = [lastSeq(a()), lastSeq(b())];
      const run = spawnSnapshot(
        kubeconfig,
        ["--context", "a", "--context", "b", "--image", HANGING_IMAGE, "-o", "out/"],
        {},
        cwd,
      );
      await Promise.all([a().log.waitFor(jobPost(nsA, sinceA)), b().log.waitFor(jobPost(nsB, sinceB))]);
      run.proc.kill("SIGINT");
      const r = await run.done;
      expect(r.code, r.stderr).toBe(9);
      expect(r.stderr).toMatch(/\na\s+\S+\s+canceled/);
      expect(r.stderr).toMatch(/\nb\s+\S+\s+canceled/);
      await untilNoRunObjects(a(), nsA);
      await untilNoRunObjects(b(), nsB);
    },
    TEST_MS,
  );

  test("another command refuses a second --context: exit 2, nothing sent", async () => {
    const { kubeconfig, cwd } = await setup("validate");
    const [sinceA, sinceB] = [lastSeq(a()), lastSeq(b())];
    const proc = Bun.spawn([AICR, "runs", "list", "--context", "a", "--context", "b"], {
      cwd,
      env: baseEnv({ KUBECONFIG: kubeconfig }),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stderr, code] = [await new Response(proc.stderr).text(), await proc.exited];
    expect(code, stderr).toBe(2);
    expect(stderr).toContain("only aicr snapshot takes several contexts");
    expect(lastSeq(a())).toBe(sinceA);
    expect(lastSeq(b())).toBe(sinceB);
  });
});
