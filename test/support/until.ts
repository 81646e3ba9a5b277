/**
 * The one wait of the test suites: `until(condition, what, ms)` re-checks `condition` until it returns
 * a truthy value and resolves with that value. `condition` may be synchronous (a store read, a counter)
 * or async (an HTTP request, a SubjectAccessReview); an async check is never overlapped by the next.
 * A condition that throws counts as "not yet" (its error is kept for the message).
 *
 *   await until(() => fault.fired > 0, "the held request", 60_000);
 *   const res = await until(() => client.get(path), "the token refused", { accept: (r) => r.status === 401 });
 *   await untilStore(cluster, () => runObjects(cluster, ns).length === 0, "no run objects in ns");
 *
 * On expiry it rejects with `timed out after <ms> ms waiting for: <what>`, plus the last value or error
 * the condition gave. `what` may be a function: it is called only then, to describe what stands at
 * that moment (e.g. the objects still left). The bound only stops a stuck test: every wait ends on
 * its condition, the defaults are generous for a loaded 2-core machine, and nothing is timed — keep
 * it below the test's own timeout, so the failure names the wait rather than the test.
 *
 * `untilStore` also re-checks on every change a cluster's store applies (the fake's commits, the real
 * backend's mirror events), synchronously inside the change: a state that holds only between two
 * changes is seen, as with an informer.
 */

/** Default bound of a wait (below bun's 60 s test timeout in bunfig.toml). */
export const UNTIL_MS = 30_000;
/** Pause between two checks when no event wakes the wait earlier. */
const EVERY_MS = 20;

export type Truthy<T> = Exclude<T, false | 0 | "" | null | undefined>;

/** Anything with a change feed: `subscribe(listener)` → unsubscribe (a cluster's store, a request log). */
export interface ChangeFeed {
  subscribe(listener: () => void): () => void;
}

export interface UntilOptions<T = unknown> {
  /** The bound (default UNTIL_MS). */
  ms?: number;
  /** Re-check on every event of this feed as well as every `everyMs`. */
  on?: ChangeFeed;
  /** Pause between checks (an async condition's next check starts this long after the last settled). */
  everyMs?: number;
  /**
   * When a value ends the wait (default: when it is truthy). With it, `condition` is an attempt whose
   * every answer is kept — the last one is shown on expiry — and the accepted answer is returned.
   */
  accept?: (value: T) => boolean;
}

const show = (value: unknown): string => {
  let text: string;
  if (value instanceof Error) text = value.message;
  else {
    try {
      text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
    } catch {
      text = String(value);
    }
  }
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
};

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  typeof (v as { then?: unknown } | null)?.then === "function";

/** Resolves with the first truthy (or accepted) value of `condition`; rejects after the bound saying what it waited for. */
export function until<T>(
  condition: () => T | PromiseLike<T>,
  what: string | (() => string),
  options: number | (UntilOptions<Awaited<T>> & { accept: (value: Awaited<T>) => boolean }),
): Promise<Awaited<T>>;
export function until<T>(
  condition: () => T | PromiseLike<T>,
  what: string | (() => string),
  options?: number | (UntilOptions<Awaited<T>> & { accept?: undefined }),
): Promise<Truthy<Awaited<T>>>;
export function until<T>(
  condition: () => T | PromiseLike<T>,
  what: string | (() => string),
  options: number | UntilOptions<Awaited<T>> = {},
): Promise<Awaited<T>> {
  const {
    ms = UNTIL_MS,
    on,
    everyMs: every = EVERY_MS,
    accept = Boolean,
  } = typeof options === "number" ? { ms: options } : options;
  // Made here, so its stack shows the caller rather than a timer.
  const timeout = new Error(`timed out waiting for: ${typeof what === "string" ? what : "…"}`);
  return new Promise((resolve, reject) => {
    let settled = false;
    let inFlight = false;
    let last: { value: unknown } | { error: unknown } | undefined;
    let poll: ReturnType<typeof setTimeout> | undefined;
    let unsubscribe: (() => void) | undefined;
    const finish = () => {
      settled = true;
      clearTimeout(poll);
      clearTimeout(deadline);
      unsubscribe?.();
    };
    const take = (value: Awaited<T>) => {
      if (settled) return;
      let done: boolean;
      try {
        done = accept(value);
      } catch (e) {
        fail(e);
        return;
      }
      if (done) {
        finish();
        resolve(value);
      } else last = { value };
    };
    const fail = (error: unknown) => {
      if (!settled) last = { error };
    };
    /** One check; returns a promise only while an async condition is pending. */
    const check = (): PromiseLike<void> | undefined => {
      if (settled || inFlight) return undefined;
      let r: T | PromiseLike<T>;
      try {
        r = condition();
      } catch (e) {
        fail(e);
        return undefined;
      }
      if (!isThenable(r)) {
        take(r as Awaited<T>);
        return undefined;
      }
      inFlight = true;
      return Promise.resolve(r)
        .then(take, fail)
        .finally(() => {
          inFlight = false;
        });
    };
    const tick = () => {
      const pending = check();
      if (settled) return;
      const next = () => {
        if (!settled) poll = setTimeout(tick, every);
      };
      if (pending) void pending.then(next);
      else next();
    };
    const deadline = setTimeout(() => {
      if (settled) return;
      finish();
      let described: string;
      try {
        described = typeof what === "string" ? what : what();
      } catch (e) {
        described = `(describing the wait failed: ${show(e)})`;
      }
      timeout.message = `timed out after ${ms} ms waiting for: ${described}`;
      if (last && "error" in last) timeout.message += `\nlast error: ${show(last.error)}`;
      else if (last && last.value !== undefined && last.value !== false && last.value !== null)
        timeout.message += `\nlast value: ${show(last.value)}`;
      reject(timeout);
    }, ms);
    if (on) unsubscribe = on.subscribe(() => void check());
    tick();
  });
}

/**
 * `until` re-checked on every change the cluster's store applies too: the fake's store, or the real
 * backend's informer-style mirror (what the apiserver did shows up there a moment later).
 */
export function untilStore<T>(
  cluster: { store: ChangeFeed },
  condition: () => T,
  what: string | (() => string),
  ms: number = UNTIL_MS,
): Promise<Truthy<T>> {
  return until(condition, what, { ms, on: cluster.store }) as Promise<Truthy<T>>;
}
