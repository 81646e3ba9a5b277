/**
 * The one helper for an expected failure: the error a call throws (`thrown`) or a promise rejects
 * with (`rejection`), typed as AicrError by default — or as the class given, for code that throws
 * its own (ElfError, DbusProtocolError, KubeStatusError, a plain Error).
 *
 *   const err = thrown(() => parseConfigMapUri("cm://ns"));
 *   expect(err.code).toBe("INVALID_REQUEST");
 *   const refused = await rejection(client.get(ref), KubeStatusError);
 *
 * Either fails the test at once, saying what happened instead, when the call returns (or the promise
 * resolves) or when what it threw is not an instance of that class (the thrown value is the cause).
 */
import { AicrError } from "../../src/core/errors.ts";

type ErrorClass<E> = abstract new (...args: any[]) => E;

const show = (value: unknown): string => {
  if (value instanceof Error) return `${value.constructor.name}: ${value.message}`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
};

function expectClass<E>(error: unknown, type: ErrorClass<E>, how: string): E {
  if (error instanceof type) return error;
  throw new Error(`expected a ${type.name}, but it ${how} ${show(error)}`, { cause: error });
}

/** The error `fn` throws, as an AicrError (or `type`); fails the test when it returns or throws anything else. */
export function thrown(fn: () => unknown): AicrError;
export function thrown<E>(fn: () => unknown, type: ErrorClass<E>): E;
export function thrown<E>(fn: () => unknown, type?: ErrorClass<E>): E | AicrError {
  let value: unknown;
  try {
    value = fn();
  } catch (error) {
    return expectClass<E | AicrError>(error, type ?? AicrError, "threw");
  }
  throw new Error(`expected a throw with a ${(type ?? AicrError).name}, but it returned ${show(value)}`);
}

/**
 * The error `promise` rejects with (a function is called first: what it throws counts as a rejection),
 * as an AicrError (or `type`); fails the test when it resolves or rejects with anything else.
 */
export function rejection(promise: PromiseLike<unknown> | (() => PromiseLike<unknown>)): Promise<AicrError>;
export function rejection<E>(
  promise: PromiseLike<unknown> | (() => PromiseLike<unknown>),
  type: ErrorClass<E>,
): Promise<E>;
export async function rejection<E>(
  promise: PromiseLike<unknown> | (() => PromiseLike<unknown>),
  type?: ErrorClass<E>,
): Promise<E | AicrError> {
  let value: unknown;
  try {
    value = await (typeof promise === "function" ? promise() : promise);
  } catch (error) {
    return expectClass<E | AicrError>(error, type ?? AicrError, "rejected");
  }
  throw new Error(
    `expected a rejection with a ${(type ?? AicrError).name}, but it resolved with ${show(value)}`,
  );
}
