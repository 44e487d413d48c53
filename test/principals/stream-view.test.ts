/**
 * The operator's view of a principal counts the streams it holds open now — its
 * `subscriptions/listen` streams and its `events/stream` push streams — as the bus shards count
 * their sockets under its tag (stateless/bus-object.ts); a revocation ends both kinds, each the
 * way its text says (a listen with an error answer, a push stream with
 * `notifications/events/terminated` Forbidden and then its result), answers how many of each it
 * closed, and leaves another principal's streams open and listed. AUTH=jwt, the fixture's bus
 * (one shard) and its `demo.note` event type.
 */
import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { EventsErrorCode, EventsNotification } from '../../src/core/events-wire.ts';
import { answerOf, modernRequest, modernRequestOf } from '../support/modern-http.ts';
import { admin, eventually, newPrincipal } from '../support/principals.ts';
import { rest } from '../support/revocation-scenario.ts';
import { ENDED, message, type ReadEvent, SseReader, TIMED_OUT } from '../support/sse-reader.ts';

const EVENTS = { extensions: { 'io.modelcontextprotocol/events': {} } };

type Streams = { listens: number; events: number } | null;

/** The `streams` member of the operator's view of `principal`. */
async function streamsOf(principal: string): Promise<Streams> {
  const response = await admin('GET', principal);
  if (response.status !== 200) throw new Error(`admin view: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { streams: Streams }).streams;
}

/** Polls the view until it shows `expected` (a stream's bus socket opens just after its response). */
async function viewShows(principal: string, expected: Streams): Promise<void> {
  let last: Streams = null;
  await eventually(async () => {
    last = await streamsOf(principal);
    return JSON.stringify(last) === JSON.stringify(expected);
  }).catch(() => {
    throw new Error(`the view of ${principal} shows ${JSON.stringify(last)}, not ${JSON.stringify(expected)}`);
  });
}

/** The next frame of `reader` as a message, failing on the end of the stream or silence. */
async function nextMessage(reader: SseReader, ms = 5_000): Promise<Record<string, any>> {
  for (;;) {
    const event = await reader.next(ms);
    if (event === ENDED || event === TIMED_OUT) throw new Error(`expected a message, got ${String(event)}`);
    if ((event as ReadEvent).data !== '') return message(event);
  }
}

async function openListen(auth: Record<string, string>): Promise<SseReader> {
  const reader = new SseReader(await modernRequest('subscriptions/listen', { notifications: { toolsListChanged: true } }, {}, auth));
  expect((await nextMessage(reader)).method).toBe('notifications/subscriptions/acknowledged');
  return reader;
}

/** An `events/stream` of demo.note from now, with request id `id`, read past its `active`. */
async function openEventStream(auth: Record<string, string>, id: number): Promise<SseReader> {
  const params = { name: 'demo.note', arguments: {}, cursor: null };
  const response = await exports.default.fetch(modernRequestOf('events/stream', params, EVENTS, auth, id));
  expect(response.headers.get('Content-Type')).toContain('text/event-stream');
  const reader = new SseReader(response);
  expect((await nextMessage(reader)).method).toBe(EventsNotification.active);
  return reader;
}

describe("the operator's view of a principal's streams", () => {
  it('lists one listen and two event streams; a revocation ends them (the event streams with terminated Forbidden, then their result) and another principal’s stay open and listed', async () => {
    const alice = await newPrincipal('alice');
    const bob = await newPrincipal('bob');
    expect(await streamsOf(alice.id), 'nothing open yet').toEqual({ listens: 0, events: 0 });
    const readers: SseReader[] = [];
    try {
      const aliceListen = await openListen(alice.auth);
      const aliceEvents = [await openEventStream(alice.auth, 9001), await openEventStream(alice.auth, 9002)];
      const bobListen = await openListen(bob.auth);
      const bobEvents = await openEventStream(bob.auth, 9003);
      readers.push(aliceListen, ...aliceEvents, bobListen, bobEvents);
      await viewShows(alice.id, { listens: 1, events: 2 });
      await viewShows(bob.id, { listens: 1, events: 1 });

      const response = await admin('POST', alice.id, '/revoke');
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ sessions: 0, tasks: 0, listens: 1, eventStreams: 2, webhooks: 0, grants: 0 });

      for (const [index, reader] of aliceEvents.entries()) {
        const ending = await rest(reader);
        const id = 9001 + index;
        expect(ending.at(-2), `stream ${id}: terminated, Forbidden`).toMatchObject({
          method: EventsNotification.terminated,
          params: {
            error: { code: EventsErrorCode.Forbidden, data: { reason: 'grant_revoked' } },
            _meta: { 'io.modelcontextprotocol/subscriptionId': id },
          },
        });
        expect(ending.at(-1), `stream ${id}: then its result`).toMatchObject({ id, result: { resultType: 'complete' } });
      }
      expect((await rest(aliceListen)).at(-1), 'her listen ends with an error').toMatchObject({
        error: { data: { reason: 'grant_revoked' } },
      });
      expect(await streamsOf(alice.id), 'nothing of hers is open').toEqual({ listens: 0, events: 0 });

      // Bob's streams: still listed, still open, still served.
      expect(await streamsOf(bob.id)).toEqual({ listens: 1, events: 1 });
      expect(await bobListen.next(50)).toBe(TIMED_OUT);
      const posted = await answerOf(await modernRequest('tools/call', { name: 'post_note', arguments: { text: 'for bob' } }, {}, bob.auth));
      expect(posted.error).toBeUndefined();
      const note = await nextMessage(bobEvents);
      expect(note).toMatchObject({ method: EventsNotification.event, params: { data: { text: 'for bob' } } });
    } finally {
      await Promise.all(readers.map((reader) => reader.cancel()));
    }
    // Ended by the client, bob's streams are no longer counted.
    await viewShows(bob.id, { listens: 0, events: 0 });
  });
});
