/**
 * A plain http:// server (what `kubectl proxy` serves) with no insecure-skip-tls-verify: kubectl
 * accepts it, and so does KubeHttp — with the kubeconfig's credentials when it has any.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadKubeConfig } from "../../../src/kube/config.ts";
import { KubeHttp } from "../../../src/kube/http.ts";

let server: ReturnType<typeof Bun.serve>;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "aicr-plain-http-"));
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req) => Response.json({ authorization: req.headers.get("authorization") }),
  });
});
afterAll(() => {
  server.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

function kubeconfig(name: string, user: string): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "- name: proxy",
      "  cluster:",
      `    server: http://127.0.0.1:${server.port}`,
      "contexts:",
      "- name: proxy",
      "  context:",
      "    cluster: proxy",
      ...(user ? ["    user: me", "users:", "- name: me", "  user:", `    ${user}`] : []),
      "current-context: proxy",
      "",
    ].join("\n"),
  );
  return path;
}

async function get(path: string): Promise<{ authorization: string | null }> {
  const loaded = loadKubeConfig({ kubeconfig: path, env: {} });
  const http = new KubeHttp(loaded.kc, loaded.server);
  try {
    return await http.json("GET", "/version");
  } finally {
    http.close();
  }
}

describe("KubeHttp against a plain http:// server", () => {
  test("no credentials and no insecure-skip-tls-verify (kubectl proxy): the request is made", async () => {
    expect(await get(kubeconfig("anonymous.kubeconfig", ""))).toEqual({ authorization: null });
  }, 10_000);

  test("a token in the kubeconfig is still sent", async () => {
    expect(await get(kubeconfig("token.kubeconfig", "token: abc123"))).toEqual({
      authorization: "Bearer abc123",
    });
  }, 10_000);
});
