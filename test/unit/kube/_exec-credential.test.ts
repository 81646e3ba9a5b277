/**
 * Exec credential plugins, through KubeHttp against the fake apiserver (faked at the HTTP boundary
 * only), with real plugins: small shell scripts that count their runs in a file, sleep, fail, and
 * print to stdout and stderr. Cached for the process, one run at a time, re-run when expired or
 * refused, bounded in time, stopped on cancel, and a failure that names the plugin and shows its
 * stderr, never its stdout.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { AicrError } from "../../../src/core/errors.ts";
import { clearExecCredentials, EXEC_REFRESH_MARGIN_MS } from "../../../src/kube/_exec-credential.ts";
import { loadKubeConfig } from "../../../src/kube/config.ts";
import { KubeHttp } from "../../../src/kube/http.ts";
import { clientCert } from "../../cluster/certs.ts";
import { CLUSTER_HOOK_MS, startTestCluster, type TestCluster } from "../../cluster/testbed.ts";
import { goneSoon } from "../../support/processes.ts";

const TEST_MS = 20_000;
const V1 = "client.authentication.k8s.io/v1";
const V1BETA1 = "client.authentication.k8s.io/v1beta1";
/** What a plugin prints on stdout when it fails: it must never reach a message. */
const STDOUT_SECRET = "stdout-secret-7f3a9c";

let cluster: TestCluster;
let tlsCluster: TestCluster;
let dir: string;
let token: string;
let n = 0;

beforeAll(async () => {
  [cluster, tlsCluster] = await Promise.all([
    startTestCluster("fake", { controllers: false }),
    startTestCluster("fake", { https: true, controllers: false, users: [{ name: "cert-user" }] }),
  ]);
  token = cluster.fake!.tokenFor("admin");
  dir = mkdtempSync(join(tmpdir(), "aicr-exec-credential-"));
}, CLUSTER_HOOK_MS);
afterAll(async () => {
  await Promise.all([cluster.stop(), tlsCluster.stop()]);
  rmSync(dir, { recursive: true, force: true });
}, CLUSTER_HOOK_MS);
beforeEach(() => clearExecCredentials());

interface Plugin {
  path: string;
  /** How many times it ran (lines in its count file). */
  runs(): number;
  /** The pid of its last run. */
  pid(): number;
  dir: string;
}

/** A plugin script: records its run and pid, then runs `body` (sh). Each one has a path of its own. */
function plugin(body: string): Plugin {
  const own = join(dir, `plugin-${++n}`);
  rmSync(own, { recursive: true, force: true });
  Bun.spawnSync(["mkdir", "-p", own]);
  const path = join(own, "plugin.sh");
  writeFileSync(path, `#!/bin/sh\necho run >> "${own}/count"\necho $$ > "${own}/pid"\n${body}\n`);
  chmodSync(path, 0o755);
  return {
    path,
    dir: own,
    runs: () =>
      existsSync(join(own, "count")) ? readFileSync(join(own, "count"), "utf8").split("\n").length - 1 : 0,
    pid: () => Number(readFileSync(join(own, "pid"), "utf8").trim()),
  };
}

const credential = (status: Record<string, unknown>, apiVersion = V1): string =>
  `cat <<'EOF'\n${JSON.stringify({ apiVersion, kind: "ExecCredential", status })}\nEOF`;

function kubeconfig(
  exec: Record<string, unknown>,
  o: { target?: TestCluster; user?: Record<string, unknown> } = {},
): string {
  const target = o.target ?? cluster;
  const path = join(dir, `kubeconfig-${++n}`);
  const clusterEntry = target.caCert
    ? { server: target.url, "certificate-authority-data": Buffer.from(target.caCert).toString("base64") }
    : { server: target.url };
  writeFileSync(
    path,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: clusterEntry }],
      users: [
        { name: "me", user: { exec: { apiVersion: V1, interactiveMode: "Never", ...exec }, ...o.user } },
      ],
      contexts: [{ name: "c", context: { cluster: "c", user: "me" } }],
      "current-context": "c",
    }),
  );
  return path;
}

function client(path: string, timeoutMs?: number): KubeHttp {
  const loaded = loadKubeConfig({ kubeconfig: path, env: {} });
  return new KubeHttp(loaded.kc, loaded.server, undefined, timeoutMs === undefined ? {} : { timeoutMs });
}

