/**
 * A counting proxy in front of a test registry (plain HTTP on loopback): records every request
 * before forwarding it, and can answer some itself (faults). X-Forwarded-Host/Proto make the
 * registry's Location headers point back at the proxy.
 */

export interface SeenRequest {
  method: string;
  /** Path and query. */
  path: string;
}

export interface ProxyOptions {
  upstream: string;
  ca?: string;
  /** Answer instead of the registry (return undefined to forward). */
  fault?: (req: SeenRequest) => Response | undefined;
  /** Rewrite the registry's absolute Location headers to relative ones. */
  relativeLocations?: boolean;
  /** Answer headers not passed on (lower case), e.g. a registry's OCI-Subject. */
  dropHeaders?: string[];
}

export interface CountingProxy {
  url: string;
  host: string;
  seen: SeenRequest[];
  /** Requests that move data or change state: uploads (POST/PATCH/PUT of blobs) and manifest PUTs. */
  writes(): SeenRequest[];
  stop(): void;
}

export function startProxy(o: ProxyOptions): CountingProxy {
  const seen: SeenRequest[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const entry = { method: req.method, path: `${url.pathname}${url.search}` };
      seen.push(entry);
      const injected = o.fault?.(entry);
      if (injected) return injected;
      const headers = new Headers(req.headers);
      headers.delete("host");
      headers.set("x-forwarded-host", url.host);
      headers.set("x-forwarded-proto", "http");
      const body =
        req.method === "GET" || req.method === "HEAD" ? undefined : new Uint8Array(await req.arrayBuffer());
      const res = await fetch(new URL(entry.path, o.upstream), {
        method: req.method,
        headers,
        ...(body ? { body } : {}),
        redirect: "manual",
        ...(o.ca ? { tls: { ca: o.ca } } : {}),
      });
      const out = new Headers(res.headers);
      const loc = out.get("location");
      if (loc && o.relativeLocations) {
        const abs = new URL(loc, url);
        out.set("location", `${abs.pathname}${abs.search}`);
      }
      out.delete("content-encoding");
      for (const name of o.dropHeaders ?? []) out.delete(name);
      const data = req.method === "HEAD" ? null : new Uint8Array(await res.arrayBuffer());
      return new Response(data, { status: res.status, headers: out });
    },
  });
  const host = `127.0.0.1:${server.port}`;
  return {
    url: `http://${host}`,
    host,
    seen,
    writes: () => seen.filter((r) => r.method === "POST" || r.method === "PATCH" || r.method === "PUT"),
    stop: () => void server.stop(true),
  };
}
