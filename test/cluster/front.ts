/**
 * The public listener of a fake cluster: a TCP (or TLS) front that pipes each client connection to
 * the msw server on a private loopback port. It exists for two things Bun.serve cannot do:
 * reading the client certificate (node:tls exposes it under Bun) and resetting a connection after
 * the request was committed (the lost-response fault).
 */
import net from "node:net";
import tls from "node:tls";

export interface ConnectionInfo {
  /** Subject of a verified client certificate: CN is the user, O entries the groups. */
  cert?: { username: string; groups: string[] };
  drop(): void;
}

export interface TlsMaterial {
  key: string;
  cert: string;
  ca: string;
}

export class Front {
  private server: net.Server | undefined;
  private readonly byBackendPort = new Map<number, ConnectionInfo>();
  private readonly sockets = new Set<net.Socket>();
  /** Client connections accepted so far (tests of connection reuse read it). */
  accepted = 0;

  constructor(
    private readonly backendPort: number,
    private readonly tlsMaterial?: TlsMaterial,
  ) {}

  /** The connection a request arrived on, by the port of the front's socket to the backend. */
  connection(backendClientPort: number | undefined): ConnectionInfo | undefined {
    return backendClientPort === undefined ? undefined : this.byBackendPort.get(backendClientPort);
  }

  listen(): Promise<number> {
    const onClient = (client: net.Socket) => this.accept(client);
    this.server = this.tlsMaterial
      ? tls.createServer({ ...this.tlsMaterial, requestCert: true, rejectUnauthorized: false }, onClient)
      : net.createServer(onClient);
    const server = this.server;
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port));
    });
  }

  private accept(client: net.Socket): void {
    this.accepted++;
    // As the apiserver's VerifyClientCertIfGiven: no certificate is fine, an unverifiable one is not.
    if (this.tlsMaterial && presentedButUnverified(client as tls.TLSSocket)) return void client.destroy();
    client.pause();
    const cert = this.tlsMaterial ? peerIdentity(client as tls.TLSSocket) : undefined;
    const backend = net.connect(this.backendPort, "127.0.0.1");
    this.sockets.add(client);
    this.sockets.add(backend);
    let port: number | undefined;
    const close = () => {
      if (port !== undefined) this.byBackendPort.delete(port);
      this.sockets.delete(client);
      this.sockets.delete(backend);
      client.destroy();
      backend.destroy();
    };
    const info: ConnectionInfo = {
      ...(cert ? { cert } : {}),
      drop: () => {
        const c = client as net.Socket & { resetAndDestroy?: () => void };
        if (typeof c.resetAndDestroy === "function") c.resetAndDestroy();
        close();
      },
    };
    backend.once("connect", () => {
      port = backend.localPort;
      if (port !== undefined) this.byBackendPort.set(port, info);
      client.pipe(backend);
      backend.pipe(client);
      client.resume();
    });
    client.on("error", close);
    backend.on("error", close);
    client.on("close", close);
    backend.on("close", close);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function presentedButUnverified(socket: tls.TLSSocket): boolean {
  const cert = socket.getPeerCertificate();
  return !socket.authorized && !!cert && Object.keys(cert).length > 0;
}

function peerIdentity(socket: tls.TLSSocket): ConnectionInfo["cert"] {
  if (!socket.authorized) return undefined;
  const subject = socket.getPeerCertificate()?.subject as unknown as
    | Record<string, string | string[]>
    | undefined;
  const cn = subject?.CN;
  if (!cn) return undefined;
  const o = subject.O;
  return { username: String(cn), groups: o === undefined ? [] : Array.isArray(o) ? o : [o] };
}
