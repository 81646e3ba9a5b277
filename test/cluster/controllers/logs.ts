/**
 * Container logs kept by the kubelet, with the kubelet's `timestamps` format (RFC 3339, 9 fraction digits),
 * `tailLines`, and `follow`. The HTTP layer finds them with `kubeletLogs(store)`.
 */
import { type KObject, resource, type Store } from "../store.ts";

interface Line {
  ts: string;
  text: string;
  complete: boolean;
}

// Simplification: previous, sinceSeconds, sinceTime and limitBytes are not supported.
export interface LogOptions {
  timestamps?: boolean;
  tailLines?: number;
}

export function logTimestamp(d: Date): string {
  return `${d.toISOString().slice(0, 23)}000000Z`;
}

export class ContainerLog {
  private readonly lines: Line[] = [];
  private readonly listeners = new Set<(line: Line, fresh: boolean, text: string) => void>();
  private readonly doneListeners = new Set<() => void>();
  private finishedFlag = false;

  constructor(private readonly now: () => Date = () => new Date()) {}

  get finished(): boolean {
    return this.finishedFlag;
  }

  write(chunk: string): void {
    if (chunk === "" || this.finishedFlag) return;
    const ts = logTimestamp(this.now());
    const segments = chunk.split("\n");
    segments.forEach((seg, i) => {
      const last = i === segments.length - 1;
      if (last && seg === "") return;
      const tail = this.lines.at(-1);
      const fresh = !(i === 0 && tail && !tail.complete);
      const line = fresh ? { ts, text: "", complete: false } : tail!;
      if (fresh) this.lines.push(line);
      line.text += seg;
      line.complete = !last;
      for (const l of this.listeners) l(line, fresh, seg + (last ? "" : "\n"));
    });
  }

  finish(): void {
    this.finishedFlag = true;
    for (const l of this.doneListeners) l();
    this.doneListeners.clear();
  }

  /** The last bytes of the log, for terminationMessagePolicy FallbackToLogsOnError (80 lines, 2048 bytes). */
  tailForTerminationMessage(): string {
    const text = this.text({ tailLines: 80 });
    const bytes = new TextEncoder().encode(text);
    return bytes.length <= 2048 ? text : new TextDecoder().decode(bytes.slice(bytes.length - 2048));
  }

  text(opts: LogOptions = {}): string {
    const lines =
      opts.tailLines !== undefined
        ? this.lines.slice(Math.max(0, this.lines.length - opts.tailLines))
        : this.lines;
    return lines.map((l) => (opts.timestamps ? `${l.ts} ` : "") + l.text + (l.complete ? "\n" : "")).join("");
  }

  /** Sends what is there, then every new write, until the container finishes or the signal aborts. */
  follow(onChunk: (text: string) => void, signal: AbortSignal, opts: LogOptions = {}): Promise<void> {
    const initial = this.text(opts);
    if (initial) onChunk(initial);
    if (this.finishedFlag || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const listener = (line: Line, fresh: boolean, text: string) => {
        onChunk((fresh && opts.timestamps ? `${line.ts} ` : "") + text);
      };
      const done = () => {
        this.listeners.delete(listener);
        this.doneListeners.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.listeners.add(listener);
      this.doneListeners.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }
}

export type LogLookup = { log: ContainerLog } | { error: { code: number; reason: string; message: string } };

const badRequest = (message: string): LogLookup => ({ error: { code: 400, reason: "BadRequest", message } });

export class KubeletLogs {
  private readonly byPod = new Map<string, Map<string, ContainerLog>>();

  constructor(private readonly store: Store) {}

  open(podUid: string, container: string, now: () => Date): ContainerLog {
    const m = this.byPod.get(podUid) ?? new Map<string, ContainerLog>();
    this.byPod.set(podUid, m);
    const log = new ContainerLog(now);
    m.set(container, log);
    return log;
  }

  drop(podUid: string): void {
    this.byPod.delete(podUid);
  }

  /** For HTTP tests without a kubelet: writes to a container's log as if the container printed it. */
  append(namespace: string, podName: string, container: string, text: string): void {
    const uid = this.store.get(resource("pods"), namespace, podName).metadata.uid!;
    const log = this.byPod.get(uid)?.get(container) ?? this.open(uid, container, this.store.now);
    log.write(text);
  }

  /** For HTTP tests without a kubelet: the container exits (follow streams end). */
  finish(namespace: string, podName: string, container: string): void {
    const uid = this.store.get(resource("pods"), namespace, podName).metadata.uid!;
    this.byPod.get(uid)?.get(container)?.finish();
  }

  /** What GET pods/log answers: the container's log, or the apiserver's/kubelet's error. */
  get(namespace: string, podName: string, container?: string): LogLookup {
    const pod: KObject | undefined = this.store.find(resource("pods"), namespace, podName);
    if (!pod) return { error: { code: 404, reason: "NotFound", message: `pods "${podName}" not found` } };
    const main: string[] = (pod.spec?.containers ?? []).map((c: { name: string }) => c.name);
    const all = [...main, ...(pod.spec?.initContainers ?? []).map((c: { name: string }) => c.name)];
    let name = container;
    if (!name) {
      if (main.length !== 1) {
        return badRequest(
          `a container name must be specified for pod ${podName}, choose one of: [${main.join(" ")}]`,
        );
      }
      name = main[0]!;
    }
    if (!all.includes(name)) return badRequest(`container ${name} is not valid for pod ${podName}`);
    const log = this.byPod.get(pod.metadata.uid!)?.get(name);
    if (log) return { log };
    if (!pod.spec?.nodeName) {
      const empty = new ContainerLog();
      empty.finish();
      return { log: empty };
    }
    const statuses = [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])];
    const reason: string =
      statuses.find((s) => s.name === name)?.state?.waiting?.reason ?? "ContainerCreating";
    const why =
      reason === "ErrImagePull" || reason === "ImagePullBackOff"
        ? "trying and failing to pull image"
        : reason;
    return badRequest(`container "${name}" in pod "${podName}" is waiting to start: ${why}`);
  }
}

const registries = new WeakMap<Store, KubeletLogs>();

/** The log registry of the kubelet running against this store (created on first use). */
export function kubeletLogs(store: Store): KubeletLogs {
  let r = registries.get(store);
  if (!r) {
    r = new KubeletLogs(store);
    registries.set(store, r);
  }
  return r;
}
