/**
 * Exec credential plugins through the compiled binary, against the fake apiserver: `aicr runs list`
 * (a wave of list calls) runs the plugin once; a failing plugin is exit 4 naming it, with its stderr
 * and never its stdout; SIGINT while the plugin hangs ends aicr (exit 9) and the plugin with it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { CLUSTER_HOOK_MS, startTestCluster, type TestCluster } from "../cluster/testbed.ts";
import { alive, goneSoon } from "../support/processes.ts";
import { AICR, aicr, baseEnv, ensureBuilt } from "./_aicr.ts";

const TEST_MS = 30_000;
/** What a failing plugin prints on stdout: it must appear nowhere. */
const FAKE_TOKEN = "fake-token-in-stdout-5d1e0b";

let cluster: TestCluster;
let dir: string;
let token: string;
let n = 0;

beforeAll(async () => {
  cluster = await startTestCluster("fake", { controllers: false });
  token = cluster.fake!.tokenFor("admin");
  dir = mkdtempSync(join(tmpdir(), "aicr-e2e-exec-"));
  await ensureBuilt();
}, CLUSTER_HOOK_MS);
afterAll(async () => {
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}, CLUSTER_HOOK_MS);

/** A plugin script in a folder of its own (its runs counted in `count`, its pid in `pid`) and a kubeconfig naming it. */
function setup(body: string, command?: string): { kubeconfig: string; folder: string; runs: () => number } {
  const folder = join(dir, `plugin-${++n}`);
  mkdirSync(folder);
  const plugin = join(folder, "plugin.sh");
  writeFileSync(plugin, `#!/bin/sh\necho run >> "${folder}/count"\necho $$ > "${folder}/pid"\n${body}\n`);
  chmodSync(plugin, 0o755);
  const kubeconfig = join(folder, "kubeconfig");
  writeFileSync(
    kubeconfig,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server: cluster.url } }],
      users: [
        {
          name: "me",
          user: {
            exec: {
              apiVersion: "client.authentication.k8s.io/v1",
              command: command ?? plugin,
              interactiveMode: "IfAvailable",
            },
          },
        },
      ],
      contexts: [{ name: "c", context: { cluster: "c", user: "me" } }],
      "current-context": "c",
    }),
    { mode: 0o600 },
  );
  const count = join(folder, "count");
  return {
    kubeconfig,
    folder,
    runs: () => (existsSync(count) ? readFileSync(count, "utf8").split("\n").length - 1 : 0),
  };
}

const credential = (t: string) =>
  `cat <<'EOF'\n${JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential", status: { token: t } })}\nEOF`;

test(
  "runs list: every request carries the plugin's token, and the plugin ran once",
  async () => {
    const { kubeconfig, runs } = setup(`sleep 0.2\n${credential(token)}`);
    const since = cluster.log.entries.length;
    const r = await aicr(["runs", "list", "-A"], { env: baseEnv({ KUBECONFIG: kubeconfig }) });
    expect(r.code, r.stderr).toBe(0);
    const requests = cluster.log.entries.slice(since);
    expect(requests.length).toBeGreaterThan(4);
    expect(new Set(requests.map((e) => e.user))).toEqual(new Set(["admin"]));
    expect(runs()).toBe(1);
  },
  TEST_MS,
);

test(
  "a relative command with a slash is found beside the kubeconfig, as kubectl finds it",
  async () => {
    const { kubeconfig, runs } = setup(credential(token), "./plugin.sh");
    const r = await aicr(["runs", "list", "-A"], { cwd: dir, env: baseEnv({ KUBECONFIG: kubeconfig }) });
    expect(r.code, r.stderr).toBe(0);
    expect(runs()).toBe(1);
  },
  TEST_MS,
);

