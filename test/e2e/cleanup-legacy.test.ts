import { beforeEach, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parse, stringify } from "yaml";
import { BACKENDS } from "../cluster/testbed.ts";
import {
  exists,
  RUN_ID,
  seedClusterScoped,
  seedNamespace,
  seedRunScoped,
  TEST_MS,
  untilGone,
  writesTo,
} from "../legacy/_seed.ts";
import { useCluster } from "../support/cluster.ts";
import { AICR, aicr, baseEnv, ensureBuilt } from "./_aicr.ts";

/**
 * Runs the binary on a pseudo-terminal (python3's pty), answers the prompt once it appears, and
 * returns everything the terminal showed plus the exit status. No timing: it waits for the text.
 */
const PTY_DRIVER = `
import os, pty, sys
answer, argv = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
out = b""
while b"[y/N]" not in out:
    out += os.read(fd, 4096)
os.write(fd, answer.encode() + b"\\n")
try:
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        out += chunk
except OSError:
    pass
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
sys.stdout.write("\\nEXIT %d\\n" % os.waitstatus_to_exitcode(status))
`;

async function onTerminal(answer: string, args: string[], env: Record<string, string>): Promise<string> {
  await ensureBuilt();
  const proc = Bun.spawn(["python3", "-c", PTY_DRIVER, answer, AICR, ...args], {
    env,
    stdout: "pipe",
    stderr: "inherit",
  });
  const [text] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return text;
}

interface Doc {
  kind: string;
  dryRun: boolean;
  scope: { allNamespaces: boolean; namespaces?: string[] };
  summary: Record<string, number>;
  objects: {
    kind: string;
    namespace?: string;
    name: string;
    uid: string;
    action: string;
    reason: string;
    outcome: string;
  }[];
}

