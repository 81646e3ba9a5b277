import type { Writable } from "node:stream";
import type { KubernetesObject } from "@kubernetes/client-node";
import { AicrError } from "../core/errors.ts";
import { knownResource } from "./_known-kinds.ts";
import type { KubeConfigSource, LoadedKubeConfig } from "./config.ts";
import { loadKubeConfig } from "./config.ts";
import { toAicrError } from "./errors.ts";
import { KubeHttp, KubeHttpError } from "./http.ts";

/** A Kubernetes object in JSON form; builders produce these, the client sends them as they are. */
export type { KubernetesObject };
export type KubeObject = KubernetesObject & Record<string, unknown>;

/** What reads return: the caller names the shape it relies on (validated where the logic depends on it). */
type Read = object;

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string | undefined;
}

export interface ListOptions {
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  limit?: number | undefined;
  continueToken?: string | undefined;
}

export interface ListResult<T> {
  items: T[];
  continueToken?: string | undefined;
  resourceVersion?: string | undefined;
}

export interface DeleteOptions {
  /** Preconditions: the delete happens only if the live object still has this UID (and resourceVersion). */
  uid?: string | undefined;
  resourceVersion?: string | undefined;
  propagationPolicy?: "Foreground" | "Background" | "Orphan";
}

export interface AccessCheck {
  verb: string;
  group: string;
  resource: string;
  subresource?: string | undefined;
  namespace?: string | undefined;
  name?: string | undefined;
}

export interface AccessAnswer {
  allowed: boolean;
  reason?: string | undefined;
}

