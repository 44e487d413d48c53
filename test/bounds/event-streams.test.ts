/**
 * MCP Events push streams' per-principal bound under AUTH=none, where the principal is everyone
 * and streams are shared out per client address (`CF-Connecting-IP`, edge/stream-shares.ts): this
 * project lets each address hold MAX_EVENT_STREAMS_PER_PRINCIPAL=2. The third of one address is
 * refused ResourceExhausted `{limit: "events/stream", max}` with no stream opened; another address
 * is served; a stream its client closes gives its slot back; a refused stream holds none.
 * (docs/events.md choice 10: `events/stream` has its own bound, not the general cap on streams.)
 */
import { describe, expect, it } from 'vitest';
import { EventsErrorCode } from '../../src/core/events-wire.ts';
import { activeStream, type EventStream, openStream, polled, postNote, refusedStream, token } from '../support/events-http.ts';

/** A client address no other test uses (TEST-NET-2). */
let nextAddress = 1;
const address = () => ({ 'CF-Connecting-IP': `198.51.100.${nextAddress++}` });

const BOUND = 2;
const exhausted = {
  code: EventsErrorCode.ResourceExhausted,
  message: expect.stringMatching(/^ResourceExhausted: /),
  data: { limit: 'events/stream', max: BOUND },
};

/** Opens a stream again until it is served (a closed stream's slot is given back as its end reaches the Worker). */
async function openedOnceFreed(params: Record<string, unknown>, headers: Record<string, string>): Promise<EventStream> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const { stream } = await activeStream(params, { headers }).catch(async (error: unknown) => {
      if (Date.now() > deadline) throw error;
      await scheduler.wait(25);
      return { stream: undefined };
    });
    if (stream !== undefined) return stream;
  }
}

describe('event streams per client address (AUTH=none)', () => {
  it('"one principal at its bound leaves others served": the third stream of one address is refused ResourceExhausted; another address is served; the two open ones still deliver', async () => {
    const tok = token();
    const params = { name: 'demo.note', arguments: { contains: tok }, cursor: null };
    const [busy, other] = [address(), address()];
    const held = [(await activeStream(params, { headers: busy })).stream, (await activeStream(params, { headers: busy })).stream];
    let served: EventStream | undefined;
    try {
      expect(await refusedStream(params, busy)).toEqual(exhausted);
      served = (await activeStream(params, { headers: other })).stream;
      const posted = await postNote(`${tok} to all three`);
      for (const stream of [...held, served]) expect((await stream.events(1)).map((e) => e.eventId)).toEqual([posted.eventId]);
    } finally {
      await Promise.all([...held, ...(served ? [served] : [])].map((stream) => stream.cancel()));
    }
  });

  it('a stream its client closes gives its slot back: a new one can be opened up to the bound, and not past it', async () => {
    const params = { name: 'demo.note', arguments: { contains: token() }, cursor: null };
    const busy = address();
    const first = (await activeStream(params, { headers: busy })).stream;
    const second = (await activeStream(params, { headers: busy })).stream;
    let third: EventStream | undefined;
    try {
      expect(await refusedStream(params, busy)).toEqual(exhausted);
      await first.cancel();
      third = await openedOnceFreed(params, busy);
      expect(await refusedStream(params, busy)).toEqual(exhausted);
    } finally {
      await Promise.all([first, second, ...(third ? [third] : [])].map((stream) => stream.cancel()));
    }
  });

  it('a refused stream (a bad cursor, an unknown type) holds no slot, nor does a poll', async () => {
    const busy = address();
    for (let i = 0; i < BOUND + 1; i++) {
      expect((await refusedStream({ name: 'demo.note', cursor: 'not-a-cursor' }, busy)).data).toEqual({ reason: 'malformed_cursor' });
      expect((await refusedStream({ name: 'demo.nope' }, busy)).data).toEqual({ kind: 'event' });
      expect((await polled({ name: 'demo.note', cursor: null }, busy)).truncated).toBe(false);
    }
    const params = { name: 'demo.note', arguments: { contains: token() }, cursor: null };
    const streams = [await openStream(params, { headers: busy }), await openStream(params, { headers: busy })];
    await Promise.all(streams.map((stream) => stream.cancel()));
  });
});
