/** Messages too large to store, and so to send (delivery is store-then-send). */
import type { ErrorData } from '../core/errors.ts';
import { MAX_MESSAGE_BYTES } from './event-log.ts';

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
