/** test/support/until.ts: the suites' one wait. Bounds here are tiny only where expiry is the point. */
import { expect, test } from "bun:test";
import { rejection } from "./reject.ts";
import { type ChangeFeed, until, untilStore } from "./until.ts";

/** A change feed the test drives by hand. */
function feed(): ChangeFeed & { emit(): void; listeners(): number } {
  const listeners = new Set<() => void>();
  return {
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    emit: () => {
      for (const l of [...listeners]) l();
    },
    listeners: () => listeners.size,
  };
}

test("resolves with the first truthy value, checked at once", async () => {
  expect(await until(() => ({ found: 1 }), "at once")).toEqual({ found: 1 });
  let n = 0;
  expect(await until(() => ++n >= 3 && n, "the third check")).toBe(3);
});

test("an async condition is awaited, never overlapped by the next check", async () => {
  let running = 0;
  let most = 0;
  let calls = 0;
  const value = await until(async () => {
    running++;
    most = Math.max(most, running);
    await Bun.sleep(5);
    running--;
    return ++calls === 4 ? "done" : undefined;
  }, "the fourth answer");
  expect(value).toBe("done");
  expect(most).toBe(1);
});

test("a throwing condition is 'not yet'; its last error is in the expiry message", async () => {
  let n = 0;
  expect(
    await until(() => {
      if (++n < 3) throw new Error("not yet");
      return n;
    }, "recovering"),
  ).toBe(3);
  const e = await rejection(
    until(
      () => {
        throw new Error("still refused");
      },
      "the refusal to end",
      30,
    ),
    Error,
  );
  expect(e.message).toBe("timed out after 30 ms waiting for: the refusal to end\nlast error: still refused");
});

test("on expiry: what it waited for, the last value when it says something, a stack from the caller", async () => {
  const e = await rejection(
    until(() => 0, "a count above zero", 20),
    Error,
  );
  expect(e.message).toBe("timed out after 20 ms waiting for: a count above zero\nlast value: 0");
  const quiet = await rejection(
    until(() => false, "a flag", 20),
    Error,
  );
  expect(quiet.message).toBe("timed out after 20 ms waiting for: a flag");
  expect(quiet.stack ?? "").toContain("until.test.ts");
});

test("`what` may be a function, called only on expiry", async () => {
  let calls = 0;
  const left = ["Job/x"];
  const e = await rejection(
    until(
      () => left.length === 0,
      () => {
        calls++;
        return `no objects left; left: ${left.join(", ")}`;
      },
      { ms: 20 },
    ),
    Error,
  );
  expect(e.message).toBe("timed out after 20 ms waiting for: no objects left; left: Job/x");
  expect(calls).toBe(1);
});

test("accept: the answer it holds for is returned; the last refused answer is shown on expiry", async () => {
  let status = 403;
  const answer = await until(async () => ({ status: status++ === 404 ? 201 : status }), "the role accepted", {
    accept: (r) => r.status === 201,
  });
  expect(answer).toEqual({ status: 201 });
  const e = await rejection(
    until(async () => ({ status: 500 }), "a 200", { ms: 20, accept: (r) => r.status === 200 }),
    Error,
  );
  expect(e.message).toBe('timed out after 20 ms waiting for: a 200\nlast value: {"status":500}');
});

test("on: a state that holds only between two events is seen, and the listener is removed after", async () => {
  const f = feed();
  let state = "pending";
  const seen = until(() => state === "running", "running", { on: f, everyMs: 60_000 });
  state = "running";
  f.emit(); // checked inside the event, before the next change
  state = "done";
  expect(await seen).toBe(true);
  expect(f.listeners()).toBe(0);
});

test("untilStore re-checks on the store's changes; the listener is gone after expiry too", async () => {
  const store = feed();
  let n = 0;
  const reached = untilStore({ store }, () => n === 2 && "two", "n = 2");
  n = 1;
  store.emit();
  n = 2;
  store.emit();
  expect(await reached).toBe("two");
  const e = await rejection(
    untilStore({ store }, () => false, "never", 20),
    Error,
  );
  expect(e.message).toBe("timed out after 20 ms waiting for: never");
  expect(store.listeners()).toBe(0);
});
