/**
 * Answers the object awaits itself instead of delivering: the response to a new session's
 * `initialize` (persisted only once the session exists) and the responses to the handshake
 * replayed into a fresh McpServer after eviction (never delivered at all).
 */
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/server';

export class PendingAnswers {
  readonly #waiting = new Map<RequestId, (message: JSONRPCMessage) => void>();

  expect(id: RequestId): Promise<JSONRPCMessage> {
    return new Promise((resolve) => this.#waiting.set(id, resolve));
  }

  /** Takes the message if it answers an awaited id. */
  take(message: JSONRPCMessage): boolean {
    if ('method' in message || !('id' in message) || message.id === undefined) return false;
    const resolve = this.#waiting.get(message.id);
    if (resolve === undefined) return false;
    this.#waiting.delete(message.id);
    resolve(message);
    return true;
  }
}
