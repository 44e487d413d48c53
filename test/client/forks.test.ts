/**
 * A resume answered with anything but the exact continuation of the cursor — another stream,
 * another epoch, a gap, a rewind, a stream not flagged as resumed — fails the call with a typed
 * error, and nothing of that answer reaches the Client. So do the server's own refusals.
 */
import { describe, expect, it } from 'vitest';
import { ForkDetectedError, StreamRefusedError } from '../../src/client/index.ts';
import { connect, countdown, countdownFrameEnds, faultyFetch, firstToolCallPosts, liftoff, type Tamper } from './faults.ts';

const FROM = 5;

/** The cursor a resume asks for. */
const cursorOf = (request: Request) => {
  const [epoch, stream, seq] = request.headers.get('Last-Event-ID')!.split('-').map(Number) as [number, number, number];
  return { epoch, stream, seq };
};
const isResume = (request: Request) => request.method === 'GET' && request.headers.has('Last-Event-ID');

/** The resume's answer with its headers changed. */
const withHeaders = (change: (headers: Headers, request: Request) => void): Tamper => ({
  response(response, request) {
    if (!isResume(request)) return response;
    const headers = new Headers(response.headers);
    change(headers, request);
    return new Response(response.body, { status: response.status, headers });
  },
});

/** The resume's answer with its body replaced by events the server never sent. */
const withBody = (forge: (cursor: ReturnType<typeof cursorOf>) => string): Tamper => ({
  async response(response, request) {
    if (!isResume(request) || !response.ok) return response;
    await response.body?.cancel();
    return new Response(forge(cursorOf(request)), { status: 200, headers: response.headers });
  },
});

/** The resume sent with another cursor than the client asked for. */
const withCursor = (rewrite: (cursor: ReturnType<typeof cursorOf>) => string): Tamper => ({
  request(request) {
    if (!isResume(request)) return request;
    const headers = new Headers(request.headers);
    headers.set('Last-Event-ID', rewrite(cursorOf(request)));
    return new Request(request, { headers });
  },
});

// A progress notification no server sent: if it were merged, the caller would see 99.
const forged = (token = 1) =>
  JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 99 } });

