/**
 * An apiserver address that accepts connections and never answers (a wedged proxy, a port held by
 * the wrong process): requests are bounded by the response-header limit and end SERVICE_UNAVAILABLE (exit 6)
 * naming the server, never a hang. Not retried: a server that held one request holds the next.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AicrError } from "../../src/core/errors.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { RESPONSE_HEADER_TIMEOUT_MS } from "../../src/kube/http.ts";
import { writeKubeconfig } from "../cluster/kubeconfig.ts";
import { aicr, baseEnv } from "./_aicr.ts";

let listener: Bun.TCPSocketListener<undefined>;
let accepted = 0;
let dir: string;
let https: string;
let http: string;

beforeAll(() => {
  // Accepts every connection and reads what comes, answering nothing: not even a TLS handshake.
  listener = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open() {
        accepted++;
      },
      data() {},
    },
  });
  dir = mkdtempSync(join(tmpdir(), "aicr-silent-"));
  const server = `127.0.0.1:${listener.port}`;
  https = writeKubeconfig(dir, "https", `https://${server}`, undefined, "u", { token: "t" });
  http = writeKubeconfig(dir, "http", `http://${server}`, undefined, "u", { token: "t" });
});
afterAll(() => {
  listener.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

test("a request to a silent server: SERVICE_UNAVAILABLE naming it after the limit, one connection, no retry", async () => {
  for (const kubeconfig of [http, https]) {
    const before = accepted;
    const client = KubeClient.connect({ kubeconfig, env: {} }, { responseHeaderTimeoutMs: 300 });
    const err = await client.get({ apiVersion: "v1", kind: "Namespace", name: "default" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    client.close();
    expect(err).toBeInstanceOf(AicrError);
    expect((err as AicrError).code).toBe("SERVICE_UNAVAILABLE");
    expect((err as AicrError).message).toContain(
      `127.0.0.1:${listener.port} accepted no request or sent no answer`,
    );
    expect(String(((err as AicrError).cause as Error).message)).toBe("no response within 0.3s");
    expect((err as AicrError).remedy).toContain("server address");
    expect(accepted - before).toBe(1);
  }
});

test(
  "with --timeout shorter than the limit, the run's deadline says the same, at the deadline (exit 6, not 5)",
  async () => {
    const r = await aicr(["snapshot", "-n", "anywhere", "--timeout", "3s"], {
      env: baseEnv({ KUBECONFIG: https }),
    });
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain(
      `waiting for the API server: the API server at https://127.0.0.1:${listener.port} accepted no request or sent no answer: no response within 3s`,
    );
    expect(r.stdout).toBe("");
  },
  RESPONSE_HEADER_TIMEOUT_MS,
);

test(
  "aicr snapshot against it exits 6 with the server and a remedy instead of hanging",
  async () => {
    const r = await aicr(["snapshot", "-n", "anywhere", "--timeout", "10m"], {
      env: baseEnv({ KUBECONFIG: https }),
    });
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toContain(
      `accepted no request or sent no answer: no response within ${RESPONSE_HEADER_TIMEOUT_MS / 1000}s`,
    );
    expect(r.stderr).toContain("remedy:");
    expect(r.stdout).toBe("");
  },
  RESPONSE_HEADER_TIMEOUT_MS * 3,
);
