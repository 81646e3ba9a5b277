/**
 * Issue 16 in Job mode (remote, the compiled binary): provider files projected on this side, -t table,
 * --template, bad provider files and --cluster-config refused with zero requests, and --os talos
 * reading SystemD from the agent's Node.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseSnapshot } from "../../src/snapshot/schema.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { ROOT } from "../e2e/_aicr.ts";
import { useCluster } from "../support/cluster.ts";
import { requestsSince } from "../support/requests.ts";
import {
  AGENT_IMAGE,
  freshNamespace,
  lastSeq,
  runSnapshot,
  snapshotCluster,
  TEST_MS,
  writes,
} from "./_harness.ts";

const FIX = join(ROOT, "test/fixtures");
const dir = mkdtempSync(join(tmpdir(), "aicr-providers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

for (const backend of BACKENDS)
  describe(`[${backend}]`, () => {
    const cluster = useCluster(backend, { start: snapshotCluster });
    let admin: string;
    beforeAll(() => {
      admin = cluster().kubeconfigFor("admin");
    });
    const img = ["--image", AGENT_IMAGE];

    test(
      "each provider file is projected into its K8s reading; the Job spec carries none of them",
      async () => {
        const ns = await freshNamespace(cluster(), "providers");
        const since = lastSeq(cluster());
        const r = await runSnapshot(admin, [
          "-n",
          ns,
          ...img,
          "--oke-addons",
          join(FIX, "providers/oke-addons.json"),
          "--aks-gpu-pools",
          join(FIX, "providers/aks-gpu-pools.json"),
          "--gke-gpu-pools",
          join(FIX, "providers/gke-gpu-pools.json"),
        ]);
        expect(r.code, r.stderr).toBe(0);
        const doc = parseSnapshot(r.stdout, "stdout");
        const k8s = doc.measurements.find((m) => m.type === "K8s");
        const data = (name: string) => k8s?.subtypes.find((s) => s.subtype === name)?.data;
        expect(data("oke-addons")).toEqual({
          "nvidia-gpu-plugin": "ACTIVE",
          "nvidia-gpu-plugin-version": "v0.15.0",
        });
        expect(data("aks-gpu-pools")?.["gpu-driver"]).toBe("Install,None");
        expect(data("gke-gpu-pools")?.["gpu-driver-installation"]).toBe("LATEST");
        expect(data("server")).toBeDefined(); // the agent's own K8s readings are kept
        const job = writes(cluster(), since).find((e) => e.method === "POST" && e.path.endsWith("/jobs"));
        expect(JSON.stringify(job?.body)).not.toMatch(/oke-addons|gpu-pools|NvidiaGpuPlugin/);
      },
      TEST_MS,
    );

    test(
      "-t table and --template render the agent's snapshot",
      async () => {
        const ns = await freshNamespace(cluster(), "render");
        const table = await runSnapshot(admin, ["-n", ns, ...img, "-t", "table"]);
        expect(table.code, table.stderr).toBe(0);
        expect(table.stdout).toMatch(/^FIELD\s+VALUE$/m);
        expect(table.stdout).toMatch(/^metadata\.source-node\s+gpu-node-1$/m);
        expect(table.stdout).toMatch(/^GPU\.smi\.gpu-count\s+8$/m);
        const tpl = await runSnapshot(admin, [
          "-n",
          ns,
          ...img,
          "--template",
          join(FIX, "templates/summary.tmpl"),
        ]);
        expect(tpl.code, tpl.stderr).toBe(0);
        expect(tpl.stdout).toContain("node: gpu-node-1\ngpus: 8\n");
        expect(tpl.stdout).toContain("gke driver: n/a");
      },
      TEST_MS,
    );

    test(
      "an oversized or non-regular provider file, or --cluster-config: exit 2 and zero requests",
      async () => {
        const big = join(dir, "big.json");
        writeFileSync(big, `[${" ".repeat(1024 * 1024)}]`);
        for (const args of [
          ["--gke-gpu-pools", big],
          ["--aks-gpu-pools", dir],
          ["--cluster-config", join(FIX, "providers/oke-addons.json")],
        ]) {
          const before = cluster().log.entries.length;
          const r = await runSnapshot(admin, ["-n", "providers-bad", ...img, ...args]);
          expect(r.code, r.stderr).toBe(2);
          expect(r.stderr).toContain(args[0] as string);
          expect(requestsSince(cluster(), before)).toEqual([]);
        }
      },
      TEST_MS,
    );

    test(
      "--os talos: no host systemd mounts; SystemD read from the agent's Node object",
      async () => {
        const ns = await freshNamespace(cluster(), "talos");
        const since = lastSeq(cluster());
        const r = await runSnapshot(admin, ["-n", ns, ...img, "--os", "talos"]);
        expect(r.code, r.stderr).toBe(0);
        const job = writes(cluster(), since).find((e) => e.method === "POST" && e.path.endsWith("/jobs"));
        expect(JSON.stringify(job?.body)).not.toContain("/run/systemd");
        const systemd = parseSnapshot(r.stdout, "stdout").measurements.find((m) => m.type === "SystemD");
        const kubelet = systemd?.subtypes.find((s) => s.subtype === "kubelet.service")?.data;
        expect(kubelet?.source).toBe("kubernetes-api");
        expect(kubelet?.ready).toBe("True");
        expect(String(kubelet?.["kubelet-version"])).toMatch(/^v\d/);
        expect(kubelet?.ActiveState).toBeUndefined();
      },
      TEST_MS,
    );
  });
