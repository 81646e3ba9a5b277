import { expect, test } from "bun:test";
import {
  AicrError,
  EXIT_CODES,
  ExitStatus,
  errorMessage,
  exitCodeOf,
  formatError,
} from "../../../src/core/errors.ts";

test("every code maps to the contract's exit status", () => {
  expect(EXIT_CODES).toEqual({
    INVALID_REQUEST: 2,
    CONFLICT: 2,
    NOT_FOUND: 3,
    UNAUTHORIZED: 4,
    TIMEOUT: 5,
    SERVICE_UNAVAILABLE: 6,
    RATE_LIMIT_EXCEEDED: 7,
    INTERNAL: 8,
    CANCELED: 9,
  });
  for (const [code, exit] of Object.entries(EXIT_CODES)) {
    expect(exitCodeOf(new AicrError(code as keyof typeof EXIT_CODES, "x"))).toBe(exit);
  }
});

test("anything without a code exits 1", () => {
  expect(exitCodeOf(new Error("boom"))).toBe(1);
  expect(exitCodeOf("a string")).toBe(1);
  expect(exitCodeOf(undefined)).toBe(1);
});

test("the text form is [CODE] message: cause, then the remedy", () => {
  const err = new AicrError("NOT_FOUND", 'RuntimeClass "nvidia" not found', {
    cause: new Error("404"),
    remedy: "omit --runtime-class",
  });
  expect(formatError(err)).toBe(
    '[NOT_FOUND] RuntimeClass "nvidia" not found: 404\n  remedy: omit --runtime-class',
  );
  expect(formatError(new TypeError("bad"))).toBe("TypeError: bad");
  // The JSON log's msg: the message and its cause alone (code and remedy are fields of their own).
  expect(errorMessage(err)).toBe('RuntimeClass "nvidia" not found: 404');
  expect(errorMessage(new TypeError("bad"))).toBe("TypeError: bad");
});

test("an ExitStatus outcome keeps its own status (a validator's 1 failed / 2 skipped)", () => {
  expect(exitCodeOf(new ExitStatus(1, "check failed"))).toBe(1);
  expect(exitCodeOf(new ExitStatus(2, "check skipped"))).toBe(2);
});
