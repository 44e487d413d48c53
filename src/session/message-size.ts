/** Messages too large to store, and so to send (delivery is store-then-send). */
import { McpHttpError, type ErrorData, type JsonRpcId } from '../core/errors.ts';
import { utf8Length } from '../core/utf8.ts';
import { JsonRpcCode } from '../core/wire.ts';
import { MAX_MESSAGE_BYTES, MAX_VALUE_BYTES } from './event-rows.ts';

/** A message too large to store, and so to send: nothing of it was stored or delivered. */
export class MessageTooLargeError extends Error {
  override readonly name = 'MessageTooLargeError';

  constructor(
    readonly bytes: number,
    readonly limit: number = MAX_MESSAGE_BYTES,
  ) {
    super(`the message is too large to store: ${bytes} bytes, at most ${limit}`);
  }

  /** What the client is told, whichever refusal carries it. */
  get data(): ErrorData {
    return { reason: 'message_too_large', bytes: this.bytes, limit: this.limit };
  }
}

/** The error to throw if `bytes` UTF-8 bytes are over `limit`, the most that can be stored; undefined if they are not. */
export function tooLargeToStore(bytes: number, limit = MAX_MESSAGE_BYTES): MessageTooLargeError | undefined {
  return bytes > limit ? new MessageTooLargeError(bytes, limit) : undefined;
}

/**
 * A part of a request stored as one value (at most 2 MB in a Durable Object), refused whole
 * with 400 before anything runs if it is larger: `what` is stored as `value` for request `id`.
 */
export function refuseUnstorable(what: string, value: unknown, id: JsonRpcId | null): void {
  const tooLarge = tooLargeToStore(utf8Length(JSON.stringify(value)), MAX_VALUE_BYTES);
  if (tooLarge === undefined) return;
  throw new McpHttpError(
    400,
    JsonRpcCode.InvalidRequest,
    `Invalid Request: ${what} too large to store: ${tooLarge.bytes} bytes, at most ${tooLarge.limit}`,
    tooLarge.data,
    id,
  );
}