const version = (http: KubeHttp, signal?: AbortSignal) =>
  http.json<{ gitVersion?: string }>("GET", "/api/v1/namespaces/default", { signal });

async function failureOf(p: Promise<unknown>): Promise<AicrError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AicrError);
  return err as AicrError;
}

const users = (since: number) => cluster.log.entries.slice(since).map((e) => e.user);

describe("cached for the process, one run at a time", () => {
  test(
    "8 concurrent requests run the plugin once, and every one is authenticated with its token",
    async () => {
      const p = plugin(`sleep 0.3\n${credential({ token })}`);
      const http = client(kubeconfig({ command: p.path }));
      const since = cluster.log.entries.length;
      await Promise.all(Array.from({ length: 8 }, () => version(http)));
      expect(p.runs()).toBe(1);
      expect(users(since)).toEqual(Array(8).fill("admin"));
      // Later requests, and another client of the same kubeconfig in this process: still one run.
      await version(http);
      const other = client(kubeconfig({ command: p.path }));
      await version(other);
      expect(p.runs()).toBe(1);
      http.close();
      other.close();
    },
    TEST_MS,
  );

  test(
    "an expirationTimestamp in the past, or within the refresh margin, runs the plugin again; a later one does not",
    async () => {
      const cases = [
        { at: Date.now() - 60_000, runs: 3 },
        { at: Date.now() + EXEC_REFRESH_MARGIN_MS / 2, runs: 3 },
        { at: Date.now() + 3_600_000, runs: 1 },
      ];
      for (const c of cases) {
        const p = plugin(credential({ token, expirationTimestamp: new Date(c.at).toISOString() }));
        const http = client(kubeconfig({ command: p.path }));
        for (let i = 0; i < 3; i++) await version(http);
        expect(p.runs()).toBe(c.runs);
        http.close();
      }
    },
    TEST_MS,
  );

  test(
    "a token the apiserver refuses (401) is forgotten: the plugin runs again and the request is sent once more",
    async () => {
      // The first run answers a token the server does not know, the second the right one.
      const p = plugin(
        `if [ "$(wc -l < "$(dirname "$0")/count")" -eq 1 ]; then\n${credential({ token: "stale" })}\nelse\n${credential({ token })}\nfi`,
      );
      const http = client(kubeconfig({ command: p.path }));
      const since = cluster.log.entries.length;
      await version(http);
      expect(p.runs()).toBe(2);
      expect(cluster.log.entries.slice(since).map((e) => e.status)).toEqual([401, 200]);
      http.close();
    },
    TEST_MS,
  );

  test(
    "a client certificate from the plugin authenticates the TLS connection (known before its session is made)",
    async () => {
      const { cert, key } = clientCert("cert-user", []);
      const p = plugin(credential({ clientCertificateData: cert, clientKeyData: key }, V1BETA1));
      const http = client(kubeconfig({ command: p.path, apiVersion: V1BETA1 }, { target: tlsCluster }));
      const since = tlsCluster.log.entries.length;
      // Whoever it is may read nothing: the log says who the server took the caller for.
      await Promise.all([http.send("GET", "/version"), http.send("GET", "/version")]);
      expect(tlsCluster.log.entries.slice(since).map((e) => e.user)).toEqual(["cert-user", "cert-user"]);
      expect(p.runs()).toBe(1);
      http.close();
    },
    TEST_MS,
  );

  test(
    "a user with a token as well: kubectl uses the token and never runs the plugin",
    async () => {
      const p = plugin(credential({ token: "unused" }));
      const http = client(kubeconfig({ command: p.path }, { user: { token } }));
      await version(http);
      expect(p.runs()).toBe(0);
      http.close();
    },
    TEST_MS,
  );

  test(
    "the plugin gets the kubeconfig's env and args, and KUBERNETES_EXEC_INFO (the cluster only with provideClusterInfo)",
    async () => {
      for (const provideClusterInfo of [false, true]) {
        const p = plugin(
          `printf '%s' "$KUBERNETES_EXEC_INFO" > "$(dirname "$0")/info"\necho "$GREETING $1" > "$(dirname "$0")/env"\n${credential({ token })}`,
        );
        const http = client(
          kubeconfig({
            command: p.path,
            args: ["world"],
            env: [{ name: "GREETING", value: "hello" }],
            provideClusterInfo,
          }),
        );
        await version(http);
        expect(readFileSync(join(p.dir, "env"), "utf8").trim()).toBe("hello world");
        const info = JSON.parse(readFileSync(join(p.dir, "info"), "utf8"));
        expect(info).toEqual({
          apiVersion: V1,
          kind: "ExecCredential",
          spec: { interactive: false, ...(provideClusterInfo ? { cluster: { server: cluster.url } } : {}) },
        });
        http.close();
      }
    },
    TEST_MS,
  );
});

