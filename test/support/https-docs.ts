/**
 * A loopback HTTPS document server for the https:// sources of aicr validate -r/-s: the test CA's
 * server certificate (test/cluster/certs.ts: valid for 127.0.0.1 and localhost), fixed documents by
 * path and the misbehaviours a fetch must survive — redirects (same host, another host, another port,
 * plain http, a loop), error statuses, an announced or an endless oversize body, invalid UTF-8, gzip,
 * a stalled body. It counts every request and the bytes each endless body gave out, so a test can
 * prove a refusal sent nothing and a cut-off stream was closed.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { pki, signedBy } from "../cluster/certs.ts";

export interface DocsServer {
  port: number;
  /** `https://127.0.0.1:<port><path>`. */
  url(path: string): string;
  /** The test CA in a PEM file (written into the directory given). */
  caFile: string;
  /** Another CA, which did not issue the server's certificate. */
  otherCaFile: string;
  /** Every request's path (with its query), in order. */
  requests: string[];
  /**
   * A URL on a raw TLS listener of its own that answers 200 with Content-Length: 10 MiB and one byte
   * (Bun.serve sets Content-Length itself); `announcedRequests` counts its requests.
   */
  announced: string;
  announcedRequests: () => number;
  /** Bytes the /endless body has handed out, and whether the client closed it. */
  endless: { sent: number; closed: boolean };
  stop(): void;
}

const CHUNK = new Uint8Array(64 * 1024).fill(0x61);

/**
 * Serves `docs` (path → text) and the fixed misbehaving routes:
 *  /redirect/same → /<first doc>; /redirect/relative → a relative Location; /redirect/localhost →
 *  the same port on localhost; /redirect/port → another port; /redirect/http → http://;
 *  /redirect/loop → itself; /status/<n> → that status;
 *  /endless → 64 KiB chunks until closed; /invalid-utf8; /gzip/<doc> → that doc gzipped;
 *  /stall → headers and one byte, then nothing.
 */
export function startDocsServer(docs: Record<string, string>, dir: string): DocsServer {
  const { caCert, serverCert, serverKey } = pki();
  const caFile = join(dir, "docs-ca.pem");
  const otherCaFile = join(dir, "other-ca.pem");
  writeFileSync(caFile, caCert);
  writeFileSync(otherCaFile, signedBy.frontProxy().ca);
  const requests: string[] = [];
  const endless = { sent: 0, closed: false };
  const first = Object.keys(docs)[0] ?? "/";
  const redirect = (location: string) => new Response(null, { status: 302, headers: { location } });
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert: serverCert, key: serverKey },
    fetch(req) {
      const url = new URL(req.url);
      const path = url.pathname;
      requests.push(`${path}${url.search}`);
      const doc = docs[path];
      if (doc !== undefined) return new Response(doc, { headers: { "content-type": "application/yaml" } });
      if (path === "/redirect/same") return redirect(first);
      if (path === "/redirect/relative") return redirect(`..${first}`);
      if (path === "/redirect/twice") return redirect("/redirect/same");
      if (path === "/redirect/localhost") return redirect(`https://localhost:${url.port}${first}`);
      if (path === "/redirect/port") return redirect(`https://127.0.0.1:${Number(url.port) + 1}${first}`);
      if (path === "/redirect/http") return redirect(`http://127.0.0.1:${url.port}${first}`);
      if (path === "/redirect/loop") return redirect("/redirect/loop");
      if (path.startsWith("/status/")) return new Response("no", { status: Number(path.slice(8)) });
      if (path === "/endless")
        return new Response(
          new ReadableStream({
            pull(c) {
              endless.sent += CHUNK.length;
              c.enqueue(CHUNK);
            },
            cancel() {
              endless.closed = true;
            },
          }),
        );
      if (path === "/invalid-utf8") return new Response(new Uint8Array([0x61, 0x3a, 0x20, 0xff, 0x0a]));
      if (path.startsWith("/gzip/")) {
        const text = docs[path.slice(5)] ?? "";
        return new Response(gzipSync(text), { headers: { "content-encoding": "gzip" } });
      }
      if (path === "/stall")
        return new Response(
          new ReadableStream({
            start(c) {
              c.enqueue(new Uint8Array([0x61]));
            },
          }),
        );
      return new Response("not here", { status: 404 });
    },
  });
  let announcedRequests = 0;
  const raw = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: serverCert, key: serverKey },
    socket: {
      data(socket) {
        announcedRequests++;
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\nx`);
      },
    },
  });
  const port = server.port as number;
  return {
    announced: `https://127.0.0.1:${raw.port}/announced`,
    announcedRequests: () => announcedRequests,
    port,
    url: (path) => `https://127.0.0.1:${port}${path}`,
    caFile,
    otherCaFile,
    requests,
    endless,
    stop: () => {
      server.stop(true);
      raw.stop(true);
    },
  };
}
