/**
 * withRun against the fake apiserver, at the HTTP boundary: what is refused before the first request,
 * the one deadline over the gate and the work (its TIMEOUT, a silent server, a budget begun earlier),
 * teardown on every path, and the caller's cancel.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AicrError } from "../../../src/core/errors.ts";
import { KubeClient } from "../../../src/kube/client.ts";
import { runLabels } from "../../../src/run/labels.ts";
import { runNames } from "../../../src/run/names.ts";
import { type RunOptions, withRun } from "../../../src/run/pipeline.ts";
import { resource } from "../../cluster/resources.ts";
import { CLUSTER_HOOK_MS, startTestCluster, type TestCluster } from "../../cluster/testbed.ts";
import { rejection } from "../../support/reject.ts";
import { requestsSince } from "../../support/requests.ts";

const NS = "pipeline";
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startTestCluster("fake", {});
}, CLUSTER_HOOK_MS);
afterAll(() => cluster?.stop(), CLUSTER_HOOK_MS);

const connect = () => KubeClient.connect({ kubeconfig: cluster.kubeconfigFor("admin"), env: {} });

const base = (client: KubeClient, more: Partial<RunOptions> = {}): RunOptions => ({
  client,
  timeoutMs: 60_000,
  cleanup: true,
  timeout: { what: "the test run did not finish", remedy: "raise --timeout" },
  ...more,
});

const never = <T>(): Promise<T> => new Promise<T>(() => {});

/** A ConfigMap of the run, labelled as every run object is. */
const configMap = (runId: string, labels: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: `aicr-pipeline-${runId}`, namespace: NS, labels },
  data: { k: "v" },
});

describe("before the first request", () => {
  test("a timeout that is not a positive number is refused, nothing sent", async () => {
    const before = cluster.log.entries.length;
    const err = await rejection(
      withRun(base(connect(), { timeoutMs: 0 }), {
        plan: () => ({}),
        gate: async () => ({}),
        scope: () => ({ removeCommand: () => undefined }),
        execute: async () => "never",
      }),
    );
    expect(err.code).toBe("INVALID_REQUEST");
    expect(err.message).toContain("invalid timeoutMs 0");
    expect(requestsSince(cluster, before)).toEqual([]);
  });

  test("the plan runs first: a name it refuses writes nothing", async () => {
    const before = cluster.log.entries.length;
    const err = await rejection(
      withRun(base(connect(), { runId: "x".repeat(70) }), {
        plan: (identity) => runNames({ runId: identity.runId, jobPrefix: "aicr" }),
        gate: async () => ({}),
        scope: () => ({ removeCommand: () => undefined }),
        execute: async () => "never",
      }),
    );
    expect(err).toBeInstanceOf(AicrError);
    expect(requestsSince(cluster, before)).toEqual([]);
  });
});

describe("one deadline", () => {
  test("it bounds the gate: the TIMEOUT says what did not finish, within which flag and time", async () => {
    const client = connect();
    const err = await rejection(
      withRun(base(client, { timeoutMs: 300 }), {
        plan: () => ({}),
        gate: async (run) => {
          // The server has answered: a wait past the deadline is slow, not silent.
          await run.client.list("v1", "Namespace");
          return never<object>();
        },
        scope: () => ({ removeCommand: () => undefined }),
        execute: async () => "never",
      }),
    );
    expect(err.code).toBe("TIMEOUT");
    expect(err.message).toBe("the test run did not finish within --timeout 300ms");
  });

  test("a server that never answered anything is reported unavailable, not slow", async () => {
    const err = await rejection(
      withRun(base(connect(), { timeoutMs: 200 }), {
        plan: () => ({}),
        gate: () => never<object>(),
        scope: () => ({ removeCommand: () => undefined }),
        execute: async () => "never",
      }),
    );
    expect(err.code).toBe("SERVICE_UNAVAILABLE");
  });

  test("a budget begun earlier (validate's capture, then its checks) ends at its start plus --timeout", async () => {
    const client = connect();
    await client.list("v1", "Namespace");
    const err = await rejection(
      withRun(base(client, { timeoutMs: 60_000, startedAt: Date.now() - 60_000 }), {
        plan: () => ({}),
        gate: () => never<object>(),
        scope: () => ({ removeCommand: () => undefined }),
        execute: async () => "never",
      }),
    );
    expect(err.code).toBe("TIMEOUT");
    expect(err.message).toBe("the test run did not finish within --timeout 1m");
  });
});

describe("teardown", () => {
  test("a failing step still cleans up what the run created (UID-pinned), then its error leaves", async () => {
    const client = connect();
    await client.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } }).catch(() => {});
    let runId = "";
    const err = await rejection(
      withRun(base(client), {
        plan: (identity) => runLabels(identity),
        gate: async () => ({}),
        scope: () => ({ removeCommand: () => undefined }),
        execute: async (run, labels) => {
          runId = run.identity.runId;
          await run.scope.create(configMap(runId, labels), run.signal);
          expect(cluster.store.get(resource("configmaps"), NS, `aicr-pipeline-${runId}`)).toBeDefined();
          throw new AicrError("INTERNAL", "the step failed");
        },
      }),
    );
    expect(err.message).toBe("the step failed");
    expect(() => cluster.store.get(resource("configmaps"), NS, `aicr-pipeline-${runId}`)).toThrow(
      "not found",
    );
  });

  test("the result comes back with the receipt; --no-cleanup keeps the objects and lists them", async () => {
    const client = connect();
    const kept = await withRun(base(client, { cleanup: false }), {
      plan: (identity) => runLabels(identity),
      gate: async () => ({ mode: "prefix" }),
      scope: () => ({ removeCommand: () => "aicr runs delete <id>" }),
      execute: async (run, labels) => {
        await run.scope.create(configMap(run.identity.runId, labels), run.signal);
        return 42;
      },
    });
    expect(kept.value).toBe(42);
    expect(kept.receipt).toEqual([]);
    expect(kept.kept.map((k) => `${k.kind}/${k.name}`)).toEqual([`ConfigMap/aicr-pipeline-${kept.runId}`]);
    const cleaned = await withRun(base(client), {
      plan: (identity) => runLabels(identity),
      gate: async () => ({}),
      scope: () => ({ removeCommand: () => undefined }),
      execute: async (run, labels) => {
        await run.scope.create(configMap(run.identity.runId, labels), run.signal);
        return "done";
      },
    });
    expect(cleaned.receipt.map((r) => `${r.kind}/${r.name} ${r.outcome}`)).toEqual([
      `ConfigMap/aicr-pipeline-${cleaned.runId} deleted`,
    ]);
  });

  test("the caller's cancel ends the run after cleanup, even when the step finished", async () => {
    const client = connect();
    const cancel = new AbortController();
    const err = await rejection(
      withRun(base(client, { signal: cancel.signal }), {
        plan: () => ({}),
        gate: async () => ({}),
        scope: () => ({ removeCommand: () => undefined }),
        execute: async () => {
          cancel.abort(new AicrError("CANCELED", "received SIGINT"));
          return "late";
        },
      }),
    );
    expect(err.code).toBe("CANCELED");
  });
});
