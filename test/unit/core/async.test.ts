import { afterEach, describe, expect, spyOn, test } from "bun:test";
import {
  delay,
  mapLimit,
  retry,
  runWithTimeout,
  unlessAborted,
  withTimeout,
} from "../../../src/core/async.ts";

/** A promise settled from outside. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Whether `p` has settled, after letting every queued callback run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

/**
 * The timers of one duration (a value no other code uses): which were started and which cleared. Only
 * that duration is tracked, so bun's own timers do not count.
 */
function timersOf(ms: number) {
  const started: unknown[] = [];
  const cleared: unknown[] = [];
  const realSet = globalThis.setTimeout;
  const realClear = globalThis.clearTimeout;
  const set = spyOn(globalThis, "setTimeout").mockImplementation(((
    fn: () => void,
    after?: number,
    ...args: unknown[]
  ) => {
    const timer = realSet(fn, after, ...args);
    if (after === ms) started.push(timer);
    return timer;
  }) as typeof setTimeout);
  const clear = spyOn(globalThis, "clearTimeout").mockImplementation(((timer: unknown) => {
    if (started.includes(timer)) cleared.push(timer);
    return realClear(timer as Parameters<typeof clearTimeout>[0]);
  }) as typeof clearTimeout);
  restores.push(() => {
    set.mockRestore();
    clear.mockRestore();
  });
  return { started, cleared };
}

const restores: (() => void)[] = [];
afterEach(() => {
  for (const restore of restores.splice(0)) restore();
});

/** A signal whose listeners are counted: a settled wait leaves none behind. */
function countedSignal() {
  const controller = new AbortController();
  let listeners = 0;
  const add = controller.signal.addEventListener.bind(controller.signal);
  const remove = controller.signal.removeEventListener.bind(controller.signal);
  controller.signal.addEventListener = ((type: string, fn: () => void, o?: AddEventListenerOptions) => {
    if (type === "abort") listeners++;
    add(type, fn, o);
  }) as typeof controller.signal.addEventListener;
  controller.signal.removeEventListener = ((type: string, fn: () => void) => {
    if (type === "abort") listeners--;
    remove(type, fn);
  }) as typeof controller.signal.removeEventListener;
  return { controller, signal: controller.signal, listeners: () => listeners };
}

const LONG = 60_000;

describe("delay", () => {
  test("resolves after the pause and leaves no abort listener behind", async () => {
    const { signal, listeners } = countedSignal();
    await delay(1, signal);
    expect(listeners()).toBe(0);
  });

  test("rejects with the signal's reason as soon as it aborts, and clears its timer", async () => {
    const timers = timersOf(LONG + 1);
    const controller = new AbortController();
    const waiting = delay(LONG + 1, controller.signal);
    controller.abort(new Error("cancelled"));
    await expect(waiting).rejects.toThrow("cancelled");
    expect(timers.started).toHaveLength(1);
    expect(timers.cleared).toEqual(timers.started);
  });

  test("an already aborted signal rejects at once, with no timer started", async () => {
    const timers = timersOf(LONG + 2);
    await expect(delay(LONG + 2, AbortSignal.abort(new Error("gone")))).rejects.toThrow("gone");
    expect(timers.started).toEqual([]);
  });
});

describe("unlessAborted", () => {
  test("settles with the promise, and removes its listener either way", async () => {
    const { signal, listeners } = countedSignal();
    expect(await unlessAborted(Promise.resolve(7), signal)).toBe(7);
    await expect(unlessAborted(Promise.reject(new Error("no")), signal)).rejects.toThrow("no");
    expect(listeners()).toBe(0);
  });

  test("rejects with the reason when the signal aborts first; the late rejection is observed", async () => {
    const controller = new AbortController();
    const slow = deferred<number>();
    const waiting = unlessAborted(slow.promise, controller.signal);
    controller.abort(new Error("run cancelled"));
    await expect(waiting).rejects.toThrow("run cancelled");
    slow.reject(new Error("late")); // would fail the test run if it were unhandled
    await settled(slow.promise);
  });

  test("an already aborted signal rejects at once", async () => {
    const never = new Promise<number>(() => {});
    await expect(unlessAborted(never, AbortSignal.abort(new Error("before")))).rejects.toThrow("before");
  });
});

