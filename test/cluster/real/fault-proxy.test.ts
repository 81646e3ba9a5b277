/**
 * The fault proxy against a real kube-apiserver (test/control-plane): identities as the apiserver sees
 * them, RBAC, every fault kind, streaming, the request log, keep-alive, and real clients through it
 * (aicr's KubeClient, kubectl).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeClient } from "../../../src/kube/client.ts";
import { until } from "../../support/until.ts";
import { clientCert, pki } from "../certs.ts";
import { Faults } from "../faults.ts";
import { lineStream } from "../http-client.ts";
import { writeKubeconfig } from "../kubeconfig.ts";
import { RequestLog } from "../request-log.ts";
import { type ControlPlane, startControlPlane } from "./control-plane.ts";
import { type FaultProxy, startFaultProxy } from "./fault-proxy.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const SSR = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
const ssr = { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" };
const cm = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, labels },
  data: { k: "v" },
});

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}
interface Stream {
  status: number;
  next(): Promise<string | undefined>;
  close(): void;
}
interface Creds {
  cert?: { cert: string; key: string };
  token?: string;
  headers?: Record<string, string>;
}

/** A small fetch client for `base` (the proxy or the apiserver itself) with one identity. */
function wire(base: string, creds: Creds = {}) {
  const ca = pki().caCert;
  const session = new Bun.FetchSession({ tls: { ca, ...(creds.cert ?? {}) } });
  const headers = (extra: Record<string, string> = {}) => ({
    ...(creds.token ? { authorization: `Bearer ${creds.token}` } : {}),
    ...creds.headers,
    ...extra,
  });
  const request = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const res = await session.fetch(base + path, {
      method,
      headers: headers(body === undefined ? {} : { "content-type": "application/json" }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, headers: res.headers, body: parsed };
  };
  return {
    session,
    request,
    get: (path: string) => request("GET", path),
    post: (path: string, body: unknown) => request("POST", path, body),
    async stream(path: string): Promise<Stream> {
      const abort = new AbortController();
      const res = await session.fetch(base + path, {
        headers: headers(),
        signal: abort.signal,
        timeout: false,
      });
      return lineStream(res, abort);
    },
  };
}

interface AuditEvent {
  stage: string;
  requestURI: string;
  verb: string;
  user: { username: string };
  objectRef?: { name?: string };
}

/** The apiserver's audit log (one event per stage: watches log ResponseStarted, then ResponseComplete). */
function audit(match: (e: AuditEvent) => boolean): AuditEvent[] {
  return readFileSync(cp.auditLog, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent)
    .filter(match);
}

/** Per test: conditions are waited on, never timed; a loaded 2-core machine may be slow to meet them. */
const SLOW = 60_000;

const ADMIN = clientCert("admin", ["system:masters"]);
const BOB = clientCert("bob", ["qa", "testers"]);

let cp: ControlPlane;
let proxy: FaultProxy;
let dir: string;
const faults = new Faults();
const log = new RequestLog();
/** Straight to the apiserver, as admin: what is really stored. */
let direct: ReturnType<typeof wire>;
let admin: ReturnType<typeof wire>;
const kubeconfigs: Record<"admin" | "bob" | "alice", string> = { admin: "", bob: "", alice: "" };

beforeAll(async () => {
  cp = await startControlPlane([{ name: "alice", groups: ["devs"], token: "alice-token" }]);
  const p = pki();
  proxy = await startFaultProxy({
    upstream: cp.url,
    caCert: p.caCert,
    serving: { cert: p.serverCert, key: p.serverKey },
    frontProxy: cp.frontProxy,
    faults,
    log,
    identify: (token) => (token === "alice-token" ? { user: "alice", groups: ["devs"] } : undefined),
  });
  dir = mkdtempSync(join(tmpdir(), "aicr-fault-proxy-"));
  kubeconfigs.admin = writeKubeconfig(dir, "admin", proxy.url, p.caCert, "admin", { cert: ADMIN });
  kubeconfigs.bob = writeKubeconfig(dir, "bob", proxy.url, p.caCert, "bob", { cert: BOB });
  kubeconfigs.alice = writeKubeconfig(dir, "alice", proxy.url, p.caCert, "alice", { token: "alice-token" });
  direct = wire(cp.url, { cert: ADMIN });
  admin = wire(proxy.url, { cert: ADMIN });
}, 300_000);

afterAll(async () => {
  await proxy?.stop();
  await cp?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  faults.clear();
  log.clear();
});

describe("identity: the apiserver sees the proxy's client", () => {
  test(
    "a client-certificate user is itself, with its groups",
    async () => {
      const r = await wire(proxy.url, { cert: BOB }).post(SSR, ssr);
      expect(r.status).toBe(201);
      expect(r.body.status.userInfo.username).toBe("bob");
      expect(r.body.status.userInfo.groups).toEqual(["qa", "testers", "system:authenticated"]);
      expect(log.entries).toMatchObject([
        {
          user: "bob",
          groups: ["qa", "testers", "system:authenticated"],
          verb: "create",
          path: SSR,
          status: 201,
        },
      ]);
    },
    SLOW,
  );

  test(
    "a static token user is itself",
    async () => {
      const r = await wire(proxy.url, { token: "alice-token" }).post(SSR, ssr);
      expect(r.status).toBe(201);
      expect(r.body.status.userInfo).toMatchObject({
        username: "alice",
        groups: ["devs", "system:authenticated"],
      });
      expect(log.entries[0]).toMatchObject({ user: "alice", groups: ["devs", "system:authenticated"] });
    },
    SLOW,
  );

  test(
    "a ServiceAccount token (JWT) is itself; the log reads its claims",
    async () => {
      const sa = "/api/v1/namespaces/default/serviceaccounts/default";
      await until(
        async () => (await direct.get(sa)).status === 200,
        "the default ServiceAccount exists",
        60_000,
      );
      const tr = await direct.post(`${sa}/token`, {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds: 600 },
      });
      expect(tr.status).toBe(201);
      const r = await wire(proxy.url, { token: tr.body.status.token }).post(SSR, ssr);
      expect(r.body.status.userInfo.username).toBe("system:serviceaccount:default:default");
      expect(log.entries[0]).toMatchObject({
        user: "system:serviceaccount:default:default",
        groups: ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
      });
    },
    SLOW,
  );

  test(
    "a client cannot choose its identity with X-Remote-* headers",
    async () => {
      const spoof = {
        "X-Remote-User": "admin",
        "X-Remote-Group": "system:masters",
        "X-Remote-Extra-Scopes": "x",
      };
      const asBob = await wire(proxy.url, { cert: BOB, headers: spoof }).post(SSR, ssr);
      expect(asBob.body.status.userInfo).toMatchObject({ username: "bob" });
      expect(asBob.body.status.userInfo.groups).not.toContain("system:masters");
      expect(asBob.body.status.userInfo.extra).toBeUndefined();
      const asAlice = await wire(proxy.url, { token: "alice-token", headers: spoof }).post(SSR, ssr);
      expect(asAlice.body.status.userInfo.username).toBe("alice");
      const anonymous = await wire(proxy.url, { headers: spoof }).get(CM);
      expect(anonymous.status).toBe(403);
      expect(anonymous.body.message).toContain('User "system:anonymous"');
    },
    SLOW,
  );

  test(
    "impersonation headers pass through (and are authorized by the apiserver)",
    async () => {
      const asAlice = await wire(proxy.url, { cert: ADMIN, headers: { "Impersonate-User": "alice" } }).post(
        SSR,
        ssr,
      );
      expect(asAlice.body.status.userInfo.username).toBe("alice");
      expect(log.entries[0]).toMatchObject({ user: "alice", groups: ["system:authenticated"] });
      const impersonate = { "Impersonate-User": "carol", "Impersonate-Group": "devs" };
      const asCarol = await wire(proxy.url, { cert: ADMIN, headers: impersonate }).post(SSR, ssr);
      expect(asCarol.body.status.userInfo).toMatchObject({
        username: "carol",
        groups: ["devs", "system:authenticated"],
      });
      expect(log.entries[1]).toMatchObject({ user: "carol", groups: ["devs", "system:authenticated"] });
      const denied = await wire(proxy.url, { cert: BOB, headers: { "Impersonate-User": "admin" } }).get(CM);
      expect(denied.status).toBe(403);
      expect(log.entries[2]).toMatchObject({ user: "bob", status: 403 });
    },
    SLOW,
  );

  test(
    "an unknown token is 401, logged with no user; an unverifiable certificate is refused",
    async () => {
      const r = await wire(proxy.url, { token: "no-such-token" }).get(CM);
      expect(r.status).toBe(401);
      expect(log.entries).toMatchObject([{ user: "", groups: [], verb: "list", status: 401 }]);
      // Signed by the front-proxy CA, not by the client CA: refused at the connection, as the apiserver does.
      const outcome = await wire(proxy.url, { cert: cp.frontProxy })
        .get(CM)
        .then(
          (a) => `answered ${a.status}`,
          () => "refused",
        );
      expect(outcome).toBe("refused");
      expect(log.entries).toHaveLength(1);
    },
    SLOW,
  );

  test(
    "RBAC denies a user without rights: the 403 passes through",
    async () => {
      const r = await wire(proxy.url, { cert: BOB }).get(CM);
      expect(r.status).toBe(403);
      expect(r.body).toMatchObject({ kind: "Status", reason: "Forbidden", code: 403 });
      expect(r.body.message).toContain('User "bob" cannot list resource "configmaps"');
      expect(log.entries).toMatchObject([{ user: "bob", verb: "list", status: 403 }]);
      expect(log.entries[0]!.fault).toBeUndefined();
    },
    SLOW,
  );
});

