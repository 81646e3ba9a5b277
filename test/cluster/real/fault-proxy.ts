/**
 * A fault proxy in front of a real kube-apiserver: the fake's fault injection (faults.ts) and request
 * log (request-log.ts) for tests against test/control-plane. Clients authenticate to it as they would
 * to the apiserver; it forwards a client-certificate user as an authenticating front proxy
 * (--requestheader-*: its own front-proxy certificate plus X-Remote-User and one X-Remote-Group per
 * group), a bearer token as it came, and no credential as anonymous. Faults apply where the fake's
 * pipeline applies them, and each request is logged once (fault-proxy-request.ts).
 *
 *   const proxy = await startFaultProxy({ upstream: cp.url, caCert: pki().caCert,
 *     serving: { cert: pki().serverCert, key: pki().serverKey }, frontProxy: cp.frontProxy, faults, log });
 *
 * Under Bun a node:https server does not expose the peer certificate (stack.md §2) but a node:tls
 * server does: TLS is accepted there and each connection handed to a node:http server, which sends a
 * streaming answer's headers at once (client-go blocks on them, §7). Upstream requests go through
 * node:https keep-alive agents: unlike fetch, which joins a repeated header into one line, it sends one
 * X-Remote-Group line per group, as the apiserver reads them.
 */
import http from "node:http";
import https from "node:https";
import type { Socket } from "node:net";
import tls from "node:tls";
import type { Faults } from "../faults.ts";
import type { RequestLog } from "../request-log.ts";
import { certificateUser, credentialOf, presentedButUnverified } from "./fault-proxy-identity.ts";
import { type ProxyContext, proxyRequest } from "./fault-proxy-request.ts";

export interface FaultProxyOptions {
  /** https://127.0.0.1:<port> of the real apiserver. */
  upstream: string;
  /** Verifies the apiserver, and clients' certificates. */
  caCert: string;
  /** The proxy's own server certificate. */
  serving: { cert: string; key: string };
  /** Its client certificate to the apiserver (CN=front-proxy, signed by the requestheader CA). */
  frontProxy: { cert: string; key: string };
  faults: Faults;
  log: RequestLog;
  /**
   * Who a bearer token belongs to, for the log (static users). ServiceAccount JWTs need no entry: the
   * proxy reads their `sub` and `kubernetes.io` claims without verifying (the apiserver verifies).
   */
  identify?(token: string): { user: string; groups: string[] } | undefined;
}

export interface FaultProxy {
  url: string;
  port: number;
  /** Client TCP connections accepted so far (keep-alive tests). */
  connectionsAccepted(): number;
  stop(): Promise<void>;
}

export async function startFaultProxy(o: FaultProxyOptions): Promise<FaultProxy> {
  // Only the certificate and key: a caller may pass an object that also holds the front-proxy CA.
  const frontProxy = { cert: o.frontProxy.cert, key: o.frontProxy.key };
  const agents = {
    frontProxy: new https.Agent({ keepAlive: true, ca: o.caCert, ...frontProxy }),
    direct: new https.Agent({ keepAlive: true, ca: o.caCert }),
  };
  const certs = new WeakMap<Socket, ReturnType<typeof certificateUser>>();
  const context: ProxyContext = {
    upstream: { url: new URL(o.upstream), caCert: o.caCert, frontProxy, agents },
    faults: o.faults,
    log: o.log,
    identify: o.identify?.bind(o),
    credential: (req) =>
      credentialOf(
        certs.has(req.socket) ? certs.get(req.socket) : certificateUser(req.socket as tls.TLSSocket),
        req.headers.authorization,
      ),
  };
  const server = http.createServer((req, res) => void proxyRequest(context, req, res));
  // Watches and followed logs stay open as long as their client wants; so do idle connections.
  server.keepAliveTimeout = 0;
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.timeout = 0;

  const sockets = new Set<tls.TLSSocket>();
  let accepted = 0;
  const front = tls.createServer(
    { key: o.serving.key, cert: o.serving.cert, ca: o.caCert, requestCert: true, rejectUnauthorized: false },
    (socket) => {
      accepted++;
      // As the apiserver's VerifyClientCertIfGiven: no certificate is fine, an unverifiable one is not.
      if (presentedButUnverified(socket)) return void socket.destroy();
      certs.set(socket, certificateUser(socket));
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      server.emit("connection", socket);
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    front.once("error", reject);
    front.listen(0, "127.0.0.1", () => resolve((front.address() as { port: number }).port));
  });
  let stopped: Promise<void> | undefined;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    connectionsAccepted: () => accepted,
    stop() {
      stopped ??= (async () => {
        const closed = new Promise<void>((resolve) => front.close(() => resolve()));
        for (const s of sockets) s.destroy();
        server.closeAllConnections?.();
        agents.frontProxy.destroy();
        agents.direct.destroy();
        await closed;
      })();
      return stopped;
    },
  };
}
