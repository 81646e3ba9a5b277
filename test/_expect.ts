import { expect } from "bun:test";
import { AicrError } from "../src/core/errors.ts";

/** The AicrError a promise rejects with; fails the test if it resolves or rejects with anything else. */
export async function rejection(p: Promise<unknown>): Promise<AicrError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AicrError);
  return err as AicrError;
}