for (const backend of BACKENDS)
  describe(`[${backend}] aicr cleanup-legacy (compiled binary)`, () => {
    const cluster = useCluster(backend, { per: "test", controllers: false });
    let env: Record<string, string>;
    beforeEach(() => {
      env = baseEnv({ KUBECONFIG: cluster().kubeconfigFor("admin") });
    });

    test(
      "scripted: --all-namespaces --yes -o json deletes the legacy objects and prints the receipt (exit 0)",
      async () => {
        await seedNamespace(cluster(), "gpu-operator");
        await seedNamespace(cluster(), "team-b");
        await seedClusterScoped(cluster(), "gpu-operator");
        await seedRunScoped(cluster(), "gpu-operator");
        const r = await aicr(["cleanup-legacy", "--all-namespaces", "--yes", "-o", "json"], { env });
        expect(r.stderr).not.toContain("ERROR");
        expect(r.code).toBe(0);
        const doc = JSON.parse(r.stdout) as Doc;
        expect(doc.kind).toBe("LegacyCleanupReceipt");
        expect(doc.scope).toEqual({ allNamespaces: true });
        expect(doc.summary).toMatchObject({ planned: 15, deleted: 15, kept: 2, failed: 0, changed: 0 });
        const kept = doc.objects.filter((o) => o.action === "keep");
        expect(kept.map((o) => `${o.namespace}/${o.name}`).sort()).toEqual([
          "gpu-operator/aicr-snapshot",
          "team-b/aicr-snapshot",
        ]);
        for (const o of doc.objects) expect(o.uid).toMatch(/^[0-9a-f-]{36}$/);
        await untilGone(cluster(), "jobs", "team-b", "aicr");
        await untilGone(cluster(), "clusterroles", undefined, "aicr-node-reader");
        expect(exists(cluster(), "clusterroles", undefined, `aicr-node-reader-${RUN_ID}`)).toBe(true);
        expect(exists(cluster(), "configmaps", "gpu-operator", "aicr-snapshot")).toBe(true);
      },
      TEST_MS,
    );

    test(
      "without a terminal and without --yes: exit 2, names --yes and --dry-run, no request at all",
      async () => {
        await seedNamespace(cluster(), "gpu-operator");
        cluster().log.clear();
        const r = await aicr(["cleanup-legacy", "-n", "gpu-operator"], { env });
        expect(r.code).toBe(2);
        expect(r.stderr).toContain("--yes");
        expect(r.stderr).toContain("--dry-run");
        expect(r.stdout).toBe("");
        expect(cluster().log.entries).toEqual([]);
        expect(exists(cluster(), "jobs", "gpu-operator", "aicr")).toBe(true);
      },
      TEST_MS,
    );

    test(
      "--dry-run with repeated -n prints the plan for those namespaces only and changes nothing",
      async () => {
        await seedNamespace(cluster(), "a");
        await seedNamespace(cluster(), "b");
        await seedNamespace(cluster(), "c");
        cluster().log.clear();
        const r = await aicr(["cleanup-legacy", "-n", "a", "--namespace=b", "--dry-run", "-o", "json"], {
          env,
        });
        expect(r.code).toBe(0);
        const doc = JSON.parse(r.stdout) as Doc;
        expect(doc.kind).toBe("LegacyCleanupPlan");
        expect(doc.scope).toEqual({ allNamespaces: false, namespaces: ["a", "b"] });
        expect(new Set(doc.objects.map((o) => o.namespace))).toEqual(new Set(["a", "b"]));
        expect(doc.objects.filter((o) => o.outcome === "planned").length).toBe(12);
        expect(writesTo(cluster())).toEqual([]);
        expect(r.stderr).toContain("dry run: nothing was deleted");
      },
      TEST_MS,
    );

    test(
      "no -n: AICR_NAMESPACE, then the kubeconfig context's namespace (--context's when given), then default",
      async () => {
        const plan = async (args: string[], extra: Record<string, string>) => {
          const r = await aicr(["cleanup-legacy", ...args, "--dry-run", "-o", "json"], {
            env: baseEnv(extra),
          });
          expect(r.code, r.stderr).toBe(0);
          return (JSON.parse(r.stdout) as Doc).scope;
        };
        const inCtx = cluster().kubeconfigFor("admin", { namespace: "ctx-ns" });
        expect(await plan([], { KUBECONFIG: inCtx })).toEqual({
          allNamespaces: false,
          namespaces: ["ctx-ns"],
        });
        expect(await plan([], { KUBECONFIG: inCtx, AICR_NAMESPACE: "env-ns" })).toEqual({
          allNamespaces: false,
          namespaces: ["env-ns"],
        });
        expect(await plan(["-n", "flag-ns"], { KUBECONFIG: inCtx, AICR_NAMESPACE: "env-ns" })).toEqual({
          allNamespaces: false,
          namespaces: ["flag-ns"],
        });
        // --kubeconfig and --context choose the file and the context whose namespace is read.
        const doc = parse(readFileSync(inCtx, "utf8")) as {
          contexts: { name: string; context: Record<string, string> }[];
        };
        const first = doc.contexts[0]!;
        doc.contexts.push({ name: "other", context: { ...first.context, namespace: "other-ns" } });
        doc.contexts.push({
          name: "bare",
          context: { cluster: first.context.cluster!, user: first.context.user! },
        });
        const two = join(dirname(inCtx), "two-contexts.kubeconfig");
        writeFileSync(two, stringify(doc), { mode: 0o600 });
        expect(await plan(["--kubeconfig", two, "--context", "other"], { KUBECONFIG: inCtx })).toEqual({
          allNamespaces: false,
          namespaces: ["other-ns"],
        });
        expect(await plan(["--kubeconfig", two], {})).toEqual({
          allNamespaces: false,
          namespaces: ["ctx-ns"],
        });
        expect(await plan(["--kubeconfig", two, "--context", "bare"], {})).toEqual({
          allNamespaces: false,
          namespaces: ["default"],
        });
      },
      TEST_MS,
    );

    test(
      "a failed delete: the receipt still prints, exit 8",
      async () => {
        await seedNamespace(cluster(), "gpu-operator");
        cluster().faults.add({
          method: "DELETE",
          path: "/api/v1/namespaces/gpu-operator/serviceaccounts/aicr",
          status: 500,
        });
        const r = await aicr(["cleanup-legacy", "-n", "gpu-operator", "--yes", "-o", "json"], { env });
        expect(r.code).toBe(8);
        const doc = JSON.parse(r.stdout) as Doc;
        expect(doc.objects.find((o) => o.kind === "ServiceAccount" && o.name === "aicr")?.outcome).toBe(
          "failed",
        );
        expect(r.stderr).toContain("[INTERNAL]");
      },
      TEST_MS,
    );

    test(
      "missing permissions: exit 4, every one listed, nothing deleted",
      async () => {
        await seedNamespace(cluster(), "gpu-operator");
        cluster().addUser("viewer", []);
        const viewerEnv = baseEnv({ KUBECONFIG: cluster().kubeconfigFor("viewer") });
        const r = await aicr(["cleanup-legacy", "-n", "gpu-operator", "--yes"], { env: viewerEnv });
        expect(r.code).toBe(4);
        expect(r.stderr).toContain("[UNAUTHORIZED] missing required permissions");
        expect(r.stderr).toContain('cannot "delete" jobs.batch "aicr" (namespace "gpu-operator")');
        expect(r.stderr).toContain('cannot "get" clusterroles.rbac.authorization.k8s.io "aicr-node-reader"');
        expect(exists(cluster(), "jobs", "gpu-operator", "aicr")).toBe(true);
      },
      TEST_MS,
    );

    test(
      "bad input is refused before any request: -n with --all-namespaces, an invalid namespace",
      async () => {
        cluster().log.clear();
        const both = await aicr(["cleanup-legacy", "-n", "a", "-A", "--dry-run"], { env });
        expect(both.code).toBe(2);
        expect(both.stderr).toContain("--all-namespaces");
        const bad = await aicr(["cleanup-legacy", "-n", "Not_A_Namespace", "--dry-run"], { env });
        expect(bad.code).toBe(2);
        expect(bad.stderr).toContain('invalid namespace "Not_A_Namespace"');
        expect(cluster().log.entries).toEqual([]);
      },
      TEST_MS,
    );

    test.skipIf(!Bun.which("python3"))(
      "on a terminal: prints the plan, asks, and honours the answer",
      async () => {
        await seedNamespace(cluster(), "gpu-operator");
        const declined = await onTerminal("n", ["cleanup-legacy", "-n", "gpu-operator"], env);
        expect(declined).toContain("delete   Job gpu-operator/aicr: legacy Job, finished");
        expect(declined).toContain("Delete 6 object(s)? [y/N]");
        expect(declined).toContain("[CANCELED]");
        expect(declined).toContain("EXIT 9");
        expect(exists(cluster(), "jobs", "gpu-operator", "aicr")).toBe(true);

        const accepted = await onTerminal("y", ["cleanup-legacy", "-n", "gpu-operator"], env);
        expect(accepted).toContain("deleted  Job gpu-operator/aicr");
        expect(accepted).toContain("EXIT 0");
        await untilGone(cluster(), "jobs", "gpu-operator", "aicr");
      },
      TEST_MS,
    );
  });