export type WatchEvent<T> = { type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR"; object: T };

/** The apiserver's list shape. */
interface RawList<T> {
  items?: T[];
  metadata?: { continue?: string; resourceVersion?: string };
}

interface DiscoveryResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

const groupVersionPath = (apiVersion: string): string =>
  apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;

export interface KubeClientOptions {
  /** How long a request waits for response headers before SERVICE_UNAVAILABLE (default 30 s). */
  responseHeaderTimeoutMs?: number;
}

/**
 * The one seam between aicr and the Kubernetes API (client-node reads the kubeconfig; kube/http.ts
 * carries the requests). Every call names what it was doing, and every failure leaves as an
 * AicrError (kube/errors.ts): a non-2xx answer as a KubeStatusError, with the apiserver's Status kept.
 */
export class KubeClient {
  readonly server: string;
  readonly origin: string;
  private readonly http: KubeHttp;
  /** Discovery answers, per group version, for kinds outside the known table. */
  private readonly discovered = new Map<string, Promise<DiscoveryResource[]>>();

  private constructor(loaded: LoadedKubeConfig, options: KubeClientOptions) {
    this.server = loaded.server;
    this.origin = loaded.origin;
    this.http = new KubeHttp(loaded.kc, loaded.server, options.responseHeaderTimeoutMs);
  }

  /** Whether the server has answered anything yet (a run's deadline tells "silent" from "slow" by it). */
  get answered(): boolean {
    return this.http.answered;
  }

  /** The exec credential plugin requests wait on now (its command, quoted); undefined when none. */
  get pendingPlugin(): string | undefined {
    return this.http.pendingPlugin;
  }

  static connect(source: KubeConfigSource, options: KubeClientOptions = {}): KubeClient {
    return new KubeClient(loadKubeConfig(source), options);
  }

  private async call<T>(doing: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toAicrError(err, doing, this.server);
    }
  }

  /** The collection path of a kind (its plural from the known table, else from discovery). */
  private async collection(apiVersion: string, kind: string, namespace?: string): Promise<string> {
    let mapping = knownResource(apiVersion, kind);
    if (!mapping) {
      const found = (await this.apiResources(apiVersion)).find(
        (r) => r.kind === kind && !r.name.includes("/"),
      );
      if (!found) {
        throw new AicrError("NOT_FOUND", `the API server does not serve kind ${kind} in ${apiVersion}`, {
          remedy: "check the apiVersion and kind, and that the CRD or API group is installed",
        });
      }
      mapping = { plural: found.name, namespaced: found.namespaced };
    }
    const scope = mapping.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
    return `${groupVersionPath(apiVersion)}${scope}/${mapping.plural}`;
  }

  private async objectPath(ref: ObjectRef): Promise<string> {
    return `${await this.collection(ref.apiVersion, ref.kind, ref.namespace)}/${encodeURIComponent(ref.name)}`;
  }

  serverVersion(): Promise<{ gitVersion: string; platform?: string; goVersion?: string }> {
    return this.call("reading the server version", () => this.http.json("GET", "/version"));
  }

  get<T extends Read = KubeObject>(ref: ObjectRef): Promise<T> {
    return this.call(`reading ${describe(ref)}`, async () =>
      this.http.json<T>("GET", await this.objectPath(ref)),
    );
  }

  list<T extends Read = KubeObject>(
    apiVersion: string,
    kind: string,
    options: ListOptions = {},
  ): Promise<ListResult<T>> {
    const where = options.namespace ? ` in namespace ${options.namespace}` : "";
    return this.call(`listing ${kind}${where}`, async () => {
      const list = await this.http.json<RawList<T>>(
        "GET",
        await this.collection(apiVersion, kind, options.namespace),
        {
          query: {
            labelSelector: options.labelSelector,
            fieldSelector: options.fieldSelector,
            limit: options.limit,
            continue: options.continueToken,
          },
        },
      );
      return {
        items: list.items ?? [],
        continueToken: list.metadata?.continue || undefined,
        resourceVersion: list.metadata?.resourceVersion,
      };
    });
  }

  create<T extends KubernetesObject>(object: T, options: { dryRun?: boolean } = {}): Promise<T> {
    const ref = refOf(object);
    return this.call(`creating ${describe(ref)}`, async () =>
      this.http.json<T>("POST", await this.collection(ref.apiVersion, ref.kind, ref.namespace), {
        body: object,
        query: { fieldManager: "aicr", dryRun: options.dryRun ? "All" : undefined },
      }),
    );
  }

  /**
   * Server-side apply: the apiserver merges by field ownership; `force` takes fields from other managers.
   * `signal` abandons the request in flight (the agent's pod being stopped must not wait for an answer).
   */
  apply<T extends KubernetesObject>(
    object: T,
    options: { fieldManager: string; force: boolean; signal?: AbortSignal | undefined },
  ): Promise<T> {
    const ref = refOf(object);
    return this.call(`applying ${describe(ref)}`, async () =>
      this.http.json<T>("PATCH", await this.objectPath(ref), {
        body: object,
        contentType: "application/apply-patch+yaml",
        query: { fieldManager: options.fieldManager, force: options.force || undefined },
        signal: options.signal,
      }),
    );
  }

  /** Replaces an object (PUT): its metadata.resourceVersion makes it an optimistic update. */
  update<T extends KubernetesObject>(object: T): Promise<T> {
    const ref = refOf(object);
    return this.call(`updating ${describe(ref)}`, async () =>
      this.http.json<T>("PUT", await this.objectPath(ref), { body: object, query: { fieldManager: "aicr" } }),
    );
  }

  /**
   * A GET of an API path no kind names: discovery documents and aggregated APIs such as
   * /apis/custom.metrics.k8s.io/v1beta1/namespaces/<ns>/pods/{all}/<metric>.
   */
  getPath<T extends Read = KubeObject>(path: string, what = `reading ${path}`): Promise<T> {
    return this.call(what, () => this.http.json<T>("GET", path));
  }

  mergePatch<T extends Read = KubeObject>(ref: ObjectRef, patch: Record<string, unknown>): Promise<T> {
    return this.call(`patching ${describe(ref)}`, async () =>
      this.http.json<T>("PATCH", await this.objectPath(ref), {
        body: patch,
        contentType: "application/merge-patch+json",
        query: { fieldManager: "aicr" },
      }),
    );
  }

  async delete(ref: ObjectRef, options: DeleteOptions = {}): Promise<void> {
    const preconditions =
      options.uid || options.resourceVersion
        ? {
            ...(options.uid ? { uid: options.uid } : {}),
            ...(options.resourceVersion ? { resourceVersion: options.resourceVersion } : {}),
          }
        : undefined;
    const body = {
      apiVersion: "v1",
      kind: "DeleteOptions",
      ...(preconditions ? { preconditions } : {}),
      ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}),
    };
    await this.call(`deleting ${describe(ref)}`, async () =>
      this.http.json("DELETE", await this.objectPath(ref), { body }),
    );
  }

  /** SelfSubjectAccessReview, or SubjectAccessReview when a subject is given. Persists nothing. */
  async review(check: AccessCheck, subject?: { user: string; groups: string[] }): Promise<AccessAnswer> {
    const resourceAttributes = { ...check, group: check.group };
    const kind = subject ? "SubjectAccessReview" : "SelfSubjectAccessReview";
    const answer = await this.call(
      `checking whether ${subject?.user ?? "the caller"} may ${check.verb} ${check.resource}`,
      () =>
        this.http.json<{ status?: { allowed?: boolean; reason?: string } }>(
          "POST",
          `/apis/authorization.k8s.io/v1/${kind.toLowerCase()}s`,
          {
            body: {
              apiVersion: "authorization.k8s.io/v1",
              kind,
              spec: subject
                ? { resourceAttributes, user: subject.user, groups: subject.groups }
                : { resourceAttributes },
            },
          },
        ),
    );
    return { allowed: Boolean(answer.status?.allowed), reason: answer.status?.reason };
  }

  /**
   * Who the apiserver says the caller is (SelfSubjectReview, `kubectl auth whoami`): the username, or
   * undefined when the answer names no one. Persists nothing.
   */
  async whoAmI(): Promise<string | undefined> {
    const answer = await this.call("asking the API server who the caller is", () =>
      this.http.json<{ status?: { userInfo?: { username?: string } } }>(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        { body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" } },
      ),
    );
    return answer.status?.userInfo?.username || undefined;
  }

  /** The preferred version of every API group (discovery). */
  async apiGroupVersions(): Promise<string[]> {
    const groups = await this.call("reading API discovery", () =>
      this.http.json<{
        groups?: { preferredVersion?: { groupVersion?: string }; versions?: { groupVersion?: string }[] }[];
      }>("GET", "/apis"),
    );
    return (groups.groups ?? [])
      .map((g) => g.preferredVersion?.groupVersion ?? g.versions?.[0]?.groupVersion ?? "")
      .filter(Boolean);
  }

  /** The resources of one API group version (discovery; asked once per client). */
  apiResources(groupVersion: string): Promise<DiscoveryResource[]> {
    let answer = this.discovered.get(groupVersion);
    if (!answer) {
      answer = this.call(`reading discovery for ${groupVersion}`, () =>
        this.http.json<{ resources?: DiscoveryResource[] }>("GET", groupVersionPath(groupVersion)),
      ).then((list) =>
        (list.resources ?? []).map((r) => ({ name: r.name, kind: r.kind, namespaced: r.namespaced })),
      );
      // A failed answer is not kept: the next call asks again.
      answer.catch(() => this.discovered.delete(groupVersion));
      this.discovered.set(groupVersion, answer);
    }
    return answer;
  }

  /** Pods in every namespace, one page (the core API's cross-namespace list). */
  async listPodsAllNamespaces<T extends Read = KubeObject>(options: {
    limit: number;
    continueToken?: string | undefined;
  }): Promise<ListResult<T>> {
    const list = await this.call("listing pods in all namespaces", () =>
      this.http.json<RawList<T>>("GET", "/api/v1/pods", {
        query: { limit: options.limit, continue: options.continueToken },
      }),
    );
    return { items: list.items ?? [], continueToken: list.metadata?.continue || undefined };
  }

  /**
   * Watches `path` (e.g. /api/v1/namespaces/ns/pods) until the signal aborts or the server ends the
   * stream; resolves with why it ended (undefined when the server closed it).
   */
  async watch<T>(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    options: { signal: AbortSignal; onEvent: (event: WatchEvent<T>) => void },
  ): Promise<unknown> {
    const { signal } = options;
    try {
      const res = await this.http.send("GET", path, {
        query: { ...query, watch: true },
        signal,
        stream: true,
      });
      if (res.status !== 200) {
        const err = new KubeHttpError(res.status, await res.text(), res.headers, "GET", path);
        return toAicrError(err, `watching ${path}`, this.server);
      }
      await readLines(res, (line) => {
        let event: WatchEvent<T>;
        try {
          event = JSON.parse(line) as WatchEvent<T>;
        } catch {
          return; // a torn line at a cut connection: the relist that follows covers it
        }
        options.onEvent(event);
      });
      return signal.aborted ? signal.reason : undefined;
    } catch (err) {
      return signal.aborted ? signal.reason : toAicrError(err, `watching ${path}`, this.server);
    }
  }

  /** Streams a container's log into `out`; resolves when the stream ends or the signal aborts. */
  async followLog(
    ref: { namespace: string; pod: string; container: string },
    options: { out: Writable; signal: AbortSignal; follow: boolean },
  ): Promise<void> {
    const doing = `reading the log of pod ${ref.namespace}/${ref.pod}`;
    const path = `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/pods/${encodeURIComponent(ref.pod)}/log`;
    const res = await this.call(doing, async () => {
      const r = await this.http.send("GET", path, {
        query: { container: ref.container, follow: options.follow },
        signal: options.signal,
        stream: options.follow,
      });
      if (r.status !== 200) throw new KubeHttpError(r.status, await r.text(), r.headers, "GET", path);
      return r;
    });
    try {
      const reader = res.body?.getReader();
      for (;;) {
        const chunk = await reader?.read();
        if (!chunk || chunk.done) break;
        if (!options.out.write(chunk.value)) await waitForDrain(options.out, options.signal);
      }
    } catch {
      // Aborted, or the connection dropped: what arrived was written; the caller's wait decides.
    }
    options.out.end();
  }

  /** Closes idle connections (in-flight requests finish). */
  close(): void {
    this.http.close();
  }
}

/** Calls `onLine` for every newline-terminated line of a streamed body (and a last unterminated one). */
async function readLines(res: Response, onLine: (line: string) => void): Promise<void> {
  const reader = res.body?.getReader();
  if (!reader) return;
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let nl = buffered.indexOf("\n");
    while (nl >= 0) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (line) onLine(line);
      nl = buffered.indexOf("\n");
    }
  }
  const rest = (buffered + decoder.decode()).trim();
  if (rest) onLine(rest);
}

function waitForDrain(out: Writable, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off("drain", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    out.once("drain", done);
    signal.addEventListener("abort", done, { once: true });
  });
}

export function refOf(object: KubernetesObject): ObjectRef {
  return {
    apiVersion: object.apiVersion ?? "v1",
    kind: object.kind ?? "Unknown",
    name: object.metadata?.name ?? "",
    namespace: object.metadata?.namespace,
  };
}

export function describe(ref: ObjectRef): string {
  return `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ""}${ref.name}`;
}
