import { describe, expect, test } from "bun:test";
import { readOutcome } from "../../../../src/validate/checks/_read-outcome.ts";

describe("readOutcome", () => {
  test("a value, undefined as absent, an error's message", async () => {
    expect(await readOutcome(async () => 1)).toEqual({ state: "found", value: 1 });
    expect(await readOutcome(async () => undefined)).toEqual({ state: "absent" });
    expect(await readOutcome(() => Promise.reject(new Error("reading X: boom")))).toEqual({
      state: "error",
      message: "reading X: boom",
    });
  });

  test("a read without an answer within its bound is an error naming it", async () => {
    const never = new Promise<number>(() => {});
    expect(await readOutcome(() => never, { boundMs: 20, what: "reading Service a/b" })).toEqual({
      state: "error",
      message: "reading Service a/b: no answer within 0.02 s",
    });
  });
});