describe("faults", () => {
  test(
    "status 503 with Retry-After, without the request reaching the apiserver",
    async () => {
      const fault = faults.add({
        method: "POST",
        path: "/api/v1/namespaces/*/configmaps",
        status: 503,
        retryAfterSeconds: 2,
      });
      const r = await admin.post(CM, cm("fp-unavailable"));
      expect(r.status).toBe(503);
      expect(r.headers.get("retry-after")).toBe("2");
      expect(r.body).toEqual({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "injected fault: ServiceUnavailable",
        reason: "ServiceUnavailable",
        details: { retryAfterSeconds: 2 },
        code: 503,
      });
      expect((await direct.get(`${CM}/fp-unavailable`)).status).toBe(404);
      const creates = () => audit((e) => e.verb === "create" && e.objectRef?.name === "fp-unavailable");
      expect(creates()).toEqual([]);
      expect(log.entries[0]).toMatchObject({
        user: "admin",
        verb: "create",
        status: 503,
        fault: "status 503",
      });
      expect((await admin.post(CM, cm("fp-unavailable"))).status).toBe(201);
      expect(creates().map((e) => `${e.stage} ${e.user.username}`)).toEqual(["ResponseComplete admin"]);
      expect(fault.fired).toBe(1);
      expect(fault.matched).toBe(2);
    },
    SLOW,
  );

  test(
    "latency holds one request while others pass",
    async () => {
      expect((await direct.post(CM, cm("fp-slow"))).status).toBe(201);
      const fault = faults.add({ method: "GET", path: `${CM}/fp-slow`, latencyMs: 3000 });
      const order: string[] = [];
      const slow = admin.get(`${CM}/fp-slow`).then((r) => order.push(`slow ${r.status}`));
      await until(() => fault.matched === 1, "the slow request is held", 60_000);
      await admin.get(`${CM}/fp-slow-other`).then((r) => order.push(`fast ${r.status}`));
      await slow;
      expect(order).toEqual(["fast 404", "slow 200"]);
      expect(log.entries.map((e) => `${e.path.split("/").pop()} ${e.status}`)).toEqual([
        "fp-slow-other 404",
        "fp-slow 200",
      ]);
    },
    SLOW,
  );

  test(
    "holdUntil orders a request after an event",
    async () => {
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const fault = faults.add({ method: "GET", path: `${CM}/fp-held`, holdUntil: gate });
      const held = admin.get(`${CM}/fp-held`);
      await until(() => fault.matched === 1, "the request is held", 60_000);
      expect((await direct.post(CM, cm("fp-held"))).status).toBe(201);
      release();
      const r = await held;
      expect(r.status).toBe(200);
      expect(r.body.metadata.name).toBe("fp-held");
    },
    SLOW,
  );

  test(
    "dropAfterCommit: the ConfigMap is created, the client sees a connection error",
    async () => {
      faults.add({ method: "POST", path: CM, dropAfterCommit: true });
      const outcome = await admin.post(CM, cm("fp-lost")).then(
        (r) => `answered ${r.status}`,
        (e: Error & { code?: string }) => `failed ${e.code ?? e.name}`,
      );
      expect(outcome).toStartWith("failed");
      const stored = await direct.get(`${CM}/fp-lost`);
      expect(stored.status).toBe(200);
      expect(stored.body.metadata.uid).toBeString();
      expect(log.entries).toMatchObject([
        { user: "admin", verb: "create", status: 201, fault: "connection dropped after commit" },
      ]);
      expect((await admin.post(CM, cm("fp-lost"))).body.reason).toBe("AlreadyExists");
    },
    SLOW,
  );

  test(
    "cutWatchAfterEvents ends a watch after N events (lists are not counted)",
    async () => {
      const fault = faults.add({ path: CM, cutWatchAfterEvents: 2 });
      const list = await admin.get(CM);
      expect(list.status).toBe(200);
      expect(fault.matched).toBe(0);
      const uri = `${CM}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`;
      const w = await admin.stream(uri);
      expect(w.status).toBe(200);
      for (const name of ["fp-cut-1", "fp-cut-2", "fp-cut-3"]) await direct.post(CM, cm(name));
      const events = [await w.next(), await w.next()].map((l) => JSON.parse(l!));
      expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
        "ADDED fp-cut-1",
        "ADDED fp-cut-2",
      ]);
      expect(await w.next()).toBeUndefined();
      // The cut closed the upstream watch too.
      const stages = () => audit((e) => e.requestURI === uri).map((e) => e.stage);
      await until(() => stages().length === 2, "the upstream watch is closed", 60_000);
      expect(stages()).toEqual(["ResponseStarted", "ResponseComplete"]);
      expect(log.requestsOn(CM, "GET").map((e) => [e.verb, e.status, e.fault])).toEqual([
        ["list", 200, undefined],
        ["watch", 200, "watch cut after 2 events"],
      ]);
    },
    SLOW,
  );

  test(
    "watchGoneOnResume answers a resumed watch with one 410 Expired ERROR event",
    async () => {
      const fault = faults.add({ path: CM, watchGoneOnResume: true, count: 5 });
      const fresh = await admin.stream(`${CM}?watch=true&labelSelector=fp-none%3Dyes`);
      fresh.close();
      const list = await admin.get(`${CM}?resourceVersion=0`);
      expect(fault.matched).toBe(0);
      const rv = list.body.metadata.resourceVersion;
      const w = await admin.stream(`${CM}?watch=true&resourceVersion=${rv}`);
      expect(w.status).toBe(200);
      expect(JSON.parse((await w.next())!)).toEqual({
        type: "ERROR",
        object: {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message: `too old resource version: ${rv} (${rv})`,
          reason: "Expired",
          code: 410,
        },
      });
      expect(await w.next()).toBeUndefined();
      // Answered by the proxy: the apiserver never saw the resumed watch.
      expect(audit((e) => e.requestURI === `${CM}?watch=true&resourceVersion=${rv}`)).toEqual([]);
      expect(fault.matched).toBe(1);
      expect(log.entries.at(-1)).toMatchObject({
        verb: "watch",
        status: 200,
        fault: "watch resume answered 410",
      });
    },
    SLOW,
  );
});

