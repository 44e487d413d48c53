/**
 * A transport's request ids as the server sees them: the SDK's own, under a prefix drawn for the
 * transport. A session on a server that keeps the wire contract refuses a request id it has
 * seen (409 `duplicate_request_id`, naming the stream that answers it): that is how a POST
 * re-sent after a cut finds its first attempt's answer instead of running the call twice. But
 * every SDK Client numbers its requests from 0, so two clients of one session, or a process
 * continuing a session (`sessionId`), would send ids the session has already seen — and be
 * handed another request's answer as their own, the call never run. Under a prefix of its own,
 * an id is seen again only when this transport sends it again.
 *
 * Pure and stateless: an id under the prefix carries the SDK's id, as JSON (`1` and `"1"` stay
 * different requests), so an answer maps back whenever it comes.
 */
import type { RequestId } from './errors.ts';
import type { JsonRpcMessage } from './sdk-transport.ts';

export class WireIds {
  readonly #prefix: string;

  /** `prefix`: drawn at random unless given (a test's). */
  constructor(prefix?: string) {
    this.#prefix = `${prefix ?? randomPrefix()}.`;
  }

  /** The id the server gets for the SDK's `id`. */
  wire(id: RequestId): string {
    return this.#prefix + JSON.stringify(id);
  }

  /** The message as posted: a request under its wire id, a cancellation naming that id; anything else as it is. */
  outbound(message: JsonRpcMessage): JsonRpcMessage {
    if (!('method' in message)) return message; // an answer to the server's own request: its id is the server's
    if ('id' in message && isId(message.id)) return { ...message, id: this.wire(message.id) } as JsonRpcMessage;
    const params = message.params as { requestId?: unknown } | undefined;
    if (message.method === 'notifications/cancelled' && isId(params?.requestId)) {
      return { ...message, params: { ...params, requestId: this.wire(params.requestId) } } as JsonRpcMessage;
    }
    return message;
  }

  /** A message as the SDK is to get it: an answer to one of this transport's requests under the SDK's id; anything else as it is. */
  inbound(message: JsonRpcMessage): JsonRpcMessage {
    if ('method' in message || !('id' in message)) return message;
    const id: unknown = message.id;
    if (typeof id !== 'string' || !id.startsWith(this.#prefix)) return message;
    const original = parseId(id.slice(this.#prefix.length));
    return original === undefined ? message : ({ ...message, id: original } as JsonRpcMessage);
  }
}

const isId = (value: unknown): value is RequestId => typeof value === 'string' || typeof value === 'number';

function parseId(text: string): RequestId | undefined {
  try {
    const id: unknown = JSON.parse(text);
    return isId(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/** 48 random bits, as 8 base64url characters. */
function randomPrefix(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_');
}
