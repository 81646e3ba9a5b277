/** Running the real kubectl against a fake cluster (never with spawnSync: the server shares this event loop). */
import { existsSync } from "node:fs";

export const KUBECTL = existsSync("/usr/bin/kubectl") ? "/usr/bin/kubectl" : Bun.which("kubectl");

if (!KUBECTL) {
  console.error(
    "\n!!! kubectl not found (looked at /usr/bin/kubectl and PATH): the kubectl conformance tests are SKIPPED !!!\n",
  );
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function kubectl(kubeconfig: string, args: string[], stdin?: string): Promise<KubectlResult> {
  const proc = Bun.spawn([KUBECTL!, ...args], {
    env: { ...process.env, KUBECONFIG: kubeconfig, NO_COLOR: "1" },
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
  const proc = Bun.spawn([KUBECTL!, ...args], {
    env: { ...process.env, KUBECONFIG: kubeconfig, NO_COLOR: "1" },
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
