/** The harness catches what its properties claim: a check that never fails would prove nothing. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { FIXTURES } from "./_file-flags.ts";
import {
  type CountingServer,
  makeWorkspace,
  type RunResult,
  runBinary,
  startCountingServer,
  violations,
  type Workspace,
} from "./_harness.ts";

let ws: Workspace;
let server: CountingServer;
beforeAll(() => {
  ws = makeWorkspace();
  server = startCountingServer();
  ws.kubeconfigFor(server);
});
afterAll(() => {
  server?.stop();
  ws?.cleanup();
});

const result = (over: Partial<RunResult>): RunResult => ({
  code: 0,
  signal: null,
  stdout: "",
  stderr: "",
  ms: 10,
  peakRss: 60 * 2 ** 20,
  requests: [],
  ...over,
});

test("violations: a crash, an exit outside the contract, a request before a refusal, a secret, time, memory", () => {
  const props = (r: Partial<RunResult>) => violations(result(r), ws.secrets).map((v) => v.property);
  expect(props({})).toEqual([]);
  expect(props({ code: 1, stderr: "ERROR TypeError: x" })).toEqual(["crash"]);
  expect(props({ code: null, signal: "SIGSEGV" })).toEqual(["crash"]);
  expect(props({ code: 10 })).toEqual(["contract"]);
  expect(props({ code: 2, stderr: "ERROR [INVALID_REQUEST] x", requests: ["GET /api"] })).toEqual([
    "request-before-refusal",
  ]);
  // A conflict is found by asking: exit 2 after requests is its contract.
  expect(props({ code: 2, stderr: "ERROR [CONFLICT] x", requests: ["GET /api"] })).toEqual([]);
  expect(props({ code: 2, stderr: '{"level":"error","code":"CONFLICT"}', requests: ["GET /api"] })).toEqual(
    [],
  );
  expect(props({ stdout: `token: ${ws.secrets.token}` })).toEqual(["secret"]);
  expect(props({ stderr: ws.secrets.keyData.slice(10, 60) })).toEqual(["secret"]);
  expect(props({ killed: "time", code: null, signal: "SIGKILL" })).toEqual(["time"]);
  expect(props({ killed: "memory", code: null, signal: "SIGKILL", peakRss: 2 ** 30 })).toEqual(["memory"]);
});

test("through the binary: a template that is the kubeconfig prints its secrets, and the check sees them", async () => {
  // `--template` prints its literal text: the one file flag whose content is its output (skipped in
  // files.test.ts for that reason), so it makes a real leak to detect.
  const r = await runBinary(
    {
      argv: ["snapshot", "--local", "--template", ws.kubeconfigFor(server)],
      env: { KUBECONFIG: ws.kubeconfigFor(server) },
      cwd: ws.freshDir(),
    },
    server,
  );
  expect(r.code, r.stderr).toBe(0);
  expect(violations(r, ws.secrets).map((v) => v.property)).toEqual(["secret"]);
});

test("through the binary: the watchdog kills a run past its bound; requests are counted", async () => {
  const slow = await runBinary(
    { argv: ["image", "save", "-o", "slow.tar"], timeBoundMs: 300, cwd: ws.freshDir() },
    server,
  );
  expect(slow.killed).toBe("time");
  expect(slow.signal).toBe("SIGKILL");
  const counted = await runBinary(
    {
      argv: ["diff", "-b", "cm://fuzz-ns/a", "--target", FIXTURES.target],
      env: { KUBECONFIG: ws.kubeconfigFor(server) },
      cwd: ws.freshDir(),
    },
    server,
  );
  expect(counted.requests).toEqual(["GET /api/v1/namespaces/fuzz-ns/configmaps/a"]);
  expect(counted.code).toBe(3);
  expect(counted.peakRss).toBeGreaterThan(10 * 2 ** 20);
});
