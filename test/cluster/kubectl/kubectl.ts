/**
 * Running kubectl against a test cluster of either backend (never with spawnSync: the fake shares this
 * event loop). The kubectl is the one built with the control plane from the same Kubernetes release
 * (test/control-plane/build.ts; built on first use), never whatever a machine has installed.
 */
import { dirname, join } from "node:path";
import { controlPlaneBinary } from "../../control-plane/build.ts";
import { type ChangeFeed, until } from "../../support/until.ts";

export const KUBECTL: string = (await controlPlaneBinary()).kubectl;
/**
 * kubectl's discovery and OpenAPI cache (keyed by host:port) goes beside the kubeconfig, in the
 * cluster's own directory: per cluster, so a port reused by another cluster never reads a stale one,
 * and removed when the cluster stops.
 */
const env = (kubeconfig: string) => ({
  ...process.env,
  KUBECONFIG: kubeconfig,
  KUBECACHEDIR: join(dirname(kubeconfig), "kubectl-cache"),
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
  const listeners = new Set<() => void>();
  const output: ChangeFeed = {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout) {
      out += decoder.decode(chunk, { stream: true });
      for (const l of [...listeners]) l();
    }
  })();
  return {
    proc,
    get output() {
      return out;
    },
    /** Resolves once `test` holds for the output so far (re-checked on every chunk). */
    async until(test: (s: string) => boolean, what = `kubectl ${args.join(" ")} output`): Promise<void> {
      await until(
        () => test(out),
        () => `${what}; so far:\n${out}`,
        { on: output },
      );
    },
  };
}