describe("withTimeout", () => {
  test("an answer in time: the value, the timer cleared, onTimeout never called", async () => {
    const timers = timersOf(LONG + 3);
    let made = 0;
    const value = await withTimeout(Promise.resolve("ok"), LONG + 3, () => {
      made++;
      return new Error("late");
    });
    expect(value).toBe("ok");
    expect(made).toBe(0);
    expect(timers.cleared).toEqual(timers.started);
    expect(timers.started).toHaveLength(1);
  });

  test("no answer in time: rejects with onTimeout's error", async () => {
    const never = new Promise<never>(() => {});
    await expect(withTimeout(never, 1, () => new Error("no answer within 1 ms"))).rejects.toThrow(
      "no answer within 1 ms",
    );
  });

  test("a failure in time is the promise's own", async () => {
    await expect(
      withTimeout(Promise.reject(new Error("refused")), LONG, () => new Error("x")),
    ).rejects.toThrow("refused");
  });
});

describe("runWithTimeout", () => {
  test("work that ignores its signal still ends at the timeout; its signal carries the same reason", async () => {
    let seen: AbortSignal | undefined;
    const run = runWithTimeout(
      (signal) => {
        seen = signal;
        return new Promise<never>(() => {});
      },
      { ms: 1, onTimeout: () => new Error("timed out after 1 ms") },
    );
    await expect(run).rejects.toThrow("timed out after 1 ms");
    expect(seen?.aborted).toBe(true);
    expect((seen?.reason as Error | undefined)?.message).toBe("timed out after 1 ms");
  });

  test("the caller's cancel aborts the work with the caller's reason, and the timer is cleared", async () => {
    const timers = timersOf(LONG + 4);
    const { controller, signal, listeners } = countedSignal();
    let seen: AbortSignal | undefined;
    const run = runWithTimeout(
      (s) => {
        seen = s;
        return new Promise<never>(() => {});
      },
      { ms: LONG + 4, onTimeout: () => new Error("timeout"), signal },
    );
    controller.abort(new Error("interrupted"));
    await expect(run).rejects.toThrow("interrupted");
    expect((seen?.reason as Error | undefined)?.message).toBe("interrupted");
    expect(timers.started).toHaveLength(1);
    expect(timers.cleared).toEqual(timers.started);
    expect(listeners()).toBe(0);
  });

  test("work done in time: its value; the timer cleared and the caller's listener removed", async () => {
    const timers = timersOf(LONG + 5);
    const { signal, listeners } = countedSignal();
    const value = await runWithTimeout(async (s) => (s.aborted ? "aborted" : "done"), {
      ms: LONG + 5,
      onTimeout: () => new Error("timeout"),
      signal,
    });
    expect(value).toBe("done");
    expect(timers.cleared).toEqual(timers.started);
    expect(listeners()).toBe(0);
  });

  test("under an already aborted signal the work is not started", async () => {
    let started = false;
    const run = runWithTimeout(
      async () => {
        started = true;
      },
      { ms: LONG, onTimeout: () => new Error("timeout"), signal: AbortSignal.abort(new Error("cancelled")) },
    );
    await expect(run).rejects.toThrow("cancelled");
    expect(started).toBe(false);
  });
});

class Transient extends Error {}

