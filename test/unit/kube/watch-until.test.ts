/**
 * watchUntil (src/kube/watch-until.ts) against the fake apiserver, at the HTTP boundary: list then
 * watch from the list's resourceVersion, or watch from a given one; a fresh list after a watch the
 * server closes or answers 410 Gone; events held until `ready`; the caller's signal (cancel or the
 * run's deadline) as the only other end. The request log shows what went over the wire.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { startDeadline } from "../../../src/core/deadline.ts";
import { AicrError } from "../../../src/core/errors.ts";
import { KubeClient } from "../../../src/kube/client.ts";
import { type WatchUntilOptions, watchUntil } from "../../../src/kube/watch-until.ts";
import type { KObject } from "../../cluster/objects.ts";
import type { LoggedRequest } from "../../cluster/request-log.ts";
import { resource } from "../../cluster/resources.ts";
import { useCluster } from "../../support/cluster.ts";
import { until } from "../../support/until.ts";

type ConfigMap = {
  metadata: { name: string; labels?: Record<string, string> };
  data?: Record<string, string>;
};

const cluster = useCluster("fake", { controllers: false });

const clients: KubeClient[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
  cluster().faults.clear();
});

let namespaces = 0;
/** A fresh namespace, its ConfigMaps' path, and a client. */
async function setup(): Promise<{ ns: string; path: string; client: KubeClient }> {
  const ns = `watch-${++namespaces}`;
  await cluster().store.create(resource("namespaces"), { metadata: { name: ns } });
  const client = KubeClient.connect({ kubeconfig: cluster().kubeconfigFor("admin"), env: {} });
  clients.push(client);
  return { ns, path: `/api/v1/namespaces/${ns}/configmaps`, client };
}

const put = (
  ns: string,
  name: string,
  data: Record<string, string> = {},
  labels = { app: "w" },
): Promise<KObject> =>
  Promise.resolve(
    cluster().store.create(resource("configmaps"), { metadata: { name, namespace: ns, labels }, data }),
  );

/** watchUntil over the namespace's ConfigMaps labelled app=w; `calls` records every check. */
function watchConfigMaps<R>(
  client: KubeClient,
  ns: string,
  check: (cm: ConfigMap, type: string) => R | undefined,
  extra: Partial<WatchUntilOptions<ConfigMap, R>> = {},
): { done: Promise<R>; calls: [string, string][]; abort: AbortController } {
  const calls: [string, string][] = [];
  const abort = new AbortController();
  const done = watchUntil<ConfigMap, R>({
    client,
    apiVersion: "v1",
    kind: "ConfigMap",
    plural: "configmaps",
    list: { namespace: ns, labelSelector: "app=w" },
    check: (cm, type) => {
      calls.push([cm.metadata.name, type]);
      return check(cm, type);
    },
    signal: abort.signal,
    ...extra,
  });
  done.catch(() => {}); // awaited by each test; a test that fails early leaves no unhandled rejection
  return { done, calls, abort };
}

const requests = (path: string, verb: "list" | "watch"): LoggedRequest[] =>
  cluster().log.entries.filter((e) => e.path === path && e.verb === verb);
const untilWatches = (path: string, n: number) =>
  until(() => requests(path, "watch").length >= n, `${n} watch(es) of ${path} open`);
const named =
  (name: string) =>
  (cm: ConfigMap): string | undefined =>
    cm.metadata.name === name ? cm.metadata.name : undefined;

