/**
 * MCP Events push streams per principal (AUTH=jwt, MAX_EVENT_STREAMS_PER_PRINCIPAL=2 in this
 * project): one principal at its bound is refused ResourceExhausted while another is served; and
 * a revoked principal's streams end "with the signal for its mode" — `notifications/events/terminated`
 * with Forbidden (-32024), then the stream's result and its end — while another principal's go on.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { EventsErrorCode, EventsNotification } from '../../src/core/events-wire.ts';
import { noteEvents } from '../fixture-server/note-events.ts';
import { activeStream, ENDED, type EventStream, poll, polled, refusedStream, subscriptionIdOf, token } from '../support/events-http.ts';
import { admin, newPrincipal } from '../support/principals.ts';

const note = (text: string) => noteEvents.emit(env.MCP_EVENTS, { data: { text, n: 0 } });

describe('event streams per principal (AUTH=jwt)', () => {
  it('"one principal at its bound leaves others served": alice\'s third stream is ResourceExhausted {limit: "events/stream", max: 2}; bob\'s first is served', async () => {
    const [alice, bob] = [await newPrincipal('alice'), await newPrincipal('bob')];
    const tok = token();
    const params = { name: 'demo.note', arguments: { contains: tok }, cursor: null };
    const streams: EventStream[] = [];
    try {
      for (let i = 0; i < 2; i++) streams.push((await activeStream(params, { headers: alice.auth })).stream);
      expect(await refusedStream(params, alice.auth)).toEqual({
        code: EventsErrorCode.ResourceExhausted,
        message: expect.any(String),
        data: { limit: 'events/stream', max: 2 },
      });
      streams.push((await activeStream(params, { headers: bob.auth })).stream);
      const posted = await note(`${tok} for everyone`);
      for (const stream of streams) expect((await stream.events(1)).map((e) => e.eventId)).toEqual([posted.eventId]);
    } finally {
      await Promise.all(streams.map((stream) => stream.cancel()));
    }
  });
});

describe('"the server MUST verify that the principal has permission to subscribe to the requested event type" (demo.other refuses mallory)', () => {
  it('on every poll and every stream opened: Forbidden (-32024) for mallory, no stream; alice is served; a cursor alice was given grants mallory nothing', async () => {
    const [alice, mallory] = [await newPrincipal('alice'), await newPrincipal('mallory')];
    const forbidden = {
      code: EventsErrorCode.Forbidden,
      message: expect.stringMatching(/^Forbidden: /),
      data: { reason: 'not_permitted' },
    };
    const { cursor } = await polled({ name: 'demo.other', cursor: null }, alice.auth);
    expect((await poll({ name: 'demo.other', cursor: null }, mallory.auth)).error).toEqual(forbidden);
    expect((await poll({ name: 'demo.other', cursor }, mallory.auth)).error).toEqual(forbidden);
    expect(await refusedStream({ name: 'demo.other', cursor }, mallory.auth)).toEqual(forbidden);
    const { stream } = await activeStream({ name: 'demo.other', cursor }, { headers: alice.auth });
    await stream.cancel();
  });
});

describe('revoking a principal (the operator)', () => {
  it("ends her push streams with notifications/events/terminated Forbidden (-32024), then their result and end; bob's stream goes on", async () => {
    const [alice, bob] = [await newPrincipal('alice'), await newPrincipal('bob')];
    const tok = token();
    const params = { name: 'demo.note', arguments: { contains: tok }, cursor: null };
    const hers = (await activeStream(params, { headers: alice.auth, id: 'alice-sub' })).stream;
    const his = (await activeStream(params, { headers: bob.auth, id: 'bob-sub' })).stream;
    try {
      const before = await note(`${tok} before`);
      expect((await hers.events(1)).map((e) => e.eventId)).toEqual([before.eventId]);
      expect((await his.events(1)).map((e) => e.eventId)).toEqual([before.eventId]);

      const response = await admin('POST', alice.id, '/revoke');
      expect(response.status).toBe(200);

      const terminated = await hers.notification();
      expect(terminated).toEqual({
        jsonrpc: '2.0',
        method: EventsNotification.terminated,
        params: {
          error: { code: EventsErrorCode.Forbidden, message: expect.stringMatching(/^Forbidden/), data: expect.any(Object) },
          _meta: { 'io.modelcontextprotocol/subscriptionId': 'alice-sub' },
        },
      });
      // "When the server ends the stream it sends the StreamEventsResult as the final data: frame."
      const result = await hers.notification();
      expect(result).toEqual({
        jsonrpc: '2.0',
        id: 'alice-sub',
        result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 'alice-sub' } },
      });
      expect(await hers.next()).toBe(ENDED);

      const after = await note(`${tok} after`);
      expect((await his.events(1)).map((e) => e.eventId)).toEqual([after.eventId]);
      expect(his.seen.every((message) => subscriptionIdOf(message) === 'bob-sub')).toBe(true);
    } finally {
      await Promise.all([hers.cancel(), his.cancel()]);
    }
  });
});