describe('a resume that does not continue the cursor', () => {
  it.each<{ name: string; tamper: Tamper; reason: string }>([
    {
      name: 'a new stream where a continuation was asked for (Mcp-Stream-Resumed: false)',
      tamper: withHeaders((headers) => headers.set('Mcp-Stream-Resumed', 'false')),
      reason: 'not_resumed',
    },
    {
      name: 'no Mcp-Stream-Resumed at all',
      tamper: withHeaders((headers) => headers.delete('Mcp-Stream-Resumed')),
      reason: 'not_resumed',
    },
    {
      name: 'another stream’s id in Mcp-Stream-Id',
      tamper: withHeaders((headers, request) => headers.set('Mcp-Stream-Id', String(cursorOf(request).stream + 1))),
      reason: 'stream_mismatch',
    },
    {
      name: 'events that skip one',
      tamper: withBody(
        ({ epoch, stream, seq }) => `id: ${epoch}-${stream}-${seq}\ndata: \n\nid: ${epoch}-${stream}-${seq + 2}\ndata: ${forged()}\n\n`,
      ),
      reason: 'gap',
    },
    {
      name: 'the same stream in another epoch',
      tamper: withBody(({ epoch, stream, seq }) => `id: ${epoch + 1}-${stream}-${seq + 1}\ndata: ${forged()}\n\n`),
      reason: 'other_stream',
    },
    {
      name: 'the cursor restated with a message (a replay of what was delivered)',
      tamper: withBody(({ epoch, stream, seq }) => `id: ${epoch}-${stream}-${seq}\ndata: ${forged()}\n\n`),
      reason: 'rewind',
    },
    {
      name: 'a message without an id',
      tamper: withBody(({ epoch, stream, seq }) => `id: ${epoch}-${stream}-${seq}\ndata: \n\ndata: ${forged()}\n\n`),
      reason: 'missing_id',
    },
    {
      name: 'a JSON answer, whose messages carry no event ids to check',
      tamper: {
        async response(response, request) {
          if (!isResume(request) || !response.ok) return response;
          await response.body?.cancel();
          const headers = new Headers(response.headers);
          headers.set('Content-Type', 'application/json');
          return new Response(forged(), { status: 200, headers });
        },
      },
      reason: 'missing_id',
    },
    {
      name: 'an id of another server’s format',
      tamper: withBody(() => `id: abc\ndata: ${forged()}\n\n`),
      reason: 'malformed_id',
    },
  ])('fails with ForkDetectedError ($reason): $name', async ({ tamper, reason }) => {
    const ends = await countdownFrameEnds('2025-11-25', FROM);
    // Cut after the priming event, the first progress event and part of the second.
    const fetch = faultyFetch(firstToolCallPosts(), [{ at: ends[1]! + 10 }], tamper);
    const { client, errors, transport } = await connect(fetch);
    const outcome = await countdown(client, FROM, 30);
    expect(outcome.progress).toEqual([1]); // what came before the cut; nothing of the forged answer
    expect(outcome.error).toBeInstanceOf(ForkDetectedError);
    expect(outcome.error).toMatchObject({ reason, cursor: expect.stringMatching(new RegExp(`^${transport.epoch}-\\d+-1$`)) });
    expect(errors).toContain(outcome.error); // onerror is told too
    // The transport is still usable: a call that is not cut is not affected.
    expect(await countdown(client, 2, 0)).toEqual({ progress: [1, 2], result: liftoff(2) });
    await client.close();
  });

  it('fails with ForkDetectedError when the server replays another stream of the session', async () => {
    const ends = await countdownFrameEnds('2025-11-25', FROM);
    let earlier: string | undefined;
    const fetch = faultyFetch(
      firstToolCallPosts(),
      [{ at: 100_000 }, { at: ends[1]! + 10 }], // the first call is not cut; the second is
      withCursor(({ epoch }) => `${epoch}-${earlier}-0`), // …and resumed on the first call's stream
    );
    const { client } = await connect(fetch);
    expect(await countdown(client, 3, 0)).toEqual({ progress: [1, 2, 3], result: liftoff(3) });
    earlier = fetch.log.find((entry) => entry.rpc === 'tools/call')!.streamId!;
    const outcome = await countdown(client, FROM, 30);
    // The server did resume (200, Mcp-Stream-Resumed: true): the client saw the stream was not its own.
    const resume = fetch.log.find((entry) => entry.method === 'GET' && entry.lastEventId !== null)!;
    expect(resume).toMatchObject({ status: 200, streamId: earlier });
    expect(outcome.progress).toEqual([1]);
    expect(outcome.error).toBeInstanceOf(ForkDetectedError);
    expect(outcome.error).toMatchObject({ reason: 'stream_mismatch' });
    await client.close();
  });

  it.each<{ name: string; rewrite: (cursor: ReturnType<typeof cursorOf>) => string; status: number; reason: string }>([
    {
      name: 'a cursor of another epoch',
      rewrite: ({ epoch, stream, seq }) => `${epoch + 1}-${stream}-${seq}`,
      status: 409,
      reason: 'unknown_stream',
    },
    {
      name: 'a cursor the stream never reached',
      rewrite: ({ epoch, stream }) => `${epoch}-${stream}-999`,
      status: 409,
      reason: 'cursor_ahead',
    },
    {
      name: 'a cursor that is no event id',
      rewrite: ({ epoch, stream, seq }) => `0${epoch}-${stream}-${seq}`,
      status: 400,
      reason: 'malformed_cursor',
    },
  ])('fails with StreamRefusedError when the server refuses $name ($reason)', async ({ rewrite, status, reason }) => {
    const ends = await countdownFrameEnds('2025-11-25', FROM);
    const fetch = faultyFetch(firstToolCallPosts(), [{ at: ends[1]! + 10 }], withCursor(rewrite));
    const { client } = await connect(fetch);
    const outcome = await countdown(client, FROM, 30);
    expect(outcome.progress).toEqual([1]);
    expect(outcome.error).toBeInstanceOf(StreamRefusedError);
    expect(outcome.error).toMatchObject({ status, reason });
    await client.close();
  });
});