describe("bounded and stopped", () => {
  test(
    "a plugin that hangs: UNAUTHORIZED after the timeout, naming it, with its stderr; the plugin is gone",
    async () => {
      const p = plugin(`echo "waiting for you to log in" >&2\nsleep 600`);
      const http = client(kubeconfig({ command: p.path }), 300);
      const since = cluster.log.entries.length;
      const err = await failureOf(version(http));
      expect(err.code).toBe("UNAUTHORIZED");
      expect(err.message).toContain(
        `the exec credential plugin ${JSON.stringify(p.path)} gave no credential within 300ms`,
      );
      expect(err.message).toContain("waiting for you to log in");
      expect(err.remedy).toContain("log in once with kubectl");
      expect(await goneSoon(p.pid())).toBe(true);
      // No request went out without a credential.
      expect(cluster.log.entries.length).toBe(since);
      http.close();
    },
    TEST_MS,
  );

  test(
    "a cancelled request stops waiting at once (its signal's reason) and the plugin, alone waited for, is gone with what it started",
    async () => {
      // A plugin that started a process of its own: both go.
      const p = plugin(`sleep 600 &\necho $! > "$(dirname "$0")/child"\nwait`);
      const http = client(kubeconfig({ command: p.path }));
      const cancel = new AbortController();
      const pending = version(http, cancel.signal);
      while (!existsSync(join(p.dir, "child"))) await Bun.sleep(20);
      expect(http.pendingPlugin).toBe(JSON.stringify(p.path));
      const reason = new AicrError("CANCELED", "cancelled by the test");
      cancel.abort(reason);
      expect(
        await pending.then(
          () => undefined,
          (e: unknown) => e,
        ),
      ).toBe(reason);
      expect(await goneSoon(p.pid())).toBe(true);
      expect(await goneSoon(Number(readFileSync(join(p.dir, "child"), "utf8")))).toBe(true);
      expect(http.pendingPlugin).toBeUndefined();
      http.close();
    },
    TEST_MS,
  );

  test(
    "a cancelled request does not stop a run another request still waits for",
    async () => {
      const p = plugin(`sleep 0.5\n${credential({ token })}`);
      const http = client(kubeconfig({ command: p.path }));
      const cancel = new AbortController();
      const leaving = version(http, cancel.signal);
      const staying = version(http);
      while (p.runs() === 0) await Bun.sleep(20);
      cancel.abort(new Error("gone"));
      await expect(leaving).rejects.toThrow("gone");
      await staying;
      expect(p.runs()).toBe(1);
      http.close();
    },
    TEST_MS,
  );
});

