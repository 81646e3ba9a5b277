/** The compiled binary in remote mode (from a jump host) against a cluster: what a successful run delivers and leaves. */
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { resource } from "../cluster/resources.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import { untilStore } from "../support/until.ts";
import {
  AGENT_IMAGE,
  existingServiceAccount,
  freshNamespace,
  jobDeadlinesSince,
  lastSeq,
  RUN_OBJECT_KINDS,
  runIdOf,
  runObjects,
  runSnapshot,
  STUCK_MS,
  snapshotCluster,
  TEST_MS,
  untilNoRunObjects,
  untilNoRunPods,
  writes,
} from "./_harness.ts";

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: snapshotCluster });
    let admin: string;
    beforeAll(() => {
      admin = cluster().kubeconfigFor("admin");
    });

    const img = ["--image", AGENT_IMAGE];

    test(
      "default run: the agent's snapshot on stdout, progress on stderr, zero run objects left",
      async () => {
        const ns = await freshNamespace(cluster(), "default-run");
        const r = await runSnapshot(admin, ["-n", ns, ...img]);
        expect(r.code, r.stderr).toBe(0);
        const runId = runIdOf(r.stderr);
        expect(r.stderr.split("\n")[0]).toContain(runId);
        const doc = parseSnapshot(r.stdout, "stdout");
        expect(doc.metadata["run-id"]).toBe(runId);
        expect(doc.metadata["source-node"]).toBe("gpu-node-1");
        expect(r.stdout.startsWith("apiVersion:")).toBe(true);
        for (const phase of [
          "permissions checked",
          "run objects created",
          "running on gpu-node-1",
          "result proven",
          "cleaned up",
        ])
          expect(r.stderr).toContain(phase);
        expect(r.stderr).toContain("auto-targeting GPU nodes");
        expect(r.stderr).toMatch(/\[agent\] .*snapshot written/);
        await untilNoRunObjects(cluster(), ns);
        await untilNoRunPods(cluster(), ns);
        // Cleanup is UID-pinned: every delete of a run object carried a precondition.
        const deletes = writes(cluster()).filter((e) => e.method === "DELETE" && e.path.includes(runId));
        expect(deletes.length).toBe(7);
        for (const d of deletes) expect(JSON.stringify(d.body)).toContain('"uid"');
      },
      TEST_MS,
    );

    test(
      "--timeout 1m: the agent Job's activeDeadlineSeconds is the timeout plus a minute (default 5m: 360)",
      async () => {
        const ns = await freshNamespace(cluster(), "deadline");
        const since = lastSeq(cluster());
        const deadlines = (from: number) => jobDeadlinesSince(cluster(), ns, from);
        const short = await runSnapshot(admin, ["-n", ns, ...img, "--timeout", "1m"]);
        expect(short.code, short.stderr).toBe(0);
        expect(deadlines(since)).toEqual([120]);
        const middle = lastSeq(cluster());
        const byDefault = await runSnapshot(admin, ["-n", ns, ...img]);
        expect(byDefault.code, byDefault.stderr).toBe(0);
        expect(deadlines(middle)).toEqual([360]);
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "-n<namespace> with the value attached, as kubectl reads it, runs in that namespace",
      async () => {
        const ns = await freshNamespace(cluster(), "attached");
        const r = await runSnapshot(admin, [`-n${ns}`, ...img]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toContain(`deployed Job ${ns}/`);
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "-t json re-encodes; -o <file> writes the file and keeps stdout empty",
      async () => {
        const ns = await freshNamespace(cluster(), "formats");
        const json = await runSnapshot(admin, ["-n", ns, ...img, "-t", "json"]);
        expect(json.code, json.stderr).toBe(0);
        expect(JSON.parse(json.stdout).metadata["run-id"]).toBe(runIdOf(json.stderr));
        const dir = mkdtempSync(join(tmpdir(), "aicr-snap-"));
        try {
          const file = join(dir, "snap.yaml");
          const r = await runSnapshot(admin, ["-n", ns, ...img, "-o", file]);
          expect(r.code, r.stderr).toBe(0);
          expect(r.stdout).toBe("");
          expect(parseSnapshot(readFileSync(file, "utf8"), file).metadata["run-id"]).toBe(runIdOf(r.stderr));
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "--no-cleanup keeps exactly the seven run objects and lists each; reusing its run ID is refused before any write",
      async () => {
        const ns = await freshNamespace(cluster(), "keep");
        const r = await runSnapshot(admin, ["-n", ns, ...img, "--no-cleanup"]);
        expect(r.code, r.stderr).toBe(0);
        const runId = runIdOf(r.stderr);
        // Created before the run ended; the real backend's mirror may still be catching up with the last.
        const left = await untilStore(
          cluster(),
          () => {
            const objects = runObjects(cluster(), ns, runId);
            return objects.length >= 7 && objects;
          },
          () => `the seven kept run objects; so far: ${runObjects(cluster(), ns, runId).join(", ")}`,
          STUCK_MS,
        );
        expect(left.map((k) => k.split("/")[0])).toEqual(RUN_OBJECT_KINDS);
        // stdout is the agent's YAML byte for byte.
        const staging = (await untilStore(
          cluster(),
          () => {
            const cm = cluster().store.find(resource("configmaps"), ns, `aicr-agent-snapshot-${runId}`);
            return cm?.data?.["snapshot.yaml"] !== undefined && cm;
          },
          "the staging ConfigMap with the agent's result",
          STUCK_MS,
        )) as { data?: Record<string, string> };
        expect(r.stdout).toBe(staging.data?.["snapshot.yaml"] ?? "");
        const listed = r.stderr.split("\n").filter((l) => l.includes("kept (--no-cleanup)"));
        for (const obj of left) {
          const [kind, name] = obj.split("/");
          expect(listed.some((l) => l.includes(`${kind} `) && l.includes(name ?? "?"))).toBe(true);
        }
        expect(listed.length).toBe(7);
        // The same run ID again while those stand: refused before anything is written.
        const since = lastSeq(cluster());
        const again = await runSnapshot(admin, ["-n", ns, ...img, "--run-id", runId]);
        expect(again.code, again.stderr).toBe(2);
        expect(again.stderr).toContain(`[CONFLICT] run ID ${runId} is already in use`);
        expect(writes(cluster(), since)).toEqual([]);
        // Remove them (the anchor ClusterRole collects the rest) so later tests start from nothing.
        await cluster().store.delete(resource("clusterroles"), undefined, `aicr-node-reader-${runId}`, {});
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "cm:// output: written by the agent, kept after the run, and no staging ConfigMap is ever created",
      async () => {
        const ns = await freshNamespace(cluster(), "cmout");
        const r = await runSnapshot(admin, ["-n", ns, ...img, "-o", `cm://${ns}/my-snapshot`]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toBe("");
        expect(r.stderr).toContain(`cm://${ns}/my-snapshot`);
        const cm = (await untilStore(
          cluster(),
          () => cluster().store.find(resource("configmaps"), ns, "my-snapshot"),
          `configmap ${ns}/my-snapshot`,
          STUCK_MS,
        )) as { data?: Record<string, string> };
        const yaml = Object.values(cm.data ?? {}).find((v) => v.includes("kind: Snapshot")) ?? "";
        expect(parseSnapshot(yaml, "cm").metadata["run-id"]).toBe(runIdOf(r.stderr));
        const stagingCreates = writes(cluster()).filter(
          (e) =>
            e.method === "POST" &&
            e.path === `/api/v1/namespaces/${ns}/configmaps` &&
            JSON.stringify(e.body).includes("aicr-agent-snapshot-"),
        );
        expect(stagingCreates).toEqual([]);
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "exact ServiceAccount mode: runs as the existing ServiceAccount and creates no RBAC",
      async () => {
        const ns = await freshNamespace(cluster(), "exact");
        await existingServiceAccount(cluster(), ns, "irsa", "cluster-admin");
        const before = cluster().log.entries.length;
        const r = await runSnapshot(admin, ["-n", ns, ...img, "--service-account-name", "irsa"]);
        expect(r.code, r.stderr).toBe(0);
        expect(parseSnapshot(r.stdout, "stdout").metadata["run-id"]).toBe(runIdOf(r.stderr));
        const mine = cluster()
          .log.entries.slice(before)
          .filter((e) => e.user === "admin");
        const rbacWrites = mine.filter(
          (e) =>
            e.method !== "GET" &&
            (e.path.includes("rbac.authorization.k8s.io") || e.path.includes("/serviceaccounts")),
        );
        expect(rbacWrites).toEqual([]);
        // The SubjectAccessReviews asked about the ServiceAccount itself.
        const sars = mine.filter((e) => e.path.endsWith("/subjectaccessreviews"));
        expect(sars.length).toBeGreaterThan(0);
        expect(JSON.stringify(sars[0]?.body)).toContain(`system:serviceaccount:${ns}:irsa`);
        const job = writes(cluster()).find(
          (e) => e.method === "POST" && e.path === `/apis/batch/v1/namespaces/${ns}/jobs`,
        );
        expect(JSON.stringify(job?.body)).toContain('"serviceAccountName":"irsa"');
        await untilNoRunObjects(cluster(), ns);
        expect(cluster().store.find(resource("serviceaccounts"), ns, "irsa")).toBeDefined();
      },
      TEST_MS,
    );

    test(
      "two concurrent invocations in one namespace each return their own snapshot",
      async () => {
        const ns = await freshNamespace(cluster(), "twins");
        const [a, b] = await Promise.all([
          runSnapshot(admin, ["-n", ns, ...img]),
          runSnapshot(admin, ["-n", ns, ...img]),
        ]);
        expect(a.code, a.stderr).toBe(0);
        expect(b.code, b.stderr).toBe(0);
        const idA = runIdOf(a.stderr);
        const idB = runIdOf(b.stderr);
        expect(idA).not.toBe(idB);
        expect(parseSnapshot(a.stdout, "a").metadata["run-id"]).toBe(idA);
        expect(parseSnapshot(b.stdout, "b").metadata["run-id"]).toBe(idB);
        expect(a.stderr).not.toContain(idB);
        expect(b.stderr).not.toContain(idA);
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "--log-json: every stderr line is one JSON object, the run ID first, agent lines relayed with their prefix",
      async () => {
        const ns = await freshNamespace(cluster(), "json-log");
        const r = await runSnapshot(admin, ["-n", ns, ...img, "--log-json"]);
        expect(r.code, r.stderr).toBe(0);
        const lines = r.stderr.trim().split("\n");
        const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
        const runId = String(parseSnapshot(r.stdout, "stdout").metadata["run-id"]);
        expect(JSON.stringify(records[0])).toContain(runId);
        const messages = records.map((x) => String(x.msg ?? x.message ?? ""));
        expect(messages.some((m) => m.startsWith("[agent] "))).toBe(true);
        expect(messages.some((m) => m.startsWith("cleaned up"))).toBe(true);
      },
      TEST_MS,
    );

    test(
      "--add-roles-to-service-account only writes the RBAC manifests for that ServiceAccount: no request at all",
      async () => {
        const dir = mkdtempSync(join(tmpdir(), "aicr-roles-"));
        try {
          const before = cluster().log.entries.length;
          const r = await runSnapshot(
            admin,
            ["-n", "gpu-operator", "--add-roles-to-service-account", "irsa"],
            {},
            dir,
          );
          expect(r.code, r.stderr).toBe(0);
          expect(r.stderr).toContain("NOTHING has been applied to any cluster");
          const written = readdirSync(dir);
          expect(written.length).toBe(1);
          expect(readdirSync(join(dir, written[0] ?? "")).sort()).toEqual([
            "01-role.yaml",
            "02-rolebinding.yaml",
            "03-clusterrole.yaml",
            "04-clusterrolebinding.yaml",
          ]);
          expect(cluster().log.entries.length).toBe(before);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
      TEST_MS,
    );
  });
