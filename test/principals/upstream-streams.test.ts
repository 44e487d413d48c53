/**
 * Push streams of an upstream-backed type (`demo.upstream`, src/events/upstream-feed.ts) are held
 * as a log's are (AUTH=jwt, MAX_EVENT_STREAMS_PER_PRINCIPAL=2 in this project): counted under the
 * same per-principal bound as the log-backed streams, and ended by revocation "with the signal for
 * its mode" — `notifications/events/terminated` Forbidden, then the stream's result and its end.
 */
import { describe, expect, it } from 'vitest';
import { EventsErrorCode, EventsNotification } from '../../src/core/events-wire.ts';
import { activeStream, ENDED, type EventStream, refusedStream, token } from '../support/events-http.ts';
import { admin, newPrincipal } from '../support/principals.ts';
import { driveFeed, feedName } from '../support/upstream-feed.ts';

describe('upstream-backed push streams per principal (AUTH=jwt)', () => {
  it("count under the same bound as a log's: one demo.note stream and one demo.upstream stream, and alice's third of either is ResourceExhausted; bob is served", async () => {
    const [alice, bob] = [await newPrincipal('alice'), await newPrincipal('bob')];
    const upstream = { name: 'demo.upstream', arguments: { feed: feedName() }, cursor: null };
    const note = { name: 'demo.note', arguments: { contains: token() }, cursor: null };
    const streams: EventStream[] = [];
    try {
      streams.push((await activeStream(note, { headers: alice.auth })).stream);
      streams.push((await activeStream(upstream, { headers: alice.auth })).stream);
      const exhausted = { code: EventsErrorCode.ResourceExhausted, message: expect.any(String), data: { limit: 'events/stream', max: 2 } };
      expect(await refusedStream(upstream, alice.auth)).toEqual(exhausted);
      expect(await refusedStream(note, alice.auth)).toEqual(exhausted);
      streams.push((await activeStream(upstream, { headers: bob.auth })).stream);
    } finally {
      await Promise.all(streams.map((stream) => stream.cancel()));
    }
  });

  it("revoking alice ends her upstream stream: notifications/events/terminated Forbidden (-32024), the result, the end; bob's goes on reading the upstream", async () => {
    const [alice, bob] = [await newPrincipal('alice'), await newPrincipal('bob')];
    const feed = feedName();
    const params = { name: 'demo.upstream', arguments: { feed }, cursor: null };
    const hers = (await activeStream(params, { headers: alice.auth, id: 'alice-up' })).stream;
    const his = (await activeStream(params, { headers: bob.auth, id: 'bob-up' })).stream;
    try {
      expect((await admin('POST', alice.id, '/revoke')).status).toBe(200);
      expect(await hers.notification()).toEqual({
        jsonrpc: '2.0',
        method: EventsNotification.terminated,
        params: {
          error: { code: EventsErrorCode.Forbidden, message: expect.stringMatching(/^Forbidden/), data: expect.any(Object) },
          _meta: { 'io.modelcontextprotocol/subscriptionId': 'alice-up' },
        },
      });
      expect(await hers.notification()).toEqual({
        jsonrpc: '2.0',
        id: 'alice-up',
        result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 'alice-up' } },
      });
      expect(await hers.next()).toBe(ENDED);
      await driveFeed(feed, { append: ['after'] }, bob.auth);
      expect((await his.events(1)).map((e) => e.data.text)).toEqual(['after']);
    } finally {
      await Promise.all([hers.cancel(), his.cancel()]);
    }
  });
});
