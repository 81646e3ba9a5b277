import type { Writable } from "node:stream";
import {
  ApisApi,
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubernetesObject,
  KubernetesObjectApi,
  Log,
  PatchStrategy,
  VersionApi,
  Watch,
} from "@kubernetes/client-node";
import type { KubeConfigSource, LoadedKubeConfig } from "./config.ts";
import { loadKubeConfig } from "./config.ts";
import { toAicrError } from "./errors.ts";
import { knownResourceLists } from "./known-kinds.ts";

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

/**
 * The one seam between aicr and @kubernetes/client-node. Every call names what it was doing, and
 * every failure leaves as an AicrError (kube/errors.ts) with the apiserver's reason kept.
 */
export class KubeClient {
  readonly server: string;
  readonly origin: string;
  private readonly loaded: LoadedKubeConfig;
  private readonly objects: KubernetesObjectApi;

  private constructor(loaded: LoadedKubeConfig) {
    this.loaded = loaded;
    this.server = loaded.server;
    this.origin = loaded.origin;
    this.objects = KubernetesObjectApi.makeApiClient(loaded.kc);
    // Pre-seed client-node's discovery cache: no discovery round trip for the kinds aicr uses.
    Object.assign(
      (this.objects as unknown as { apiVersionResourceCache: object }).apiVersionResourceCache,
      knownResourceLists(),
    );
  }

  static connect(source: KubeConfigSource): KubeClient {
    return new KubeClient(loadKubeConfig(source));
  }