describe("retry", () => {
  test("retries retryable failures with the given pauses, then returns the value", async () => {
    const told: [number, string, number][] = [];
    const value = await retry(
      async (attempt) => {
        if (attempt < 3) throw new Transient(`try ${attempt}`);
        return attempt;
      },
      {
        attempts: 4,
        retryable: (err) => err instanceof Transient,
        backoffMs: (attempt) => attempt - 1, // 0 ms, then 1 ms
        onRetry: (attempt, err, pause) => told.push([attempt, (err as Error).message, pause]),
      },
    );
    expect(value).toBe(3);
    expect(told).toEqual([
      [1, "try 1", 0],
      [2, "try 2", 1],
    ]);
  });

  test("the last attempt's failure is thrown as is once the attempts are spent", async () => {
    let calls = 0;
    const run = retry(
      async (attempt) => {
        calls++;
        throw new Transient(`try ${attempt}`);
      },
      { attempts: 3, retryable: () => true, backoffMs: () => 0 },
    );
    await expect(run).rejects.toThrow("try 3");
    expect(calls).toBe(3);
  });

  test("a failure that is not retryable is thrown at once", async () => {
    let calls = 0;
    const refused = new Error("forbidden");
    const run = retry(
      async () => {
        calls++;
        throw refused;
      },
      { attempts: 5, retryable: (err) => err instanceof Transient, backoffMs: () => 0 },
    );
    expect(await run.catch((e: unknown) => e)).toBe(refused);
    expect(calls).toBe(1);
  });

  test("cancelled during a pause: rejects with the reason at once, no further attempt, timer cleared", async () => {
    const timers = timersOf(LONG + 6);
    const controller = new AbortController();
    let calls = 0;
    const run = retry(
      async () => {
        calls++;
        throw new Transient("503");
      },
      {
        attempts: 4,
        retryable: () => true,
        backoffMs: () => LONG + 6,
        signal: controller.signal,
        // Aborts once the pause has begun.
        onRetry: () => queueMicrotask(() => controller.abort(new Error("cancelled by SIGINT"))),
      },
    );
    await expect(run).rejects.toThrow("cancelled by SIGINT");
    expect(calls).toBe(1);
    expect(timers.started).toHaveLength(1);
    expect(timers.cleared).toEqual(timers.started);
  });

  test("cancelled during an attempt: a retryable failure is not retried (nor told), the reason is thrown", async () => {
    const controller = new AbortController();
    let told = 0;
    const run = retry(
      async () => {
        controller.abort(new Error("cancelled"));
        throw new Transient("503");
      },
      {
        attempts: 4,
        retryable: () => true,
        backoffMs: () => 0,
        signal: controller.signal,
        onRetry: () => told++,
      },
    );
    await expect(run).rejects.toThrow("cancelled");
    expect(told).toBe(0);
  });

  test("cancelled during an attempt that fails for good: that failure is thrown as is", async () => {
    const controller = new AbortController();
    const refused = new Error("forbidden");
    const run = retry(
      async () => {
        controller.abort(new Error("cancelled"));
        throw refused;
      },
      { attempts: 4, retryable: () => false, backoffMs: () => 0, signal: controller.signal },
    );
    expect(await run.catch((e: unknown) => e)).toBe(refused);
  });

  test("under an already aborted signal no attempt is made", async () => {
    let calls = 0;
    const run = retry(
      async () => {
        calls++;
      },
      {
        attempts: 3,
        retryable: () => true,
        backoffMs: () => 0,
        signal: AbortSignal.abort(new Error("gone")),
      },
    );
    await expect(run).rejects.toThrow("gone");
    expect(calls).toBe(0);
  });
});

describe("mapLimit", () => {
  test("results in input order, whatever order the calls finish in", async () => {
    const gates = [deferred(), deferred(), deferred()];
    const run = mapLimit([10, 20, 30], 3, async (n, i) => {
      await gates[i]?.promise;
      return n + i;
    });
    for (const i of [2, 0, 1]) gates[i]?.resolve();
    expect(await run).toEqual([10, 21, 32]);
  });

  test("never more than `limit` calls in flight, and exactly that many while there is work", async () => {
    let inFlight = 0;
    let most = 0;
    const items = Array.from({ length: 10 }, (_, i) => i);
    const out = await mapLimit(items, 3, async (n) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setImmediate(r));
      inFlight--;
      return n * 2;
    });
    expect(most).toBe(3);
    expect(out).toEqual(items.map((n) => n * 2));
  });

  test("after the first failure nothing new starts; the failure comes once the calls in flight end", async () => {
    const started: number[] = [];
    const second = deferred<string>();
    const refused = new Error("item 0 refused");
    const run = mapLimit(["a", "b", "c", "d", "e"], 2, async (item, i) => {
      started.push(i);
      if (i === 0) throw refused;
      return i === 1 ? second.promise : item;
    });
    expect(await settled(run)).toBe(false); // item 1 is still in flight
    second.resolve("b");
    expect(await run.catch((e: unknown) => e)).toBe(refused);
    expect(started).toEqual([0, 1]);
  });

  test("a cancel starts nothing new; the reason is the failure", async () => {
    const controller = new AbortController();
    const started: number[] = [];
    const run = mapLimit(
      [0, 1, 2, 3],
      1,
      async (n) => {
        started.push(n);
        if (n === 1) controller.abort(new Error("cancelled"));
        return n;
      },
      controller.signal,
    );
    await expect(run).rejects.toThrow("cancelled");
    expect(started).toEqual([0, 1]);
  });

  test("no items: no calls; a limit below one still makes progress", async () => {
    expect(await mapLimit([], 4, async () => 1)).toEqual([]);
    expect(await mapLimit([1, 2], 0, async (n) => n + 1)).toEqual([2, 3]);
  });
});