describe("a failure names the plugin and shows its stderr, never its stdout", () => {
  test(
    "a non-zero exit: UNAUTHORIZED, the plugin and exit code named, stderr shown with its escapes visible, stdout absent",
    async () => {
      const p = plugin(
        `echo '{"status":{"token":"${STDOUT_SECRET}"}}'\nprintf 'error: \\033]0;pwned\\007\\033[31msession expired\\033[0m\\n' >&2\nexit 3`,
      );
      const err = await failureOf(version(client(kubeconfig({ command: p.path }))));
      expect(err.code).toBe("UNAUTHORIZED");
      expect(err.exitCode).toBe(4);
      expect(err.message).toContain(`the exec credential plugin ${JSON.stringify(p.path)} failed (exit 3)`);
      // Shown escaped (core/terminal.ts), never obeyed: no ESC or BEL reaches the terminal.
      expect(err.message).toContain("error: \\u001b]0;pwned\\u0007\\u001b[31msession expired\\u001b[0m");
      expect(err.message).not.toContain("\u001b");
      expect(err.message).not.toContain("\u0007");
      expect(JSON.stringify({ m: err.message, r: err.remedy, c: err.context })).not.toContain(STDOUT_SECRET);
    },
    TEST_MS,
  );

  test(
    "output that is no usable ExecCredential: UNAUTHORIZED saying what is wrong, the output never quoted",
    async () => {
      const cases: [string, string][] = [
        [`echo 'token=${STDOUT_SECRET}'`, "its output is not JSON"],
        [`echo '{"kind":"Other","status":{"token":"${STDOUT_SECRET}"}}'`, "not of kind ExecCredential"],
        [
          credential({ token: STDOUT_SECRET }, V1BETA1),
          `apiVersion ${V1BETA1}, where the kubeconfig names ${V1}`,
        ],
        [credential({}), "neither a token nor a client certificate and key"],
        [credential({ clientCertificateData: STDOUT_SECRET }), "a client certificate without its key"],
        [
          credential({ token: STDOUT_SECRET, expirationTimestamp: "soon" }),
          "expirationTimestamp is not a time",
        ],
      ];
      for (const [body, what] of cases) {
        const p = plugin(body);
        const err = await failureOf(version(client(kubeconfig({ command: p.path }))));
        expect(err.code).toBe("UNAUTHORIZED");
        expect(err.message).toContain(
          `the exec credential plugin ${JSON.stringify(p.path)} printed no usable ExecCredential`,
        );
        expect(err.message).toContain(what);
        expect(JSON.stringify({ m: err.message, r: err.remedy, c: err.context })).not.toContain(
          STDOUT_SECRET,
        );
      }
    },
    TEST_MS,
  );

  test(
    "a failed run is not cached: the next request runs the plugin again",
    async () => {
      const p = plugin("exit 1");
      const http = client(kubeconfig({ command: p.path }));
      await failureOf(version(http));
      await failureOf(version(http));
      expect(p.runs()).toBe(2);
    },
    TEST_MS,
  );

  test(
    "a plugin that cannot be run is INVALID_REQUEST before anything starts: not on PATH (its installHint), no such file",
    async () => {
      const missing = await failureOf(
        version(
          client(kubeconfig({ command: "aicr-no-such-plugin", installHint: "brew install\tthe-plugin" })),
        ),
      );
      expect(missing.code).toBe("INVALID_REQUEST");
      expect(missing.message).toContain('"aicr-no-such-plugin" is not on PATH');
      expect(missing.remedy).toBe("brew install the-plugin");
      const absent = await failureOf(version(client(kubeconfig({ command: join(dir, "absent.sh") }))));
      expect(absent.code).toBe("INVALID_REQUEST");
      expect(absent.message).toContain("does not exist");
    },
    TEST_MS,
  );

  test(
    "an exec aicr cannot honour is INVALID_REQUEST and the plugin never runs: interactiveMode Always, v1 without interactiveMode, an unknown apiVersion",
    async () => {
      const p = plugin(credential({ token }));
      const cases: [Record<string, unknown>, string][] = [
        [{ interactiveMode: "Always" }, "interactiveMode Always, and aicr runs plugins without a terminal"],
        [{ interactiveMode: undefined }, "has no interactiveMode"],
        [{ apiVersion: "client.authentication.k8s.io/v1alpha1" }, "is not supported"],
        [{ interactiveMode: "Sometimes" }, "not Never, IfAvailable or Always"],
      ];
      for (const [exec, what] of cases) {
        const err = await failureOf(version(client(kubeconfig({ command: p.path, ...exec }))));
        expect(err.code).toBe("INVALID_REQUEST");
        expect(err.message).toContain(what);
      }
      expect(p.runs()).toBe(0);
      // v1beta1 without interactiveMode is IfAvailable, as kubectl reads it.
      const beta = plugin(credential({ token }, V1BETA1));
      await version(
        client(kubeconfig({ command: beta.path, apiVersion: V1BETA1, interactiveMode: undefined })),
      );
      expect(beta.runs()).toBe(1);
    },
    TEST_MS,
  );
});
