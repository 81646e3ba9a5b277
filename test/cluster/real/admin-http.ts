/** A small admin client to the real apiserver (client certificate, system:masters), with JSON bodies. */
import { ApiStatusError, type Status } from "../errors.ts";
import type { KObject } from "../objects.ts";
import { apiVersionOf, type ResourceType } from "../resources.ts";

export interface AdminHttp {
  request(method: string, path: string, body?: unknown, contentType?: string): Promise<unknown>;
  stream(path: string, signal: AbortSignal): Promise<Response>;
}

export function adminHttp(url: string, tls: { ca: string; cert: string; key: string }): AdminHttp {
  return {
    async request(method, path, body, contentType = "application/json") {
      const res = await fetch(url + path, {
        method,
        headers: {
          accept: "application/json",
          ...(body === undefined ? {} : { "content-type": contentType }),
        },
        ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
        tls,
      } as RequestInit);
      const text = await res.text();
      const parsed = text ? JSON.parse(text) : undefined;
      if (!res.ok) {
        const status = (parsed ?? {}) as Partial<Status>;
        throw new ApiStatusError(
          res.status,
          status.reason ?? "Unknown",
          status.message ?? text,
          status.details,
        );
      }
      return parsed;
    },
    async stream(path, signal) {
      const res = await fetch(url + path, {
        headers: { accept: "application/json" },
        signal,
        tls,
      } as RequestInit);
      if (!res.ok) {
        const status = (await res.json().catch(() => ({}))) as Partial<Status>;
        throw new ApiStatusError(
          res.status,
          status.reason ?? "Unknown",
          status.message ?? "",
          status.details,
        );
      }
      return res;
    },
  };
}

/** /api/v1/namespaces/ns/pods[/name][/sub] for a ResourceType. */
export function pathOf(r: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  const base = r.group === "" ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  const ns = r.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  return `${base}${ns}/${r.plural}${name ? `/${encodeURIComponent(name)}` : ""}${subresource ? `/${subresource}` : ""}`;
}

export function withKind(r: ResourceType, o: KObject): KObject {
  return { apiVersion: apiVersionOf(r), kind: r.kind, ...o };
}
