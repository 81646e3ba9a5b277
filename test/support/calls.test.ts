/** test/support/calls.ts: the counts a bound or an absence is read from. */
import { expect, test } from "bun:test";
import { countCalls } from "./calls.ts";

function gated() {
  const gates: (() => void)[] = [];
  const client = {
    ask(n: number): Promise<number> {
      return new Promise((resolve) => gates.push(() => resolve(n)));
    },
  };
  return { client, open: () => gates.shift()?.() };
}

test("calls, those in flight and the most at once; restore puts the method back", async () => {
  const { client, open } = gated();
  const original = client.ask;
  const asks = countCalls(client, "ask");
  const answers = [client.ask(1), client.ask(2)];
  expect([asks.calls, asks.inFlight, asks.most]).toEqual([2, 2, 2]);
  open();
  expect(await answers[0]).toBe(1);
  expect(asks.inFlight).toBe(1);
  const third = client.ask(3);
  expect([asks.calls, asks.inFlight, asks.most]).toEqual([3, 2, 2]);
  open();
  open();
  expect(await Promise.all([answers[1], third])).toEqual([2, 3]);
  expect(asks.inFlight).toBe(0);
  asks.restore();
  expect(client.ask).toBe(original);
});

test("quiet: a call that an answer sets going, however many reactions later, is made by then", async () => {
  const { client, open } = gated();
  const asks = countCalls(client, "ask");
  void (async () => {
    await Promise.race([client.ask(1), new Promise(() => {})]);
    await null;
    await client.ask(2);
  })();
  open();
  await asks.quiet();
  expect(asks.calls).toBe(2);
  expect(asks.most).toBe(1);
});

test("a method of the prototype is restored by removing the counting one", () => {
  class Client {
    async ask(): Promise<number> {
      return 1;
    }
  }
  const c = new Client();
  countCalls(c, "ask").restore();
  expect(Object.hasOwn(c, "ask")).toBe(false);
});