describe("streaming", () => {
  test(
    "a watch streams events as they happen; closing it closes the upstream watch",
    async () => {
      const uri = `${CM}?watch=true&labelSelector=fp-stream%3Dyes`;
      const stages = () => audit((e) => e.requestURI === uri).map((e) => `${e.stage} ${e.user.username}`);
      // No resourceVersion and a selector nothing matches: the headers come before any event exists.
      const w = await admin.stream(uri);
      expect(w.status).toBe(200);
      expect(log.entries.at(-1)).toMatchObject({ verb: "watch", status: 200, query: { watch: "true" } });
      expect(stages()).toEqual(["ResponseStarted admin"]);
      expect((await direct.post(CM, cm("fp-streamed", { "fp-stream": "yes" }))).status).toBe(201);
      const ev = JSON.parse((await w.next())!);
      expect(ev).toMatchObject({ type: "ADDED", object: { metadata: { name: "fp-streamed" } } });
      w.close();
      await until(() => stages().length === 2, "the upstream watch is closed", 60_000);
      expect(stages()).toEqual(["ResponseStarted admin", "ResponseComplete admin"]);
    },
    SLOW,
  );

  test(
    "large bodies pass intact both ways",
    async () => {
      const big = "0123456789abcdef".repeat(60_000);
      const created = await admin.post(CM, { ...cm("fp-big"), data: { big } });
      expect(created.status).toBe(201);
      const read = await admin.get(`${CM}/fp-big`);
      expect(read.body.data.big).toBe(big);
      expect(log.entries[0]!.body).toMatchObject({ data: { big } });
    },
    SLOW,
  );
});

