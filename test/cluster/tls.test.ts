/** HTTPS on both backends: the test CA verifies the server; client certificates of another CA are refused. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { useCluster } from "../support/cluster.ts";
import { wireClient } from "./http-client.ts";
import { BACKENDS } from "./testbed.ts";

function rogueCert(): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), "aicr-rogue-"));
  try {
    return rogueCertIn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function rogueCertIn(dir: string): { cert: string; key: string } {
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

for (const backend of BACKENDS)
  describe(`[${backend}] https`, () => {
    const cluster = useCluster(backend, { https: true, controllers: false });

    test("the generated CA verifies the server; no client certificate means anonymous", async () => {
      expect(cluster().url).toStartWith("https://");
      const res = await fetch(`${cluster().url}/api/v1/namespaces`, { tls: { ca: cluster().caCert } });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { message: string }).message).toBe(
        'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
      );
    });

    test("a client certificate authenticates as its CN, with its O as groups", async () => {
      const admin = wireClient(cluster(), "admin", {}, { auth: "certificate" });
      const review = await admin.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", {
        apiVersion: "authentication.k8s.io/v1",
        kind: "SelfSubjectReview",
      });
      expect(review.body.status.userInfo).toEqual({
        username: "admin",
        groups: ["system:masters", "system:authenticated"],
      });
    });

    test("a client certificate signed by another CA is refused at the handshake", async () => {
      const rogue = rogueCert();
      const outcome = await fetch(`${cluster().url}/api/v1/namespaces`, {
        tls: { ca: cluster().caCert, ...rogue },
      }).then(
        (r) => `answered ${r.status}`,
        () => "refused",
      );
      expect(outcome).toBe("refused");
    });
  });
