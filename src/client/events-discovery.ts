/**
 * Whether the server offers MCP Events, asked once per follow before its first `events/*`
 * request (SEP-3415, *Capability Negotiation*): "A client MUST NOT send them to a server that has
 * not advertised the extension". The server advertises it "in the capabilities it returns from
 * `server/discover`" as `capabilities.extensions["io.modelcontextprotocol/events"]`, a settings
 * object (its one member, `listChanged`, is of no use to a follower, which never lists).
 *
 * One `server/discover` (events-request.ts builds it and says what a refusal means): an answer
 * without the extension, or a `-32601` / `-32022` refusal, is EventsUnsupportedError; what
 * another attempt may change (the network, a 5xx or 429, a cut answer) is Transient, retried by
 * the follower as its other requests are. The follower's reconnects do not ask again: an
 * advertisement holds for the follow (a server that later stops offering Events answers `-32601`,
 * which ends the follow as any refusal does).
 */
import { EVENTS_EXTENSION_ID } from '../core/events-wire.ts';
import { EventsProtocolError, EventsUnsupportedError } from './events-errors.ts';
import { answerOf, type EventsRequester } from './events-request.ts';
import { mediaType, type ErrorObject } from './http.ts';
import { answeredWithin, DEFAULT_IDLE_TIMEOUT_MS } from './idle-limit.ts';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Sends `server/discover` with id `id` and resolves if the server advertised the Events extension;
 * else rejects with EventsUnsupportedError (naming `eventName` and the follow's `cursor`), with
 * Transient for another attempt, or with the typed refusal of events-request.ts.
 */
export async function discoverEvents(
  requester: EventsRequester,
  eventName: string,
  cursor: string | null,
  id: number,
  signal: AbortSignal,
): Promise<void> {
  // Answered at once: one whose answer has not begun within the idle limit went down a dead connection.
  const idleMs = DEFAULT_IDLE_TIMEOUT_MS;
  const response = await answeredWithin(idleMs, signal, (attempt) => requester.discover(id, attempt));
  if (!response.ok) return requester.refused('server/discover', response, cursor, idleMs);
  const answer = await answerOf(response, idleMs);
  const invalid = (detail: string) => new EventsProtocolError(eventName, cursor, 'unexpected_response', detail);
  if (!isObject(answer) || answer.id !== id) throw invalid(`not the answer to server/discover (${mediaType(response)})`);
  if (isObject(answer.error)) throw requester.failure('server/discover', response.status, answer.error as ErrorObject, cursor);
  const result = answer.result;
  if (!isObject(result)) throw invalid('a server/discover answer without a result');
  const extensions = isObject(result.capabilities) ? result.capabilities.extensions : undefined;
  if (!isObject(extensions) || !isObject(extensions[EVENTS_EXTENSION_ID])) throw new EventsUnsupportedError(eventName, cursor, undefined);
}
