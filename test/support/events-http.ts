/**
 * MCP Events from a test (test/events/, and the bounds and principals projects' event stream
 * tests): polls and push streams of the fixture's event types (test/fixture-server/note-events.ts)
 * as raw 2026-07-28 requests, a stream's notifications read one at a time, notes posted through
 * the fixture's `post_note` tool, and a cursor's fields read back. A cursor is readable, not
 * secret (docs/events.md, *The model*): reading its log id and position lets a test say which log
 * an answer names and where, without trusting the answer's own account of it.
 *
 * Tests share the fixture's logs with every other file of their project running at the same
 * time: a test on `demo.note` posts notes carrying a token of its own and subscribes with
 * `contains: token`, so it hears only its own; the other types each belong to one file.
 */
import { exports } from 'cloudflare:workers';
import { expect } from 'vitest';
import type { EventCursor } from '../../src/core/event-cursor.ts';
import { EVENTS_EXTENSION_ID, EventsNotification, SUBSCRIPTION_ID_META_KEY } from '../../src/core/events-wire.ts';
import { answerOf, modernRequestOf } from './modern-http.ts';
import { ENDED, SseReader, TIMED_OUT } from './sse-reader.ts';

/** The client's declaration of the extension, in each request's `_meta`. */
export const EVENTS = { extensions: { [EVENTS_EXTENSION_ID]: {} } };

/** A token no other test's notes carry. */
export const token = () => `tok-${crypto.randomUUID()}`;

let nextId = 1;
/** A JSON-RPC id no other request of this isolate's tests uses. */
export const freshId = () => 900_000 + nextId++;

/** An events request to the fixture; `headers` over the usual ones (auth, client address). */
export function eventsRequest(
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
  id: number | string = freshId(),
): Promise<Response> {
  return exports.default.fetch(modernRequestOf(method, params, EVENTS, headers, id as number));
}

/** The JSON-RPC answer of an `events/poll` (or `events/list`). */
export async function poll(params: Record<string, unknown>, headers: Record<string, string> = {}): Promise<any> {
  return answerOf(await eventsRequest('events/poll', params, headers));
}

