/**
 * A cluster's proxy-url, read as kubectl reads it: the scheme in any case (`HTTP://…` is http), the
 * requests going through the proxy; a SOCKS proxy still refused with exit 2 before any request.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { CLUSTER_HOOK_MS, startTestCluster, type TestCluster } from "../cluster/testbed.ts";
import { aicr, baseEnv } from "./_aicr.ts";

let cluster: TestCluster;
let proxy: ReturnType<typeof Bun.serve>;
let dir: string;
const proxied: string[] = [];

beforeAll(async () => {
  cluster = await startTestCluster("fake", { controllers: false });
  dir = mkdtempSync(join(tmpdir(), "aicr-e2e-proxy-"));
  // A forward proxy for plain http: the request names its target in full, and is passed on to it.
  proxy = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req) => {
      proxied.push(req.url);
      return fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
    },
  });
}, CLUSTER_HOOK_MS);
afterAll(async () => {
  proxy.stop(true);
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}, CLUSTER_HOOK_MS);

function kubeconfig(proxyUrl: string): string {
  const path = join(dir, `kubeconfig-${proxied.length}-${Math.random().toString(16).slice(2)}`);
  writeFileSync(
    path,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server: cluster.url, "proxy-url": proxyUrl } }],
      users: [{ name: "me", user: { token: cluster.fake!.tokenFor("admin") } }],
      contexts: [{ name: "c", context: { cluster: "c", user: "me" } }],
      "current-context": "c",
    }),
    { mode: 0o600 },
  );
  return path;
}

test("proxy-url HTTP://… (upper case, as kubectl accepts it): the requests go through the proxy", async () => {
  for (const scheme of ["HTTP", "Http", "http"]) {
    const before = proxied.length;
    const since = cluster.log.entries.length;
    const r = await aicr(["runs", "list", "-A"], {
      env: baseEnv({ KUBECONFIG: kubeconfig(`${scheme}://127.0.0.1:${proxy.port}`) }),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(proxied.length - before).toBeGreaterThan(0);
    expect(proxied.length - before).toBe(cluster.log.entries.length - since);
  }
});

test("a SOCKS proxy is still refused: exit 2 naming it, no request", async () => {
  for (const url of ["socks5://127.0.0.1:1080", "SOCKS5://127.0.0.1:1080"]) {
    const since = cluster.log.entries.length;
    const r = await aicr(["runs", "list", "-A"], { env: baseEnv({ KUBECONFIG: kubeconfig(url) }) });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`the kubeconfig's proxy-url "${url}" is not supported`);
    expect(cluster.log.entries.length).toBe(since);
  }
});
