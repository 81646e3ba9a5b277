/**
 * One request through the fault proxy, in the order of the fake's pipeline.ts: read the body (for
 * the log), take the faults, hold (latencyMs, holdUntil), answer a status or a resume-gone watch
 * without asking the apiserver, else forward it and stream the answer back (cutting a watch after N
 * events, or resetting the client's connection once the apiserver answered); log the request once,
 * when its status is known (a stream: when it starts; a cut marks the entry later).
 */
import type http from "node:http";
import https from "node:https";
import type { Socket } from "node:net";
import type { Faults } from "../faults.ts";
import { mergeEffects } from "../faults.ts";
import { statusError } from "../http-util.ts";
import { requestInfo } from "../request-info.ts";
import type { LoggedRequest, RequestLog } from "../request-log.ts";
import {
  type Credential,
  downstreamResponseHeaders,
  type HeaderMap,
  type Identify,
  logIdentity,
  upstreamRequestHeaders,
} from "./fault-proxy-identity.ts";
import { EventCounter, faultApplies, goneEventLine } from "./fault-proxy-watch.ts";

export interface Upstream {
  url: URL;
  caCert: string;
  frontProxy: { cert: string; key: string };
  /** Keep-alive pools: with the front-proxy certificate (certificate users), and without (tokens, anonymous). */
  agents: { frontProxy: https.Agent; direct: https.Agent };
}

export interface ProxyContext {
  upstream: Upstream;
  faults: Faults;
  log: RequestLog;
  identify: Identify | undefined;
  /** The client's credential: its verified certificate (read once per connection) or its token. */
  credential(req: http.IncomingMessage): Credential;
}

const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-cache, private" };
/** Failures of a pooled connection the apiserver closed as it was reused: an idempotent request is sent again. */
const STALE_CONNECTION = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED"]);

