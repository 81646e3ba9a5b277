/** The multi-context orchestrator: file names, the summary, the verdict, and runPerContext itself. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AicrError } from "../../../src/core/errors.ts";
import { createLogger } from "../../../src/core/log.ts";
import { KubeClient } from "../../../src/kube/client.ts";
import {
  type ContextOutcome,
  contextFileNames,
  contextsFailure,
  renderContextsTable,
  runPerContext,
  sanitizeContextFileName,
  summaryRows,
} from "../../../src/remote/contexts.ts";
import { rawControls } from "../../support/raw-controls.ts";
import { thrown } from "../../support/reject.ts";

describe("sanitizeContextFileName", () => {
  test.each([
    ["kind-a", "kind-a"],
    ["gke_proj_us-central1_prod", "gke_proj_us-central1_prod"],
    ["arn:aws:eks:us-west-2:123456789012:cluster/prod", "arn_aws_eks_us-west-2_123456789012_cluster_prod"],
    ["admin@prod cluster", "admin_prod_cluster"],
    ["..", "_."],
    [".hidden", "_hidden"],
    ["../../etc/passwd", "_._.._etc_passwd"],
    ["", "_"],
    ["prod/α", "prod_"],
  ])("%p → %p", (name, stem) => expect(sanitizeContextFileName(name)).toBe(stem));

  test("at most 200 characters", () => expect(sanitizeContextFileName("x".repeat(300)).length).toBe(200));
});

describe("contextFileNames", () => {
  test("one file per context, in order", () => {
    expect([...contextFileNames(["a", "b/c"], "yaml")]).toEqual([
      ["a", "a.yaml"],
      ["b/c", "b_c.yaml"],
    ]);
  });

  test.each([
    ["a/b", "a:b"],
    ["Prod", "prod"],
  ])("%p and %p share a file: INVALID_REQUEST naming both", (one, two) => {
    const err = thrown(() => contextFileNames(["x", one, two], "yaml"));
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toContain(JSON.stringify(one));
    expect(err.message).toContain(JSON.stringify(two));
    expect(err.remedy).toContain("rename-context");
  });
});

const ok = (context: string, value: string, ms = 1234): ContextOutcome<string> => ({
  context,
  server: `https://${context}:6443`,
  durationMs: ms,
  status: "ok",
  value,
});
const failed = (context: string, error: unknown): ContextOutcome<string> => ({
  context,
  server: `https://${context}:6443`,
  durationMs: 50,
  status: "failed",
  error,
});

describe("summary", () => {
  const denied = new AicrError("UNAUTHORIZED", "the caller may not create jobs in gpu-operator\nsecond line");
  const rows = summaryRows([ok("prod", "out/prod.yaml"), failed("staging-east", denied)], (p) => p);

  test("rows: output on success, code and message on failure", () => {
    expect(rows).toEqual([
      {
        context: "prod",
        server: "https://prod:6443",
        status: "ok",
        durationS: 1.2,
        output: "out/prod.yaml",
      },
      {
        context: "staging-east",
        server: "https://staging-east:6443",
        status: "failed",
        durationS: 0.1,
        code: "UNAUTHORIZED",
        error: "the caller may not create jobs in gpu-operator\nsecond line",
      },
    ]);
  });

  test("the table: aligned columns, the first line of an error, a count", () => {
    expect(renderContextsTable(rows)).toBe(
      [
        "CONTEXT       SERVER                     STATUS  DURATION  RESULT",
        "prod          https://prod:6443          ok      1.2s      out/prod.yaml",
        "staging-east  https://staging-east:6443  failed  0.1s      [UNAUTHORIZED] the caller may not create jobs in gpu-operator",
        "1 of 2 contexts succeeded",
      ].join("\n"),
    );
  });

  test("a context's name, its server and an apiserver's message are shown escaped, never raw", () => {
    const attack = "\x1b]0;pwned\x07\x1b[2J";
    const table = renderContextsTable(
      summaryRows(
        [
          ok(`prod${attack}`, "out/p.yaml"),
          failed("b", new AicrError("SERVICE_UNAVAILABLE", `refused: ${attack}`)),
        ],
        (p) => p,
      ),
    );
    expect(rawControls(table)).toEqual([]);
    expect(table).toContain(
      "prod\\u001b]0;pwned\\u0007\\u001b[2J  https://prod\\u001b]0;pwned\\u0007\\u001b[2J:6443",
    );
    expect(table).toContain("[SERVICE_UNAVAILABLE] refused: \\u001b]0;pwned\\u0007\\u001b[2J");
  });

  test("an untyped error is UNSTRUCTURED", () => {
    expect(summaryRows([failed("a", new Error("boom"))], String)[0]?.code).toBe("UNSTRUCTURED");
  });
});

describe("contextsFailure", () => {
  const live = new AbortController().signal;
  const timeout = new AicrError("TIMEOUT", "no answer");

  test("all succeeded: none", () =>
    expect(contextsFailure([ok("a", "x"), ok("b", "y")], live)).toBeUndefined());

  test("one context: its own error (its own exit status)", () =>
    expect(contextsFailure([failed("a", timeout)], live)).toBe(timeout));

  test("several: INTERNAL, N of M, naming the failed", () => {
    const err = contextsFailure(
      [ok("a", "x"), failed("b", timeout), failed("c", timeout)],
      live,
    ) as AicrError;
    expect(err.code).toBe("INTERNAL");
    expect(err.exitCode).toBe(8);
    expect(err.message).toBe("2 of 3 contexts failed: b, c");
  });

  test("cancelled: the cancel reason", () => {
    const c = new AbortController();
    const reason = new AicrError("CANCELED", "cancelled");
    c.abort(reason);
    expect(contextsFailure([ok("a", "x"), failed("b", reason)], c.signal)).toBe(reason);
  });
});

describe("runPerContext", () => {
  const dir = mkdtempSync(join(tmpdir(), "aicr-per-context-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = join(dir, "config");
  writeFileSync(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters:
- { name: one, cluster: { server: "http://127.0.0.1:1" } }
- { name: two, cluster: { server: "http://127.0.0.1:2" } }
users:
- { name: u, user: {} }
contexts:
- { name: a, context: { cluster: one, user: u } }
- { name: b, context: { cluster: two, user: u } }
`,
  );
  const connect = async (context: string) => KubeClient.connect({ kubeconfig, context, env: {} });
  const targets = [
    { name: "a", server: "" },
    { name: "b", server: "" },
  ];

  test("each context its own client, all started before any ends; a failure does not stop the other", async () => {
    const lines: string[] = [];
    const log = createLogger({ json: true, write: (l) => void lines.push(l), fields: { runId: "r" } });
    const started: string[] = [];
    let release!: () => void;
    const bothStarted = new Promise<void>((r) => {
      release = r;
    });
    const outcomes = await runPerContext(
      targets,
      async (client, context, clog) => {
        started.push(context);
        if (started.length === 2) release();
        await bothStarted;
        clog.info("working", { server: client.server });
        if (context === "a") throw new AicrError("SERVICE_UNAVAILABLE", "cluster a unreachable");
        return client.server;
      },
      { log, signal: new AbortController().signal, connect },
    );
    expect(outcomes.map((o) => [o.context, o.status, o.server])).toEqual([
      ["a", "failed", "http://127.0.0.1:1"],
      ["b", "ok", "http://127.0.0.1:2"],
    ]);
    expect(outcomes[1]?.status === "ok" && outcomes[1].value).toBe("http://127.0.0.1:2");
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed.filter((l) => l.msg === "working").map((l) => [l.context, l.runId])).toEqual([
      ["a", "r"],
      ["b", "r"],
    ]);
    expect(parsed.find((l) => l.level === "error")).toMatchObject({
      context: "a",
      code: "SERVICE_UNAVAILABLE",
      msg: "cluster a unreachable",
    });
  });

  test("text lines carry a [context] prefix", async () => {
    const lines: string[] = [];
    const log = createLogger({ write: (l) => void lines.push(l), color: false, fields: { runId: "r" } });
    await runPerContext(targets, async (_c, _n, clog) => clog.info("hello"), {
      log,
      signal: new AbortController().signal,
      connect,
    });
    expect(lines.sort()).toEqual(["[a] hello\n", "[b] hello\n"]);
  });

  test("an unknown context is that context's failure, the other still runs", async () => {
    const outcomes = await runPerContext(
      [{ name: "nope", server: "" }, targets[1] ?? { name: "b", server: "" }],
      async () => "done",
      { log: createLogger({ write: () => {} }), signal: new AbortController().signal, connect },
    );
    expect(outcomes.map((o) => o.status)).toEqual(["failed", "ok"]);
  });

  test("cancelled before the start: every context canceled, no work run", async () => {
    const c = new AbortController();
    c.abort(new AicrError("CANCELED", "cancelled"));
    let ran = 0;
    const outcomes = await runPerContext(
      targets,
      async () => {
        ran++;
      },
      { log: createLogger({ write: () => {} }), signal: c.signal, connect },
    );
    expect(ran).toBe(0);
    expect(outcomes.map((o) => o.status)).toEqual(["canceled", "canceled"]);
  });
});
