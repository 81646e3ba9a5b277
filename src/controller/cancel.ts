import type { KubeClient } from "../kube/client.ts";

/**
 * Settles with `p`, or rejects with the signal's reason as soon as it aborts: a wait whose request is
 * stuck on a slow apiserver must not keep a cancelled (or failed-fast) run waiting.
 */
export function unlessAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    p.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      p.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

/**
 * The same client, except that no create starts once `signal` has aborted: a cancelled run makes no
 * new objects (its in-flight creates still settle, so cleanup sees every one). Deletes are untouched.
 */
export function noCreatesAfter(client: KubeClient, signal: AbortSignal): KubeClient {
  return new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== "function") return value;
      if (prop !== "create") return value.bind(target);
      return (...args: unknown[]) => {
        if (signal.aborted) return Promise.reject(signal.reason);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
