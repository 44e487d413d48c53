/**
 * A session that negotiated 2025-03-26, the only revision whose sessions accept JSON-RPC batches
 * here. ForkSafeTransport has no batch path: its `send` takes one message (as the SDK's
 * Transport does; an array is refused) and every POST carries one, so calls made together go as separate POSTs, each
 * on its own stream. What a 2025-03-26 session changes for the transport is the stream's
 * opening: no priming event, so a stream's first event is its first message (seq 1), and a cut
 * before it leaves no cursor.
 */
import { describe, expect, it } from 'vitest';
import {
  connect,
  countdown,
  countdownFrameEnds,
  faultyFetch,
  firstToolCallPosts,
  liftoff,
  tally,
  type Logged,
  type Tamper,
} from './faults.ts';

const FROM = 5;
const progressed = Array.from({ length: FROM }, (_, i) => i + 1);
const resumes = (log: readonly Logged[]) => log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null);

/** The body of each POST, as sent. */
function bodies(): Tamper & { sent: unknown[] } {
  const sent: unknown[] = [];
  return {
    sent,
    async request(request) {
      if (request.method === 'POST') sent.push(JSON.parse(await request.clone().text()));
      return request;
    },
  };
}

describe('ForkSafeTransport on a 2025-03-26 session', () => {
  it('sends calls made together as one POST each, never a batch, and each gets its own answer', async () => {
    const tamper = bodies();
    const fetch = faultyFetch(undefined, [], tamper);
    const { client, transport } = await connect(fetch, { version: '2025-03-26', standaloneStream: false });
    expect(transport.protocolVersion).toBe('2025-03-26');
    expect(transport.mode).toBe('fork-safe');
    const [first, second, third] = await Promise.all([countdown(client, 3, 10), tally(client, 'together'), tally(client, 'together')]);
    expect(first).toEqual({ progress: [1, 2, 3], result: liftoff(3) });
    expect([second, third].sort()).toEqual(['1', '2']);
    expect(tamper.sent.filter((body) => Array.isArray(body))).toEqual([]);
    const calls = fetch.log.filter((entry) => entry.rpc === 'tools/call');
    expect(calls.map((entry) => entry.status)).toEqual([200, 200, 200]);
    expect(new Set(calls.map((entry) => entry.streamId)).size).toBe(3);
    await client.close();
  });

  it('refuses an array passed to send with a typed error, posting nothing (its answers would be dropped)', async () => {
    const tamper = bodies();
    const fetch = faultyFetch(undefined, [], tamper);
    const { client, transport } = await connect(fetch, { version: '2025-03-26', standaloneStream: false });
    const posted = tamper.sent.length;
    const batch = [{ jsonrpc: '2.0', id: 'b1', method: 'ping' }] as unknown as Parameters<typeof transport.send>[0];
    await expect(transport.send(batch)).rejects.toThrow(/one message per send, not a batch/);
    expect(tamper.sent.length).toBe(posted);
    await client.close();
  });

  it('a countdown whose POST is cut around any frame boundary (no priming event) still gets [1..5] and its result', async () => {
    const ends = await countdownFrameEnds('2025-03-26', FROM);
    // The stream's first frame is already a message: nothing before it to restate.
    expect(ends).toHaveLength(FROM + 1);
    const offsets = [...new Set([0, 1, ...ends.flatMap((end) => [end - 1, end, end + 1])])].filter((at) => at <= ends.at(-1)!);
    const fetch = faultyFetch(
      firstToolCallPosts(),
      offsets.map((at, i) => ({ at, how: i % 2 === 0 ? 'error' : 'close' })),
    );
    const { client } = await connect(fetch, { version: '2025-03-26', standaloneStream: false });
    for (const at of offsets) {
      const outcome = await countdown(client, FROM, 20);
      expect({ at, ...outcome }).toEqual({ at, progress: progressed, result: liftoff(FROM) });
    }
    // Each call ran once: re-sent ones were refused as duplicates.
    const calls = fetch.log.filter((entry) => entry.rpc === 'tools/call');
    expect(calls.filter((entry) => entry.status === 200)).toHaveLength(offsets.length);
    expect(calls.every((entry) => entry.status === 200 || entry.status === 409)).toBe(true);
    await client.close();
  }, 60_000);

  it('a tally cut before its first event is resumed from the stream’s start (before its first message): it ran once', async () => {
    const fetch = faultyFetch(firstToolCallPosts(), [{ at: 0 }]);
    const { client, transport } = await connect(fetch, { version: '2025-03-26', standaloneStream: false });
    expect(await tally(client, 'once')).toBe('1');
    const posts = fetch.log.filter((entry) => entry.rpc === 'tools/call');
    expect(posts.map((entry) => entry.status)).toEqual([200]);
    // No event was received; the headers named the stream: seq 0 is before its first message.
    expect(resumes(fetch.log).map((entry) => entry.lastEventId)).toEqual([`${transport.epoch}-${posts[0]!.streamId}-0`]);
    expect(await tally(client, 'once')).toBe('2');
    await client.close();
  });

  it('a countdown cut after its first message resumes from that message’s id, not a priming one', async () => {
    const ends = await countdownFrameEnds('2025-03-26', FROM);
    const fetch = faultyFetch(firstToolCallPosts(), [{ at: ends[0]! + 4 }]);
    const { client, transport } = await connect(fetch, { version: '2025-03-26', standaloneStream: false });
    expect(await countdown(client, FROM, 20)).toEqual({ progress: progressed, result: liftoff(FROM) });
    const stream = fetch.log.find((entry) => entry.rpc === 'tools/call')!.streamId;
    expect(resumes(fetch.log).map((entry) => [entry.lastEventId, entry.status])).toEqual([[`${transport.epoch}-${stream}-1`, 200]]);
    await client.close();
  });
});
