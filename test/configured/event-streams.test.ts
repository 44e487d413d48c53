/**
 * An MCP Events push stream the server ends (this project's MAX_CONNECTION_AGE_MS=400): "When the
 * server ends the stream it sends the StreamEventsResult as the final data: frame" — an empty
 * result with `resultType` and the subscription id in `_meta`, no `terminated` (the subscription
 * did not end: the client reconnects with its cursor, and continues exactly after it). Under
 * RESPONSE_MODE=json too: a push stream is an event stream whatever the mode of other answers.
 */
import { describe, expect, it } from 'vitest';
import { EventsNotification } from '../../src/core/events-wire.ts';
import { activeStream, ENDED, polled, postNote, token } from '../support/events-http.ts';

describe('a push stream past MAX_CONNECTION_AGE_MS', () => {
  it('ends with the StreamEventsResult as its final data frame, then closes; reconnected with its last cursor, it continues exactly after it', async () => {
    const tok = token();
    const args = { contains: tok };
    const { cursor } = await polled({ name: 'demo.note', arguments: args, cursor: null });
    // Stored before the stream opens, so that it is delivered within the stream's 400 ms whatever the load.
    const first = await postNote(`${tok} first`);
    const { stream, active } = await activeStream({ name: 'demo.note', arguments: args, cursor }, { id: 'aged' });
    const [event] = await stream.events(1);
    expect(event!.eventId).toBe(first.eventId);
    const result = await stream.notification();
    expect(result).toEqual({
      jsonrpc: '2.0',
      id: 'aged',
      result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 'aged' } },
    });
    expect(await stream.next()).toBe(ENDED);
    expect(stream.seen.some((message) => message.method === EventsNotification.terminated)).toBe(false);
    expect(active.truncated).toBe(false);

    const second = await postNote(`${tok} second`);
    const { stream: again, active: resumed } = await activeStream({ name: 'demo.note', arguments: args, cursor: event!.cursor });
    try {
      expect(resumed.truncated).toBe(false);
      expect((await again.events(1)).map((e) => e.eventId)).toEqual([second.eventId]);
    } finally {
      await again.cancel();
    }
  });
});
