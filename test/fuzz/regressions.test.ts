/**
 * Every input that once broke a property (regressions.json), replayed through the compiled binary on
 * every run: the properties of _harness.ts, and a fixed finding's own exit and message. A case still
 * marked `known` is a test.todo naming its issue; delete the mark once its fix is in.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { FIXTURES } from "./_file-flags.ts";
import {
  type CountingServer,
  type InputKind,
  makeWorkspace,
  runBinary,
  startCountingServer,
  TIME_BOUND_MS,
  violations,
  type Workspace,
} from "./_harness.ts";
import { loadRegressions, type RegressionCase, RUN_KNOWN } from "./_regressions.ts";

const { cases } = loadRegressions();
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

/** A placeholder of regressions.json made real (see RegressionCase.argv). */
function resolve(value: string, c: RegressionCase): string {
  return value.replace(/\$(KUBECONFIG|SERVER|FILE:[\w.-]+|INPUT:[\w-]+|FIXTURE:\w+)/g, (_, what: string) => {
    if (what === "KUBECONFIG") return ws.kubeconfigFor(server);
    if (what === "SERVER") return server.host;
    const [kind, name = ""] = what.split(":");
    if (kind === "FILE") {
      const text = c.files?.[name];
      if (text === undefined) throw new Error(`${c.id}: no file ${name}`);
      // A file's own text may hold placeholders too ($SERVER, $INPUT:fifo), never another file.
      return ws.file(
        resolve(text.replaceAll("$FILE:", "FILE:"), c),
        `${Bun.hash(c.id).toString(16)}-${name}`,
      );
    }
    if (kind === "INPUT")
      return name === "kubeconfig" ? ws.kubeconfigFor(server) : ws.input(name as InputKind);
    const fixture = FIXTURES[name as keyof typeof FIXTURES];
    if (!fixture) throw new Error(`${c.id}: no fixture ${name}`);
    return fixture;
  });
}

describe("regressions: every input that once broke a property", () => {
  test("each case has a distinct id", () => {
    expect(new Set(cases.map((c) => c.id)).size).toBe(cases.length);
  });

  for (const c of cases) {
    if (c.known && !RUN_KNOWN) {
      test.todo(`${c.id} — known: ${c.broke}, ${c.known}`);
      continue;
    }
    test(
      c.id,
      async () => {
        const stdin = c.stdin === undefined ? undefined : resolve(c.stdin, c);
        const r = await runBinary(
          {
            argv: c.argv.map((a) => resolve(a, c)),
            env: {
              KUBECONFIG: ws.kubeconfigFor(server),
              DOCKER_CONFIG: join(ws.dir, "no-docker"),
              ...Object.fromEntries(Object.entries(c.env ?? {}).map(([k, v]) => [k, resolve(v, c)])),
            },
            cwd: ws.freshDir(),
            ...(stdin === undefined
              ? {}
              : c.stdin?.startsWith("$")
                ? { stdin: { path: stdin } }
                : { stdin: { text: stdin } }),
          },
          server,
        );
        expect(violations(r, ws.secrets).map((v) => `[${v.property}] ${v.detail}`)).toEqual([]);
        if (c.expect?.code !== undefined) expect(r.code, r.stderr).toBe(c.expect.code);
        if (c.expect?.stderr !== undefined) expect(r.stderr).toContain(c.expect.stderr);
      },
      TIME_BOUND_MS + 10_000,
    );
  }
});
