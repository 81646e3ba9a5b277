import { describe, expect, test } from "bun:test";
import { FakeClock } from "./clock.ts";
import { backoffDelay, WorkQueue } from "./queue.ts";

describe("FakeClock", () => {
  test("fires due timers in time order, then sequence order; cancel works", () => {
    const c = new FakeClock(0);
    const fired: string[] = [];
    c.setTimeout(() => fired.push("b@20"), 20);
    c.setTimeout(() => fired.push("a@10"), 10);
    c.setTimeout(() => fired.push("c@10"), 10);
    const cancel = c.setTimeout(() => fired.push("never"), 15);
    cancel();
    c.advance(15);
    expect(fired).toEqual(["a@10", "c@10"]);
    expect(c.now().getTime()).toBe(15);
    c.advance(5);
    expect(fired).toEqual(["a@10", "c@10", "b@20"]);
    expect(c.pending).toBe(0);
  });
});

describe("WorkQueue", () => {
  test("backoff doubles up to the cap", () => {
    const b = { initialMs: 5, maxMs: 30 };
    expect([0, 1, 2, 3].map((n) => backoffDelay(b, n))).toEqual([5, 10, 20, 30]);
  });

  test("deduplicates, retries failures with backoff, honours a requested requeue", async () => {
    const clock = new FakeClock(0);
    const runs: string[] = [];
    const errors: string[] = [];
    let failOnce = true;
    const q: WorkQueue = new WorkQueue(
      clock,
      (key) => {
        runs.push(key);
        if (key === "a") {
          q.add("b");
          q.add("b");
        }
        if (key === "flaky" && failOnce) {
          failOnce = false;
          throw new Error("boom");
        }
        return key === "later" ? 100 : undefined;
      },
      { initialMs: 50, maxMs: 1000 },
      (key, err) => errors.push(`${key}: ${(err as Error).message}`),
    );
    q.add("a");
    q.add("flaky");
    q.add("later");
    await q.whenIdle();
    // "a" runs as soon as it is added, so "b" (queued twice, run once) comes before the later keys.
    expect(runs).toEqual(["a", "b", "flaky", "later"]);
    expect(errors).toEqual(["flaky: boom"]);
    clock.advance(50);
    await q.whenIdle();
    expect(runs.slice(4)).toEqual(["flaky"]);
    clock.advance(50);
    await q.whenIdle();
    expect(runs.slice(5)).toEqual(["later"]);
    await q.stop();
    q.add("after-stop");
    await q.whenIdle();
    expect(runs).not.toContain("after-stop");
  });
});