describe("request log and connections", () => {
  test(
    "one entry per request: user, verb, path, query, body, status",
    async () => {
      await admin.get(`${CM}?labelSelector=a%3Db`);
      await admin.post(CM, cm("fp-logged"));
      await admin.get(`${CM}/fp-logged`);
      const w = await admin.stream(`${CM}?watch=true&labelSelector=fp-none%3Dyes`);
      w.close();
      await admin.request("DELETE", `${CM}/fp-logged`, { propagationPolicy: "Background" });
      expect(log.entries.map((e) => [e.user, e.verb, e.method, e.path, e.status])).toEqual([
        ["admin", "list", "GET", CM, 200],
        ["admin", "create", "POST", CM, 201],
        ["admin", "get", "GET", `${CM}/fp-logged`, 200],
        ["admin", "watch", "GET", CM, 200],
        ["admin", "delete", "DELETE", `${CM}/fp-logged`, 200],
      ]);
      expect(log.entries[0]!.query).toEqual({ labelSelector: "a=b" });
      expect(log.entries[1]!.body).toEqual(cm("fp-logged"));
      expect(log.entries[4]!.body).toEqual({ propagationPolicy: "Background" });
      expect(log.mutatingRequests().map((e) => e.verb)).toEqual(["create", "delete"]);
      expect(log.entries.every((e) => e.fault === undefined)).toBe(true);
    },
    SLOW,
  );

  test(
    "keep-alive: sequential requests share one client connection",
    async () => {
      const before = proxy.connectionsAccepted();
      const client = wire(proxy.url, { cert: ADMIN });
      for (let i = 0; i < 5; i++) expect((await client.get(CM)).status).toBe(200);
      client.session.close();
      expect(proxy.connectionsAccepted() - before).toBe(1);
    },
    SLOW,
  );
});

