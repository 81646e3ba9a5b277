import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Cluster, startCluster } from "./server.ts";

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster({ https: true, controllers: false });
});
afterAll(() => cluster.stop());

function rogueCert(): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), "rogue-"));
  const res = Bun.spawnSync(
    [
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "k.pem",
      "-out",
      "c.pem",
      "-days",
      "1",
      "-subj",
      "/CN=admin/O=system:masters",
    ],
    { cwd: dir, stderr: "pipe" },
  );
  if (res.exitCode !== 0) throw new Error(res.stderr.toString());
  return { cert: readFileSync(join(dir, "c.pem"), "utf8"), key: readFileSync(join(dir, "k.pem"), "utf8") };
}

describe("https", () => {
  test("the generated CA verifies the server; no client certificate means anonymous", async () => {
    const res = await fetch(`${cluster.url}/api/v1/namespaces`, { tls: { ca: cluster.caCert } });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { message: string }).message).toContain('User "system:anonymous"');
  });

  test("a client certificate signed by another CA is refused at the handshake", async () => {
    const rogue = rogueCert();
    const outcome = await fetch(`${cluster.url}/api/v1/namespaces`, {
      tls: { ca: cluster.caCert, ...rogue },
    }).then(
      (r) => `answered ${r.status}`,
      () => "refused",
    );
    expect(outcome).toBe("refused");
  });
});