test(
  "snapshot --timeout while the plugin hangs: exit 4 naming the plugin, not a silent API server; nothing sent",
  async () => {
    const { kubeconfig, folder } = setup("sleep 600");
    const since = cluster.log.entries.length;
    const r = await aicr(["snapshot", "-n", "default", "--timeout", "2s"], {
      env: baseEnv({ KUBECONFIG: kubeconfig }),
    });
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain(
      `--timeout ran out while the kubeconfig's exec credential plugin ${JSON.stringify(join(folder, "plugin.sh"))} was still running`,
    );
    expect(r.stderr).not.toContain("accepted no request");
    expect(cluster.log.entries.length).toBe(since);
    expect(await goneSoon(Number(readFileSync(join(folder, "pid"), "utf8")))).toBe(true);
  },
  TEST_MS,
);

test(
  "a failing plugin: exit 4 naming it, its stderr shown, its stdout nowhere (text and --log-json)",
  async () => {
    const { kubeconfig, folder } = setup(
      `echo '{"status":{"token":"${FAKE_TOKEN}"}}'\necho "error: the refresh token has expired; run 'cloud login'" >&2\nexit 1`,
    );
    for (const json of [false, true]) {
      const since = cluster.log.entries.length;
      const r = await aicr(["runs", "list", "-A", ...(json ? ["--log-json"] : [])], {
        env: baseEnv({ KUBECONFIG: kubeconfig }),
      });
      expect(r.code, r.stderr).toBe(4);
      const said = json ? JSON.parse(r.stderr.trim().split("\n").at(-1)!).msg : r.stderr;
      if (!json) expect(said).toContain("[UNAUTHORIZED]");
      expect(said).toContain(
        `the exec credential plugin ${JSON.stringify(join(folder, "plugin.sh"))} failed (exit 1)`,
      );
      expect(said).toContain("the refresh token has expired; run 'cloud login'");
      expect(r.stderr).not.toContain("inside the cluster");
      expect(r.stdout + r.stderr).not.toContain(FAKE_TOKEN);
      // Nothing was sent without a credential.
      expect(cluster.log.entries.length).toBe(since);
    }
  },
  TEST_MS,
);

test(
  "SIGINT while the plugin hangs: aicr exits 9 at once and the plugin (with what it started) is gone",
  async () => {
    const { kubeconfig, folder } = setup(`sleep 600 &\necho $! > "$(dirname "$0")/child"\nwait`);
    const proc = Bun.spawn([AICR, "runs", "list", "-A"], {
      env: baseEnv({ KUBECONFIG: kubeconfig }),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const child = join(folder, "child");
    for (let i = 0; i < 200 && !existsSync(child); i++) await Bun.sleep(50);
    expect(existsSync(child)).toBe(true);
    const pid = Number(readFileSync(join(folder, "pid"), "utf8"));
    const grandchild = Number(readFileSync(child, "utf8"));
    expect(alive(pid)).toBe(true);
    proc.kill("SIGINT");
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect(code, stderr).toBe(9);
    expect(stderr).toContain("[CANCELED]");
    expect(stderr).toContain("was stopped: cancelled by SIGINT");
    expect(await goneSoon(pid)).toBe(true);
    expect(await goneSoon(grandchild)).toBe(true);
  },
  TEST_MS,
);

test(
  "a second SIGINT exits at once, and the plugin still does not outlive aicr",
  async () => {
    // A plugin that ignores SIGTERM and SIGINT: only the SIGKILL at aicr's exit ends it.
    const { kubeconfig, folder } = setup(`trap '' TERM INT\nwhile :; do sleep 1; done`);
    const proc = Bun.spawn([AICR, "runs", "list", "-A"], {
      env: baseEnv({ KUBECONFIG: kubeconfig }),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const pidFile = join(folder, "pid");
    for (let i = 0; i < 200 && !existsSync(pidFile); i++) await Bun.sleep(50);
    const pid = Number(readFileSync(pidFile, "utf8"));
    proc.kill("SIGINT");
    await Bun.sleep(100);
    proc.kill("SIGINT");
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect(code, stderr).toBe(9);
    expect(await goneSoon(pid)).toBe(true);
  },
  TEST_MS,
);