describe("real clients through the proxy", () => {
  test(
    "aicr's KubeClient: get, create, watch",
    async () => {
      const kube = KubeClient.connect({ kubeconfig: kubeconfigs.admin, env: {} });
      try {
        const ns = await kube.get<{ metadata: { name: string } }>({
          apiVersion: "v1",
          kind: "Namespace",
          name: "default",
        });
        expect(ns.metadata.name).toBe("default");
        const object = cm("fp-kube-client");
        const created = await kube.create({
          ...object,
          metadata: { ...object.metadata, namespace: "default" },
        });
        expect((created.metadata as { uid?: string }).uid).toBeString();
        const abort = new AbortController();
        const seen: string[] = [];
        const ended = kube.watch<{ metadata: { name: string } }>(
          CM,
          { fieldSelector: "metadata.name=fp-kube-client" },
          {
            signal: abort.signal,
            onEvent: (e) => {
              seen.push(`${e.type} ${e.object.metadata.name}`);
              abort.abort();
            },
          },
        );
        await ended;
        expect(seen).toEqual(["ADDED fp-kube-client"]);
        expect(log.entries.map((e) => `${e.user} ${e.verb} ${e.status}`)).toEqual([
          "admin get 200",
          "admin create 201",
          "admin watch 200",
        ]);
      } finally {
        kube.close();
      }
      const alice = KubeClient.connect({ kubeconfig: kubeconfigs.alice, env: {} });
      try {
        await expect(
          alice.get({ apiVersion: "v1", kind: "ConfigMap", name: "fp-kube-client", namespace: "default" }),
        ).rejects.toThrow();
        expect(log.entries.at(-1)).toMatchObject({ user: "alice", verb: "get", status: 403 });
      } finally {
        alice.close();
      }
    },
    SLOW,
  );

  test(
    "kubectl: get ns and auth whoami",
    async () => {
      // Asynchronous: the proxy answering kubectl runs in this process.
      const kubectl = async (kubeconfig: string, ...args: string[]) => {
        const r = Bun.spawn([cp.kubectl, "--kubeconfig", kubeconfig, ...args], {
          stdout: "pipe",
          stderr: "pipe",
        });
        const [out, err, code] = await Promise.all([
          new Response(r.stdout).text(),
          new Response(r.stderr).text(),
          r.exited,
        ]);
        return { code, out, err };
      };
      const ns = await kubectl(kubeconfigs.admin, "get", "ns");
      expect(ns.err).toBe("");
      expect(ns.code).toBe(0);
      expect(ns.out).toContain("kube-system");
      const bob = await kubectl(kubeconfigs.bob, "auth", "whoami", "-o", "json");
      expect(bob.code).toBe(0);
      expect(JSON.parse(bob.out).status.userInfo).toEqual({
        username: "bob",
        groups: ["qa", "testers", "system:authenticated"],
      });
      const alice = await kubectl(kubeconfigs.alice, "auth", "whoami", "-o", "json");
      expect(JSON.parse(alice.out).status.userInfo.username).toBe("alice");
      expect(log.byUser("admin").some((e) => e.verb === "list" && e.path === "/api/v1/namespaces")).toBe(
        true,
      );
      expect(log.byUser("bob").map((e) => `${e.verb} ${e.path}`)).toContain(`create ${SSR}`);
    },
    SLOW,
  );
});