describe("watchUntil", () => {
  test("lists first: what already holds is the answer, checked as LISTED; no watch is opened", async () => {
    const { ns, path, client } = await setup();
    await put(ns, "other");
    await put(ns, "ready");
    await put(ns, "unlabelled", {}, { app: "x" });
    const w = watchConfigMaps(client, ns, named("ready"));
    expect(await w.done).toBe("ready");
    expect(w.calls).toEqual([
      ["other", "LISTED"],
      ["ready", "LISTED"],
    ]);
    expect(requests(path, "list").map((e) => e.query.labelSelector)).toEqual(["app=w"]);
    expect(requests(path, "watch")).toEqual([]);
  });

  test("then watches from the list's resourceVersion, with bookmarks and the selector: a later change is the answer", async () => {
    const { ns, path, client } = await setup();
    await put(ns, "early");
    const w = watchConfigMaps(client, ns, (cm) => (cm.data?.phase === "done" ? cm.metadata.name : undefined));
    await untilWatches(path, 1);
    const later = await put(ns, "late", { phase: "running" });
    await cluster().store.mutate(resource("configmaps"), ns, "late", (o) => ({
      ...o,
      data: { phase: "done" },
    }));
    expect(await w.done).toBe("late");
    expect(w.calls).toEqual([
      ["early", "LISTED"],
      ["late", "ADDED"],
      ["late", "MODIFIED"],
    ]);
    const [watch] = requests(path, "watch");
    expect(watch?.query).toMatchObject({
      watch: "true",
      allowWatchBookmarks: "true",
      labelSelector: "app=w",
    });
    // From what the list saw: before the later create.
    expect(BigInt(watch?.query.resourceVersion ?? "0")).toBeLessThan(BigInt(later.metadata.resourceVersion!));
    expect(requests(path, "list").length).toBe(1);
  });

  test("from a resourceVersion: no list; only what follows it is seen", async () => {
    const { ns, path, client } = await setup();
    const before = await put(ns, "before");
    const from = before.metadata.resourceVersion!;
    const w = watchConfigMaps(client, ns, (cm) => cm.metadata.name, { resourceVersion: from });
    await untilWatches(path, 1);
    await put(ns, "after");
    expect(await w.done).toBe("after");
    expect(w.calls).toEqual([["after", "ADDED"]]);
    expect(requests(path, "list")).toEqual([]);
    expect(requests(path, "watch").map((e) => e.query.resourceVersion)).toEqual([from]);
  });

  test("a watch the server closes is followed by a fresh list and a watch from it: no gap", async () => {
    const { ns, path, client } = await setup();
    cluster().faults.add({ method: "GET", path, cutWatchAfterEvents: 1 });
    const w = watchConfigMaps(client, ns, named("target"));
    await untilWatches(path, 1);
    await put(ns, "noise"); // the one event of the first watch, which the server then ends
    await untilWatches(path, 2);
    await put(ns, "target");
    expect(await w.done).toBe("target");
    expect(requests(path, "watch").map((e) => e.fault)).toEqual(["watch cut after 1 events", undefined]);
    expect(requests(path, "list").length).toBe(2);
    // The relist saw the event the cut watch had delivered; the answer came from the second watch.
    expect(w.calls).toEqual([
      ["noise", "ADDED"],
      ["noise", "LISTED"],
      ["target", "ADDED"],
    ]);
  });

  test("410 Gone on resume: relisted, and the answer is found in the list", async () => {
    const { ns, path, client } = await setup();
    const from = (await put(ns, "a")).metadata.resourceVersion!;
    await put(ns, "target");
    cluster().faults.add({ method: "GET", path, watchGoneOnResume: true });
    const w = watchConfigMaps(client, ns, named("target"), { resourceVersion: from });
    expect(await w.done).toBe("target");
    expect(requests(path, "watch").map((e) => [e.query.resourceVersion, e.fault])).toEqual([
      [from, "watch resume answered 410"],
    ]);
    expect(requests(path, "list").length).toBe(1);
    expect(w.calls).toEqual([
      ["a", "LISTED"],
      ["target", "LISTED"],
    ]);
  });

  test("ready: events are held until it settles, then checked in order", async () => {
    const { ns, path, client } = await setup();
    const from = (await put(ns, "seed")).metadata.resourceVersion!;
    // The watch ends after the two events, so both are surely held when `ready` resolves.
    cluster().faults.add({ method: "GET", path, cutWatchAfterEvents: 2 });
    const ready = Promise.withResolvers<void>();
    const w = watchConfigMaps(client, ns, named("second"), { resourceVersion: from, ready: ready.promise });
    await untilWatches(path, 1);
    await put(ns, "first");
    await put(ns, "second");
    await until(() => requests(path, "watch")[0]?.fault === "watch cut after 2 events", "the watch cut");
    expect(w.calls).toEqual([]);
    ready.resolve();
    expect(await w.done).toBe("second");
    expect(w.calls).toEqual([
      ["first", "ADDED"],
      ["second", "ADDED"],
    ]);
    expect(requests(path, "list")).toEqual([]);
  });

  test("a ready that rejects ends the wait with its error; nothing held is checked", async () => {
    const { ns, path, client } = await setup();
    const from = (await put(ns, "seed")).metadata.resourceVersion!;
    const ready = Promise.withResolvers<void>();
    const w = watchConfigMaps(client, ns, (cm) => cm.metadata.name, {
      resourceVersion: from,
      ready: ready.promise,
    });
    await untilWatches(path, 1);
    await put(ns, "held");
    const refused = new AicrError("UNAUTHORIZED", "the Job's create was refused");
    ready.reject(refused);
    expect(await w.done.catch((e) => e)).toBe(refused);
    expect(w.calls).toEqual([]);
    expect(requests(path, "list")).toEqual([]);
  });

  test("a check that throws ends the wait with that error", async () => {
    const { ns, path, client } = await setup();
    const w = watchConfigMaps(client, ns, (cm) => {
      if (cm.metadata.name === "bad") throw new AicrError("INTERNAL", "the pod cannot run");
      return undefined;
    });
    await untilWatches(path, 1);
    await put(ns, "bad");
    const e = (await w.done.catch((x) => x)) as AicrError;
    expect(e).toBeInstanceOf(AicrError);
    expect(e.message).toBe("the pod cannot run");
  });

  test("the caller's abort: an AicrError reason comes back as is, any other is CANCELED; the watch is closed", async () => {
    const { ns, path, client } = await setup();
    const fake = cluster().fake!;
    const open = fake.store.watchCount;

    const first = watchConfigMaps(client, ns, () => undefined);
    await untilWatches(path, 1);
    const sigint = new AicrError("CANCELED", "cancelled by SIGINT");
    first.abort.abort(sigint);
    expect(await first.done.catch((e) => e)).toBe(sigint);
    await until(() => fake.store.watchCount === open, "the server's watch closed");

    const second = watchConfigMaps(client, ns, () => undefined);
    await untilWatches(path, 2);
    second.abort.abort("stop");
    const e = (await second.done.catch((x) => x)) as AicrError;
    expect(e).toBeInstanceOf(AicrError);
    expect(e.code).toBe("CANCELED");
    expect(e.message).toBe("cancelled while waiting");
    expect(e.cause).toBe("stop");
    await until(() => fake.store.watchCount === open, "the server's watch closed");
  });

  test("the run's deadline ends it with the deadline's TIMEOUT: what did not finish, within which flag and time", async () => {
    const { ns, client } = await setup();
    using deadline = startDeadline(new AbortController().signal, 50, {
      what: "the agent's pod did not start",
      remedy: "raise --timeout",
      flag: "--timeout",
    });
    const w = watchConfigMaps(client, ns, () => undefined, { signal: deadline.signal });
    const e = (await w.done.catch((x) => x)) as AicrError;
    expect(e).toBeInstanceOf(AicrError);
    expect(e.code).toBe("TIMEOUT");
    expect(e.message).toBe("the agent's pod did not start within --timeout 50ms");
    expect(e.remedy).toBe("raise --timeout");
    expect(e.context).toEqual({ timeoutMs: 50 });
  });
});
