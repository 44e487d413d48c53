/** Shared assertions for the core tests: every refusal is an McpHttpError with exact fields. */
import { expect } from 'vitest';
import { McpHttpError, type ErrorData, type JsonRpcId } from '../../src/core/errors.ts';

export interface ExpectedHttpError {
  readonly status: number;
  readonly code: number;
  readonly message: string;
  readonly data?: ErrorData;
  readonly id?: JsonRpcId | null;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Runs `fn` and returns what it threw; fails the test if it returned normally. */
export function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw, but it returned');
}

/** Awaits `fn` and returns its rejection; fails the test if it resolved. */
export async function rejectionOf(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject, but it resolved');
}

/** Asserts `error` is an McpHttpError whose status, code, message, data, id and headers are exactly `expected`. */
export function expectHttpError(error: unknown, expected: ExpectedHttpError): void {
  expect(error).toBeInstanceOf(McpHttpError);
  const actual = error as McpHttpError;
  expect({
    status: actual.status,
    code: actual.code,
    message: actual.message,
    data: actual.data,
    id: actual.id,
    headers: actual.headers,
  }).toStrictEqual({ data: undefined, id: null, headers: {}, ...expected });
}