  private async call<T>(doing: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toAicrError(err, doing, this.server);
    }
  }

  serverVersion(): Promise<{ gitVersion: string; platform?: string; goVersion?: string }> {
    return this.call("reading the server version", () => this.loaded.kc.makeApiClient(VersionApi).getCode());
  }

  get<T extends Read = KubeObject>(ref: ObjectRef): Promise<T> {
    return this.call(
      `reading ${describe(ref)}`,
      () => this.objects.read(header(ref)) as unknown as Promise<T>,
    );
  }

  list<T extends Read = KubeObject>(
    apiVersion: string,
    kind: string,
    options: ListOptions = {},
  ): Promise<ListResult<T>> {
    const where = options.namespace ? ` in namespace ${options.namespace}` : "";
    return this.call(`listing ${kind}${where}`, async () => {
      const list = await this.objects.list(
        apiVersion,
        kind,
        options.namespace,
        undefined,
        undefined,
        undefined,
        options.fieldSelector,
        options.labelSelector,
        options.limit,
        options.continueToken,
      );
      return {
        items: list.items as unknown as T[],
        continueToken: list.metadata?._continue || undefined,
        resourceVersion: list.metadata?.resourceVersion,
      };
    });
  }

  create<T extends KubernetesObject>(object: T, options: { dryRun?: boolean } = {}): Promise<T> {
    return this.call(`creating ${describe(refOf(object))}`, () =>
      this.objects.create(object, undefined, options.dryRun ? "All" : undefined, "aicr"),
    ) as Promise<T>;
  }

  /** Server-side apply: the apiserver merges by field ownership; `force` takes fields from other managers. */
  apply<T extends KubernetesObject>(
    object: T,
    options: { fieldManager: string; force: boolean },
  ): Promise<T> {
    return this.call(`applying ${describe(refOf(object))}`, () =>
      this.objects.patch(
        object,
        undefined,
        undefined,
        options.fieldManager,
        options.force,
        PatchStrategy.ServerSideApply,
      ),
    ) as Promise<T>;
  }

  mergePatch<T extends Read = KubeObject>(ref: ObjectRef, patch: Record<string, unknown>): Promise<T> {
    const body = {
      ...patch,
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      metadata: { ...(patch.metadata ?? {}), name: ref.name, namespace: ref.namespace },
    };
    return this.call(`patching ${describe(ref)}`, () =>
      this.objects.patch(
        body as KubeObject,
        undefined,
        undefined,
        "aicr",
        undefined,
        PatchStrategy.MergePatch,
      ),
    ) as unknown as Promise<T>;
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
      ...(preconditions ? { preconditions } : {}),
      ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}),
    };
    await this.call(`deleting ${describe(ref)}`, () =>
      this.objects.delete(
        header(ref),
        undefined,
        undefined,
        undefined,
        undefined,
        options.propagationPolicy,
        body,
      ),
    );
  }

  /** SelfSubjectAccessReview, or SubjectAccessReview when a subject is given. Persists nothing. */
  async review(check: AccessCheck, subject?: { user: string; groups: string[] }): Promise<AccessAnswer> {
    const api = this.loaded.kc.makeApiClient(AuthorizationV1Api);
    const resourceAttributes = { ...check, group: check.group };
    const status = await this.call(
      `checking whether ${subject?.user ?? "the caller"} may ${check.verb} ${check.resource}`,
      async () =>
        subject
          ? (
              await api.createSubjectAccessReview({
                body: { spec: { resourceAttributes, user: subject.user, groups: subject.groups } },
              })
            ).status
          : (await api.createSelfSubjectAccessReview({ body: { spec: { resourceAttributes } } })).status,
    );
    return { allowed: Boolean(status?.allowed), reason: status?.reason };
  }

  /** The resources of one API group version (discovery). */
  async apiGroupVersions(): Promise<string[]> {
    const groups = await this.call("reading API discovery", () =>
      this.loaded.kc.makeApiClient(ApisApi).getAPIVersions(),
    );
    return groups.groups
      .map((g) => g.preferredVersion?.groupVersion ?? g.versions[0]?.groupVersion ?? "")
      .filter(Boolean);
  }

  async apiResources(groupVersion: string): Promise<{ name: string; kind: string; namespaced: boolean }[]> {
    const [group = "", version = ""] = groupVersion.split("/");
    const list = await this.call(`reading discovery for ${groupVersion}`, () =>
      this.loaded.kc.makeApiClient(CustomObjectsApi).getAPIResources({ group, version }),
    );
    return list.resources.map((r) => ({ name: r.name, kind: r.kind, namespaced: r.namespaced }));
  }

  /** Pods in every namespace, one page (the core API's cross-namespace list). */
  async listPodsAllNamespaces<T extends Read = KubeObject>(options: {
    limit: number;
    continueToken?: string | undefined;
  }): Promise<ListResult<T>> {
    const api = this.loaded.kc.makeApiClient(CoreV1Api);
    const list = await this.call("listing pods in all namespaces", () =>
      api.listPodForAllNamespaces({ limit: options.limit, _continue: options.continueToken }),
    );
    return {
      items: list.items as unknown as T[],
      continueToken: list.metadata?._continue || undefined,
    };
  }

  /**
   * Watches `path` (e.g. /api/v1/namespaces/ns/pods) until the signal aborts or the server ends the
   * stream; resolves with why it ended (undefined when the server closed it).
   */
  watch<T>(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    options: { signal: AbortSignal; onEvent: (event: WatchEvent<T>) => void },
  ): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const watcher = new Watch(this.loaded.kc);
      let controller: AbortController | undefined;
      const onAbort = () => controller?.abort();
      watcher
        .watch(
          path,
          query,
          (type, object) => options.onEvent({ type: type as WatchEvent<T>["type"], object: object as T }),
          (err) => {
            options.signal.removeEventListener("abort", onAbort);
            resolve(options.signal.aborted ? options.signal.reason : (err ?? undefined));
          },
        )
        .then((c) => {
          controller = c;
          if (options.signal.aborted) c.abort();
          else options.signal.addEventListener("abort", onAbort, { once: true });
        })
        .catch((err) => reject(toAicrError(err, `watching ${path}`, this.server)));
    });
  }

  /** Streams a container's log into `out`; resolves when the stream ends or the signal aborts. */
  async followLog(
    ref: { namespace: string; pod: string; container: string },
    options: { out: Writable; signal: AbortSignal; follow: boolean },
  ): Promise<void> {
    // Under Bun an aborted log stream emits an unhandled 'error' on the piped response; swallow it here.
    options.out.on("pipe", (src) => src.on("error", () => {}));
    const done = new Promise<void>((resolve) => {
      options.out.once("finish", () => resolve());
      options.out.once("close", () => resolve());
      options.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    const controller = await this.call(`reading the log of pod ${ref.namespace}/${ref.pod}`, () =>
      new Log(this.loaded.kc).log(ref.namespace, ref.pod, ref.container, options.out, {
        follow: options.follow,
      }),
    );
    options.signal.addEventListener("abort", () => controller.abort(), { once: true });
    await done;
  }
}

function header(ref: ObjectRef): {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
} {
  return {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
  };
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
