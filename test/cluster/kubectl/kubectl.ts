/**
 * Running kubectl against a test cluster of either backend (never with spawnSync: the fake shares this
 * event loop). The kubectl is the one built with the control plane from the same Kubernetes release
 * (test/control-plane/build.ts; built on first use), never whatever a machine has installed.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { controlPlaneBinary } from "../../control-plane/build.ts";

export const KUBECTL: string = (await controlPlaneBinary()).kubectl;
/** kubectl's discovery and OpenAPI cache, keyed by host:port: per test process, so a port reused by another backend never reads a stale one. */
const CACHE_DIR = mkdtempSync(join(tmpdir(), "aicr-kubectl-cache-"));
const env = (kubeconfig: string) => ({
  ...process.env,
  KUBECONFIG: kubeconfig,
  KUBECACHEDIR: CACHE_DIR,
  NO_COLOR: "1",
});

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function kubectl(kubeconfig: string, args: string[], stdin?: string): Promise<KubectlResult> {
  const proc = Bun.spawn([KUBECTL, ...args], {
    env: env(kubeconfig),
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** A long-running kubectl (get -w, wait): read its output until a predicate holds. */
export function kubectlStream(kubeconfig: string, args: string[]) {
  const proc = Bun.spawn([KUBECTL, ...args], {
    env: env(kubeconfig),
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  const waiters: { test: (s: string) => boolean; resolve: () => void }[] = [];
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout) {
      out += decoder.decode(chunk, { stream: true });
      for (const w of [...waiters]) {
        if (w.test(out)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    }
  })();
  return {
    proc,
    get output() {
      return out;
    },
    until(test: (s: string) => boolean): Promise<void> {
      if (test(out)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ test, resolve }));
    },
  };
}