/** A poll's result, failing the test if it was refused. */
export async function polled(params: Record<string, unknown>, headers: Record<string, string> = {}): Promise<PollResult> {
  const answer = await poll(params, headers);
  if (answer.error !== undefined) throw new Error(`poll refused: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

export interface Occurrence {
  readonly eventId: string;
  readonly name: string;
  readonly timestamp: string;
  readonly data: Record<string, any>;
  readonly cursor?: string;
}

export interface PollResult {
  readonly resultType: string;
  readonly events: Occurrence[];
  readonly cursor: string;
  readonly truncated: boolean;
  readonly hasMore: boolean;
  readonly nextPollMs: number;
}

/** What an emit answers (post_note's structured content). */
export interface Emitted {
  readonly eventId: string;
  readonly seq: number;
  readonly timestamp: string;
  readonly duplicate: boolean;
}

/** Posts a demo.note through the fixture's post_note tool; returns once it is stored. */
export async function postNote(text: string, eventId?: string, headers: Record<string, string> = {}): Promise<Emitted> {
  const answer = await answerOf(
    await exports.default.fetch(
      modernRequestOf('tools/call', { name: 'post_note', arguments: { text, ...(eventId !== undefined && { eventId }) } }, {}, headers),
    ),
  );
  if (answer.result?.structuredContent === undefined) throw new Error(`post_note failed: ${JSON.stringify(answer)}`);
  return answer.result.structuredContent as Emitted;
}

/** The log and position a cursor names (its payload is base64url JSON `[1, type, partition, logId, next]`). */
export function cursorFields(cursor: string): EventCursor {
  const payload = cursor.split('.')[0]!;
  const [, type, partition, logId, next] = JSON.parse(atob(payload.replaceAll('-', '+').replaceAll('_', '/'))) as [
    number,
    string,
    string,
    string,
    number,
  ];
  return { type, partition, logId, next };
}

/** The seq of an occurrence whose id was generated (`<logId>-<seq>`). */
export const seqOf = (eventId: string) => Number(eventId.slice(eventId.lastIndexOf('-') + 1));

/** A JSON-RPC message of a push stream. */
export type StreamMessage = { jsonrpc: '2.0'; method?: string; params?: any; id?: unknown; result?: any; error?: any };

/** An `events/stream` response read one message at a time. */
export class EventStream {
  readonly reader: SseReader;
  /** Every message read, heartbeats included, in order. */
  readonly seen: StreamMessage[] = [];

  constructor(readonly response: Response) {
    this.reader = new SseReader(response);
  }

  /** The next message (heartbeats included); ENDED or TIMED_OUT. */
  async next(ms = 5_000): Promise<StreamMessage | typeof ENDED | typeof TIMED_OUT> {
    const frame = await this.reader.next(ms);
    if (typeof frame === 'symbol') return frame;
    const message = JSON.parse(frame.data) as StreamMessage;
    this.seen.push(message);
    return message;
  }

  /** The next message that is not a heartbeat; fails the test on an end or a timeout. */
  async notification(ms = 5_000): Promise<StreamMessage> {
    for (;;) {
      const message = await this.next(ms);
      if (typeof message === 'symbol')
        throw new Error(`expected a notification, got ${String(message)}; seen ${JSON.stringify(this.seen)}`);
      if (message.method !== EventsNotification.heartbeat) return message;
    }
  }

  /** The next `n` occurrences (`notifications/events/event` params), failing on anything else but heartbeats. */
  async events(n: number, ms = 5_000): Promise<Occurrence[]> {
    const occurrences: Occurrence[] = [];
    while (occurrences.length < n) {
      const message = await this.notification(ms);
      expect(message.method, JSON.stringify(message)).toBe(EventsNotification.event);
      occurrences.push(message.params);
    }
    return occurrences;
  }

  /** Reads until the next heartbeat, failing on anything else: nothing was due before it. */
  async heartbeat(ms = 5_000): Promise<StreamMessage> {
    const message = await this.next(ms);
    if (typeof message === 'symbol') throw new Error(`expected a heartbeat, got ${String(message)}`);
    expect(message.method, JSON.stringify(message)).toBe(EventsNotification.heartbeat);
    return message;
  }

  /** The client leaves. */
  cancel(): Promise<void> {
    return this.reader.cancel();
  }
}

/** Opens an `events/stream` with request id `id`; the first message is read by the test. */
export async function openStream(
  params: Record<string, unknown>,
  options: { readonly id?: number | string; readonly headers?: Record<string, string> } = {},
): Promise<EventStream> {
  const response = await eventsRequest('events/stream', params, options.headers, options.id ?? freshId());
  expect(response.headers.get('Content-Type'), 'an event stream').toContain('text/event-stream');
  return new EventStream(response);
}

/** Opens a stream and reads its first message, which must be `notifications/events/active`. */
export async function activeStream(
  params: Record<string, unknown>,
  options: { readonly id?: number | string; readonly headers?: Record<string, string> } = {},
): Promise<{ stream: EventStream; active: { cursor: string; truncated: boolean } }> {
  const stream = await openStream(params, options);
  const first = await stream.notification();
  expect(first.method).toBe(EventsNotification.active);
  return { stream, active: first.params };
}

/** The answer to an `events/stream` refused: one JSON-RPC error for its id, and no stream. */
export async function refusedStream(
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ code: number; message: string; data: any }> {
  const id = freshId();
  const response = await eventsRequest('events/stream', params, headers, id);
  expect(response.headers.get('Content-Type'), 'not a stream').toContain('application/json');
  const answer = await answerOf(response);
  expect(answer).toMatchObject({ jsonrpc: '2.0', id });
  expect(answer.result).toBeUndefined();
  return answer.error;
}

/** The subscription id a push notification carries. */
export const subscriptionIdOf = (message: StreamMessage) => message.params?._meta?.[SUBSCRIPTION_ID_META_KEY];

export { ENDED, TIMED_OUT };
