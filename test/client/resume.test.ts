/**
 * The official SDK Client on ForkSafeTransport, against the fixture Worker, through a fetch that
 * breaks connections at chosen byte offsets: every call still runs once and delivers everything,
 * in order, however its connections break.
 */
import type { Transport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { STEADY_CONNECTION_MS } from '../../src/client/backoff.ts';
import { ForkSafeTransport, IdleConnectionError, ReconnectExhaustedError } from '../../src/client/index.ts';
import {
  connect,
  countdown,
  countdownFrameEnds,
  faultyFetch,
  firstToolCallPosts,
  liftoff,
  settle,
  tally,
  toolCallStreams,
  type Cut,
} from './faults.ts';

const FROM = 5;
const progressed = Array.from({ length: FROM }, (_, i) => i + 1);

/** Offsets around every frame boundary of a countdown's stream, and inside each frame. */
async function offsetsEverywhere(version: '2025-11-25' | '2025-06-18'): Promise<number[]> {
  const ends = await countdownFrameEnds(version, FROM);
  const offsets = new Set([0, 1]);
  let start = 0;
  for (const end of ends) {
    for (const at of [Math.floor((start + end) / 2), end - 1, end, end + 1]) offsets.add(at);
    start = end;
  }
  return [...offsets].filter((at) => at <= ends.at(-1)!);
}

describe('ForkSafeTransport with the official Client', () => {
  it('is a Transport the Client connects with', async () => {
    const transport: Transport = new ForkSafeTransport('http://localhost/mcp', { fetch: faultyFetch() });
    expect(transport.sessionId).toBeUndefined();
    const { client, transport: connected, modes } = await connect(faultyFetch());
    expect(connected.sessionId).toMatch(/.+/);
    expect(connected.mode).toBe('fork-safe');
    expect(modes).toEqual(['fork-safe']);
    expect(Number.isSafeInteger(connected.epoch) && connected.epoch! >= 1).toBe(true); // drawn at random: core/event-id.ts
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('countdown');
    await client.close();
  });

  it.each(['2025-11-25', '2025-06-18'] as const)(
    '%s: a countdown whose POST is cut at any offset still gets [1..5] and its result',
    async (version) => {
      const offsets = await offsetsEverywhere(version);
      const fetch = faultyFetch(
        firstToolCallPosts(),
        offsets.map((at, i) => ({ at, how: i % 2 === 0 ? 'error' : 'close' })),
      );
      const { client, errors } = await connect(fetch, { version });
      for (const at of offsets) {
        const outcome = await countdown(client, FROM, 20);
        expect({ at, ...outcome }).toEqual({ at, progress: progressed, result: liftoff(FROM) });
      }
      // Each call was resumed from its cursor, or re-sent and refused with its start cursor.
      const resumes = fetch.log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null);
      expect(resumes.length).toBeGreaterThanOrEqual(offsets.length - 1);
      expect(fetch.log.filter((entry) => entry.rpc === 'tools/call' && entry.status === 200)).toHaveLength(offsets.length);
      expect(errors.filter((error) => error.name !== 'ForkSafeTransportError')).toEqual([]);
      await client.close();
    },
    60_000,
  );

  it.each(['2025-11-25', '2025-06-18'] as const)(
    '%s: a countdown with every connection cut, resumes included, even before their first event',
    async (version) => {
      const ends = await countdownFrameEnds(version, FROM);
      const [first, second] = [ends[0]!, ends[1]!];
      const cuts: Cut[] = [
        { at: 0, how: 'drop' }, // the POST reached the server; its answer never came
        { at: 0 }, // the re-sent POST's 409 is cut too: sent again
        { at: 10_000 }, // (the third POST's 409 arrives whole)
        { at: 0, how: 'close' }, // the resume from the start cursor dies before its first event
        { at: 3 }, // …and mid-way into it
        { at: first }, // one frame (the restated cursor, or the first event)
        { at: second + 7 },
        { at: 0 },
        { at: first + 1, how: 'close' },
        { at: second },
        { at: 0, how: 'close' },
        { at: 1 },
        { at: second - 1 },
      ];
      const fetch = faultyFetch(toolCallStreams, cuts);
      const { client, transport } = await connect(fetch, { version });
      const outcome = await countdown(client, FROM, 20);
      expect(outcome).toEqual({ progress: progressed, result: liftoff(FROM) });
      const calls = fetch.log.filter((entry) => entry.rpc === 'tools/call');
      expect(calls.map((entry) => entry.status)).toEqual([200, 409, 409]);
      const resumes = fetch.log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null);
      expect(resumes[0]!.lastEventId).toMatch(new RegExp(`^${transport.epoch}-\\d+-0$`)); // the duplicate_request_id's cursor
      // Every connection of the call but its last was cut, however many the stream needed.
      expect(fetch.log.filter((entry) => entry.cut !== undefined).length).toBeGreaterThanOrEqual(8);
      expect(resumes.slice(0, -1).every((entry) => entry.cut !== undefined && entry.status === 200)).toBe(true);
      expect(new Set(resumes.map((entry) => entry.streamId))).toEqual(new Set([calls[0]!.streamId]));
      await client.close();
    },
    30_000,
  );

  it.each<{ name: string; cut: Cut }>([
    { name: 'reset before its first byte', cut: { at: 0 } },
    { name: 'ended before its first byte', cut: { at: 0, how: 'close' } },
    { name: 'lost with no answer at all', cut: { at: 0, how: 'drop' } },
    { name: 'cut mid-way into its first event', cut: { at: 5 } },
  ])('a tally whose POST is $name runs once: its result arrives, and the count shows one run', async ({ cut }) => {
    const fetch = faultyFetch(firstToolCallPosts(), [cut]);
    const { client, transport } = await connect(fetch);
    expect(await tally(client, 'once')).toBe('1');
    const posts = fetch.log.filter((entry) => entry.rpc === 'tools/call');
    // Its headers named the stream: resumed from the stream's start. No answer at all: re-sent,
    // refused as a duplicate naming that start. Either way the tool did not run again.
    expect(posts.map((entry) => entry.status)).toEqual(cut.how === 'drop' ? [200, 409] : [200]);
    expect(fetch.log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null).map((entry) => entry.lastEventId)).toEqual([
      `${transport.epoch}-${posts[0]!.streamId}-0`,
    ]);
    expect(await tally(client, 'once')).toBe('2');
    await client.close();
  });

  it('delivers the standalone stream’s notifications across cuts of its own connection', async () => {
    const standalone = (request: { method: string; rpc?: string }) => request.method === 'GET';
    const fetch = faultyFetch(standalone, [{ at: 40 }, { at: 0 }, { at: 150, how: 'close' }, { at: 300 }]);
    const { client } = await connect(fetch);
    const received: number[] = [];
    client.setNotificationHandler('notifications/message', (notification) => {
      received.push((notification.params.data as { n: number }).n);
    });
    await client.callTool({ name: 'broadcast', arguments: { count: 6, interval_ms: 30 } });
    await expect.poll(() => received, { timeout: 5_000 }).toEqual([1, 2, 3, 4, 5, 6]);
    expect(fetch.log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null).length).toBeGreaterThanOrEqual(3);
    await client.close();
  });

  it('resumes a standalone stream cut before its first event from its start: the same stream, nothing superseded', async () => {
    const fetch = faultyFetch((request) => request.method === 'GET' && request.lastEventId === null, [{ at: 0 }]);
    const { client, transport } = await connect(fetch);
    const received: number[] = [];
    client.setNotificationHandler('notifications/message', (notification) => {
      received.push((notification.params.data as { n: number }).n);
    });
    const gets = () => fetch.log.filter((entry) => entry.method === 'GET');
    await expect.poll(() => gets().length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
    const [opened, resumed] = gets();
    expect(resumed).toMatchObject({ lastEventId: `${transport.epoch}-${opened!.streamId}-0`, status: 200, streamId: opened!.streamId });
    await client.callTool({ name: 'broadcast', arguments: { count: 3, interval_ms: 20 } });
    await expect.poll(() => received, { timeout: 5_000 }).toEqual([1, 2, 3]);
    expect(gets().filter((entry) => entry.lastEventId === null)).toHaveLength(1);
    await client.close();
  });

  it('a standalone stream out of reconnect attempts is reported, then resumed where it was at the server’s next answer', async () => {
    let down = false;
    // The standalone stream's first connection ends before its first event; every GET fails while the network is down.
    const fetch = faultyFetch(
      (request) => request.method === 'GET' && (down || request.lastEventId === null),
      [{ at: 0, how: 'close' }, ...Array.from({ length: 20 }, () => ({ at: 0, how: 'drop' as const }))],
    );
    const { client, errors, transport } = await connect(fetch, { reconnect: { maxAttempts: 2 } });
    down = true;
    await expect.poll(() => errors.some((error) => error instanceof ReconnectExhaustedError), { timeout: 5_000 }).toBe(true);
    const [opened] = fetch.log.filter((entry) => entry.method === 'GET');
    const gaveUp = errors.find((error) => error instanceof ReconnectExhaustedError) as ReconnectExhaustedError;
    expect(gaveUp.cursor).toBe(`${transport.epoch}-${opened!.streamId}-0`);
    down = false;
    const received: number[] = [];
    client.setNotificationHandler('notifications/message', (notification) => {
      received.push((notification.params.data as { n: number }).n);
    });
    // The call's answer is the server's next: the stream is resumed from its cursor, and replays
    // what was sent on it meanwhile.
    await client.callTool({ name: 'broadcast', arguments: { count: 3, interval_ms: 20 } });
    await expect.poll(() => received, { timeout: 5_000 }).toEqual([1, 2, 3]);
    const resumed = fetch.log.filter((entry) => entry.method === 'GET' && entry.cut === undefined);
    expect(resumed[0]).toMatchObject({ lastEventId: gaveUp.cursor, status: 200, streamId: opened!.streamId });
    await client.close();
  });

  it('waits the server’s retry: (1000 ms here) before resuming, then backs off from it', async () => {
    const ends = await countdownFrameEnds('2025-11-25', FROM);
    const fetch = faultyFetch(toolCallStreams, [{ at: ends[1]! }, { at: 0 }]);
    const { client } = await connect(fetch, { reconnect: { maxDelayMs: 30_000, factor: 1.5 } });
    expect(await countdown(client, FROM, 0)).toEqual({ progress: progressed, result: liftoff(FROM) });
    const [post, first, second] = fetch.log.filter((entry) => entry.rpc === 'tools/call' || entry.lastEventId !== null);
    expect(first!.time - post!.time).toBeGreaterThanOrEqual(1_000); // retry: 1000 from the priming event
    expect(second!.time - first!.time).toBeGreaterThanOrEqual(1_500); // no progress: 1.5 times longer
    await client.close();
  });

  it('a resume the server kept open a while and then ended, with nothing new, is not a failed attempt', async () => {
    // The call's POST ends after its priming event; the first resume is held open past
    // STEADY_CONNECTION_MS with nothing after the restated cursor (a connection age, SEP-1699),
    // then ended; one attempt is allowed without progress.
    let resumes = 0;
    const heldOpen = (response: Response, ms: number) => {
      const reader = response.body!.getReader();
      return new Response(
        new ReadableStream<Uint8Array>({
          async start(controller) {
            const first = await reader.read();
            if (!first.done) controller.enqueue(first.value);
            setTimeout(() => {
              void reader.cancel();
              controller.close();
            }, ms);
          },
        }),
        { status: response.status, headers: response.headers },
      );
    };
    const fetch = faultyFetch(undefined, [], {
      response(response, request) {
        const call = request.method === 'POST' && response.headers.get('Mcp-Stream-Id') !== '1' && response.body !== null;
        if (call && response.headers.get('Content-Type')?.startsWith('text/event-stream')) return heldOpen(response, 0);
        if (request.headers.get('Last-Event-ID') !== null && resumes++ === 0) return heldOpen(response, STEADY_CONNECTION_MS + 200);
        return response;
      },
    });
    const { client, errors } = await connect(fetch, { standaloneStream: false, reconnect: { maxAttempts: 1 } });
    const outcome = await countdown(client, 1, 2 * STEADY_CONNECTION_MS);
    expect(outcome).toEqual({ progress: [1], result: liftoff(1) });
    expect(resumes).toBe(2);
    expect(errors).toEqual([]);
    await client.close();
  });

  it('waits what a refused resume’s Retry-After asks, when that is longer than its backoff', async () => {
    const ends = await countdownFrameEnds('2025-11-25', FROM);
    let refused = 0;
    const fetch = faultyFetch(toolCallStreams, [{ at: ends[1]! }], {
      response(response, request) {
        if (request.headers.get('Last-Event-ID') === null || refused++ > 0) return response;
        void response.body?.cancel();
        return new Response('busy', { status: 503, headers: { 'Retry-After': '2' } });
      },
    });
    const { client } = await connect(fetch, { reconnect: { maxDelayMs: 30_000, factor: 1.5 } });
    expect(await countdown(client, FROM, 0)).toEqual({ progress: progressed, result: liftoff(FROM) });
    const [, first, second] = fetch.log.filter((entry) => entry.rpc === 'tools/call' || entry.lastEventId !== null);
    expect(first!.status).toBe(503);
    // Its backoff would have been 1.5 s (the server's retry: 1000, once more without progress).
    expect(second!.time - first!.time).toBeGreaterThanOrEqual(1_950);
    await client.close();
  });

  it.each([
    { name: 'before its first byte', frames: 0 },
    { name: 'after its first event', frames: 2 },
  ])(
    'a countdown whose POST goes silent $name, with no close or reset, is resumed after idleTimeoutMs: [1..5] and its result',
    async ({ frames }) => {
      const ends = await countdownFrameEnds('2025-11-25', FROM);
      const at = frames === 0 ? 0 : ends[frames - 1]!;
      const fetch = faultyFetch(firstToolCallPosts(), [{ at, how: 'stall' }]);
      const { client, transport } = await connect(fetch, { idleTimeoutMs: 300 });
      expect(await countdown(client, FROM, 20)).toEqual({ progress: progressed, result: liftoff(FROM) });
      const post = fetch.log.find((entry) => entry.rpc === 'tools/call')!;
      expect(post.cut).toEqual({ at, how: 'stall' });
      // (The standalone stream, quiet too, is resumed every 300 ms meanwhile.)
      const resumes = fetch.log.filter(
        (entry) => entry.method === 'GET' && entry.lastEventId?.startsWith(`${transport.epoch}-${post.streamId}-`),
      );
      // From the stream's start when nothing came, else from the last event received: never re-sent.
      expect(resumes.map((entry) => entry.lastEventId)).toEqual([`${transport.epoch}-${post.streamId}-${frames === 0 ? 0 : 1}`]);
      expect(fetch.log.filter((entry) => entry.rpc === 'tools/call')).toHaveLength(1);
      await client.close();
    },
  );

  it('a resume that goes down a dead connection (no answer at all) is abandoned after idleTimeoutMs and asked again', async () => {
    const ends = await countdownFrameEnds('2025-11-25', FROM);
    // The POST is cut after its first event; the first resume is never answered.
    const fetch = faultyFetch(toolCallStreams, [{ at: ends[1]! }, { at: 0, how: 'unanswered' }]);
    const { client, transport } = await connect(fetch, { idleTimeoutMs: 300, standaloneStream: false });
    expect(await countdown(client, FROM, 20)).toEqual({ progress: progressed, result: liftoff(FROM) });
    const resumes = fetch.log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null);
    const post = fetch.log.find((entry) => entry.rpc === 'tools/call')!;
    // Both from the first event: the unanswered one carried nothing.
    expect(resumes.map((entry) => [entry.lastEventId, entry.status])).toEqual([
      [`${transport.epoch}-${post.streamId}-1`, 0],
      [`${transport.epoch}-${post.streamId}-1`, 200],
    ]);
    await client.close();
  });

  it('a notification (answered at once, 202) that goes down a dead connection fails after idleTimeoutMs instead of waiting forever', async () => {
    const fetch = faultyFetch((request) => request.rpc === 'notifications/cancelled', [{ at: 0, how: 'unanswered' }]);
    const { client } = await connect(fetch, { idleTimeoutMs: 300, standaloneStream: false });
    const cancel = () => client.notification({ method: 'notifications/cancelled', params: { requestId: 'never-sent' } });
    const outcome = await settle(cancel(), 5_000);
    expect(outcome).not.toBe('hung');
    expect((outcome as { error?: unknown }).error).toBeInstanceOf(IdleConnectionError);
    await cancel(); // the next one goes through
    expect(fetch.log.filter((entry) => entry.rpc === 'notifications/cancelled').map((entry) => entry.status)).toEqual([0, 202]);
    await client.close();
  });

  it('idleTimeoutMs 0: a POST gone silent is waited on (here, until the bounded wait gives up)', async () => {
    const ends = await countdownFrameEnds('2025-11-25', FROM);
    const fetch = faultyFetch(firstToolCallPosts(), [{ at: ends[1]!, how: 'stall' }]);
    const { client } = await connect(fetch, { idleTimeoutMs: 0 });
    expect(await settle(countdown(client, FROM, 20), 1_500)).toBe('hung');
    expect(fetch.log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null)).toEqual([]); // the standalone stream's neither
    await client.close();
  });

  it('gives up with ReconnectExhaustedError when resumes keep dying without progress', async () => {
    const ends = await countdownFrameEnds('2025-11-25', FROM);
    const cuts: Cut[] = [{ at: ends[1]! }, ...Array.from({ length: 20 }, () => ({ at: 0 }))];
    const fetch = faultyFetch(toolCallStreams, cuts);
    const { client, transport } = await connect(fetch, { reconnect: { maxAttempts: 3 } });
    const outcome = await countdown(client, FROM, 20);
    expect(outcome.progress).toEqual([1]);
    expect(outcome.error).toBeInstanceOf(ReconnectExhaustedError);
    expect(outcome.error).toMatchObject({ attempts: 3, cursor: expect.stringMatching(new RegExp(`^${transport.epoch}-\\d+-1$`)) });
    expect(fetch.log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null)).toHaveLength(3);
    await client.close();
  });
});
