/**
 * countCalls(object, "method"): counts the calls of one promise-returning method of an object, and
 * how many were in flight at once. A bound ("at most N at a time") or an absence ("nothing asked
 * after the cancel") is then read at the caller, exactly, instead of watching a server for a while.
 *
 *   const reviews = countCalls(client, "review");
 *   …
 *   expect(reviews.most).toBe(3);       // never more than three unanswered
 *   await reviews.quiet();               // every call answered, and what those answers set going has run
 *   expect(reviews.calls).toBe(1);
 */
export interface CallCount {
  /** Calls made so far. */
  readonly calls: number;
  /** Calls whose promise has not settled yet. */
  readonly inFlight: number;
  /** The most calls in flight at any one time. */
  readonly most: number;
  /**
   * Resolves once every call made so far has settled and every continuation their settling queued
   * (promise reactions, then one turn of the event loop) has run: a call those continuations would
   * make has been made by then.
   */
  quiet(): Promise<void>;
  /** The method as it was. */
  restore(): void;
}

export function countCalls<T extends object, K extends keyof T>(target: T, method: K): CallCount {
  const original = target[method];
  if (typeof original !== "function") throw new Error(`${String(method)} is not a method`);
  const own = Object.hasOwn(target, method);
  const made: Promise<unknown>[] = [];
  const state = { calls: 0, inFlight: 0, most: 0 };
  const settle = () => {
    state.inFlight--;
  };
  const counted = function (this: unknown, ...args: unknown[]) {
    state.calls++;
    state.inFlight++;
    state.most = Math.max(state.most, state.inFlight);
    const result = Promise.resolve(original.apply(this, args));
    // Registered before the caller's own reaction: it sees the call answered first.
    result.then(settle, settle);
    made.push(result);
    return result;
  };
  Object.defineProperty(target, method, { value: counted, configurable: true, writable: true });
  return {
    get calls() {
      return state.calls;
    },
    get inFlight() {
      return state.inFlight;
    },
    get most() {
      return state.most;
    },
    async quiet() {
      await Promise.allSettled(made);
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
    restore() {
      if (own) Object.defineProperty(target, method, { value: original, configurable: true, writable: true });
      else delete target[method];
    },
  };
}
