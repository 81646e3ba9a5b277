/**
 * The compiled binary in remote mode: which namespace a run lands in (-n, then AICR_NAMESPACE, then
 * the kubeconfig context's namespace, then default), and a kubeconfig for `kubectl proxy` (a plain
 * http:// server with no credentials and no insecure-skip-tls-verify), as kubectl accepts it.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { kubectlStream } from "../cluster/kubectl/kubectl.ts";
import { BACKENDS } from "../cluster/testbed.ts";
import { useCluster } from "../support/cluster.ts";
import {
  AGENT_IMAGE,
  freshNamespace,
  runSnapshot,
  snapshotCluster,
  TEST_MS,
  untilNoRunObjects,
} from "./_harness.ts";

const img = ["--image", AGENT_IMAGE];

/** The namespace of the agent Job, from the progress line `deployed Job <ns>/<name>`. */
const jobNamespace = (stderr: string): string | undefined => stderr.match(/deployed Job ([^/\s]+)\//)?.[1];

for (const backend of BACKENDS)
  describe(`[${backend}] snapshot namespace`, () => {
    const cluster = useCluster(backend, { start: snapshotCluster });

    test(
      "no -n and no AICR_NAMESPACE: the kubeconfig context's namespace, as kubectl uses it",
      async () => {
        const ns = await freshNamespace(cluster(), "context-ns");
        const r = await runSnapshot(cluster().kubeconfigFor("admin", { namespace: ns }), img);
        expect(r.code, r.stderr).toBe(0);
        expect(jobNamespace(r.stderr)).toBe(ns);
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "-n wins over the context's namespace",
      async () => {
        const context = await freshNamespace(cluster(), "context-unused");
        const ns = await freshNamespace(cluster(), "flag-ns");
        const r = await runSnapshot(cluster().kubeconfigFor("admin", { namespace: context }), [
          "-n",
          ns,
          ...img,
        ]);
        expect(r.code, r.stderr).toBe(0);
        expect(jobNamespace(r.stderr)).toBe(ns);
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );

    test(
      "AICR_NAMESPACE wins over the context's namespace",
      async () => {
        const context = await freshNamespace(cluster(), "context-unused");
        const ns = await freshNamespace(cluster(), "env-ns");
        const r = await runSnapshot(cluster().kubeconfigFor("admin", { namespace: context }), img, {
          AICR_NAMESPACE: ns,
        });
        expect(r.code, r.stderr).toBe(0);
        expect(jobNamespace(r.stderr)).toBe(ns);
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );
  });

// kubectl proxy, in front of either backend, speaks HTTPS with the admin's credentials (the fake's
// token, the real apiserver's client certificate) and plain HTTP to aicr. The fake serves HTTPS here:
// over plain http kubectl sends no bearer token, so the proxy's requests would be anonymous.
for (const backend of BACKENDS)
  describe(`[${backend}] snapshot through kubectl proxy`, () => {
    const cluster = useCluster(backend, { start: (b) => snapshotCluster(b, { https: true }) });
    let admin: string;
    beforeAll(() => {
      admin = cluster().kubeconfigFor("admin");
    });

    test(
      "through `kubectl proxy`: a plain http:// server with no credentials runs the snapshot",
      async () => {
        const ns = await freshNamespace(cluster(), "proxied");
        const proxy = kubectlStream(admin, ["proxy", "--port=0"]);
        try {
          const serving = /Starting to serve on 127\.0\.0\.1:(\d+)/;
          await proxy.until((out) => serving.test(out), "kubectl proxy's listening line");
          const port = proxy.output.match(serving)?.[1];
          const kubeconfig = join(dirname(admin), `kubectl-proxy-${port}.kubeconfig`);
          writeFileSync(
            kubeconfig,
            [
              "apiVersion: v1",
              "kind: Config",
              "clusters:",
              "- name: proxy",
              "  cluster:",
              `    server: http://127.0.0.1:${port}`,
              "contexts:",
              "- name: proxy",
              "  context:",
              "    cluster: proxy",
              "current-context: proxy",
              "",
            ].join("\n"),
          );
          const r = await runSnapshot(kubeconfig, ["-n", ns, ...img]);
          expect(r.stderr).not.toContain("[INTERNAL]");
          expect(r.code, r.stderr).toBe(0);
          expect(jobNamespace(r.stderr)).toBe(ns);
        } finally {
          proxy.proc.kill();
          await proxy.proc.exited;
        }
        await untilNoRunObjects(cluster(), ns);
      },
      TEST_MS,
    );
  });