function readAll(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** As the fake's pipeline: the parsed JSON body, else its text (binary protobuf bodies are left out). */
function bodyForLog(body: Buffer | undefined, contentType: string | undefined): unknown {
  if (!body || body.length === 0) return undefined;
  const text = body.toString("utf8");
  try {
    return JSON.parse(text);
  } catch {
    return contentType?.includes("protobuf") ? undefined : text;
  }
}

/** The lost response: reset the client's connection, as the fake's front.ts does (else close it). */
function drop(socket: Socket): void {
  const s = socket as Socket & { resetAndDestroy?: () => void };
  try {
    if (typeof s.resetAndDestroy === "function") return void s.resetAndDestroy();
  } catch {}
  s.destroy();
}

export async function proxyRequest(
  c: ProxyContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const method = req.method ?? "GET";
  const url = new URL(req.url ?? "/", "https://fault-proxy.invalid");
  const info = requestInfo(method, url);
  const socket = req.socket;
  const cred = c.credential(req);
  const streaming = info.verb === "watch" || url.searchParams.get("follow") === "true";
  let clientGone = false;
  res.on("close", () => {
    clientGone = true;
  });
  const body = method !== "GET" && method !== "HEAD" ? await readAll(req) : undefined;
  const effects = mergeEffects(c.faults.take(method, url.pathname, (f) => faultApplies(f, info, url)));
  const faults: string[] = [];
  let entry: LoggedRequest | undefined;
  // A cut watch is marked after its entry was written: keep the entry current.
  const markFault = (f: string) => {
    faults.push(f);
    if (entry) entry.fault = faults.join(", ");
  };
  const record = (status: number) => {
    const impersonate = {
      user: req.headers["impersonate-user"] as string | undefined,
      groups: req.headersDistinct["impersonate-group"] ?? [],
    };
    const who = logIdentity(cred, c.identify, impersonate, status);
    const logged = bodyForLog(body, req.headers["content-type"]);
    entry = c.log.record({
      user: who.user,
      groups: who.groups,
      verb: info.verb,
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      ...(logged === undefined ? {} : { body: logged }),
      status,
      ...(faults.length > 0 ? { fault: faults.join(", ") } : {}),
    });
  };
  /** The client never hears the answer (whose status is logged): its connection is reset. */
  const dropConnection = (status: number) => {
    if (entry) return;
    faults.push("connection dropped after commit");
    drop(socket);
    record(status);
  };
  /** An answer of the proxy's own (a fault, or the apiserver unreachable), never forwarded. */
  const answer = (status: number, headers: Record<string, string>, text: string) => {
    if (effects.dropAfterCommit) return dropConnection(status);
    if (!clientGone) {
      res.writeHead(status, headers);
      res.end(text);
    }
    record(status);
  };

  if (effects.latencyMs) await Bun.sleep(effects.latencyMs);
  if (effects.holdUntil) await effects.holdUntil.catch(() => {});
  if (effects.status) {
    faults.push(`status ${effects.status}`);
    const e = statusError(effects.status, effects.message, effects.retryAfterSeconds);
    const retry = effects.retryAfterSeconds;
    const headers = retry === undefined ? JSON_HEADERS : { ...JSON_HEADERS, "retry-after": String(retry) };
    return answer(e.code, headers, JSON.stringify(e.status));
  }
  if (effects.watchGoneOnResume) {
    // faultApplies let it through only for a watch with a resourceVersion. As in the fake, the ERROR
    // event counts toward a cut.
    faults.push("watch resume answered 410");
    const cut = effects.cutWatchAfterEvents;
    if (cut !== undefined && cut <= 1) faults.push("watch cut after 1 events");
    return answer(200, JSON_HEADERS, goneEventLine(url.searchParams.get("resourceVersion")!));
  }

  const headers: HeaderMap = upstreamRequestHeaders(req.rawHeaders, cred);
  if (body) headers["content-length"] = String(body.length);
  const viaFrontProxy = cred.kind === "certificate";
  const up = c.upstream;
  const idempotent = method === "GET" || method === "HEAD";
  let upReq: http.ClientRequest;
  let responded = false;

  const onResponse = (upRes: http.IncomingMessage) => {
    responded = true;
    const status = upRes.statusCode ?? 502;
    if (effects.dropAfterCommit) {
      // The apiserver answered: the write is committed. The client never hears of it.
      if (streaming) {
        upReq.destroy();
        return dropConnection(status);
      }
      upRes.resume();
      upRes.on("end", () => dropConnection(status));
      upRes.on("error", () => dropConnection(status));
      return;
    }
    record(status);
    if (clientGone) return void upReq.destroy();
    res.writeHead(status, downstreamResponseHeaders(upRes.rawHeaders));
    // At once, before any body: client-go blocks on a watch's headers (stack.md §7).
    res.flushHeaders();
    const cutAfter = status === 200 ? effects.cutWatchAfterEvents : undefined;
    if (cutAfter === 0) {
      // As the fake: a watch cut after 0 events ends at once (and the fake marks no fault for it).
      upReq.destroy();
      return void res.end();
    }
    const counter =
      cutAfter === undefined ? undefined : EventCounter.for(upRes.headers["content-type"], cutAfter);
    upRes.on("data", (chunk: Buffer) => {
      if (res.writableEnded) return;
      const end = counter ? counter.feed(chunk) : -1;
      if (end >= 0) {
        res.end(chunk.subarray(0, end));
        markFault(`watch cut after ${counter!.count} events`);
        return void upReq.destroy();
      }
      if (!res.write(chunk)) upRes.pause();
    });
    res.on("drain", () => upRes.resume());
    upRes.on("end", () => {
      if (!res.writableEnded) res.end();
    });
    upRes.on("error", () => {
      if (!res.writableEnded) res.destroy();
    });
  };

  const send = (retried: boolean) => {
    upReq = https.request({
      protocol: "https:",
      hostname: up.url.hostname,
      port: up.url.port,
      method,
      path: req.url ?? "/",
      headers,
      agent: viaFrontProxy ? up.agents.frontProxy : up.agents.direct,
      ca: up.caCert,
      ...(viaFrontProxy ? { cert: up.frontProxy.cert, key: up.frontProxy.key } : {}),
    });
    upReq.on("response", onResponse);
    upReq.on("error", (err: Error & { code?: string }) => {
      if (responded) {
        // Mid-answer: the client sees its stream break (unless the proxy already ended it: a cut, a drop).
        if (entry && !res.writableEnded) res.destroy();
        return;
      }
      if (idempotent && !retried && !clientGone && STALE_CONNECTION.has(err.code ?? "")) return send(true);
      const e = statusError(502, `the fault proxy could not reach the apiserver: ${err.message}`);
      answer(502, JSON_HEADERS, JSON.stringify(e.status));
    });
    upReq.end(body);
  };
  // A client that goes away closes a started upstream answer (an open watch, a followed log); one not
  // yet answered completes, so that its status is logged as the fake logs it.
  res.on("close", () => {
    if (entry && !res.writableFinished) upReq.destroy();
  });
  send(false);
}
