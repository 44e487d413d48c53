/**
 * The isolate's listen, stream and event stream slots (edge/stream-shares.ts): the refusals a
 * principal is given past its share and past the isolate's total, event streams counted apart
 * from both, and a listen's slot given back exactly once however its stream ends — read to its
 * end (the server ended it: complete, revoked, its bus lost), failed, cancelled by its client,
 * or its client's signal aborted.
 */
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config.ts';
import { McpHttpError } from '../../src/core/errors.ts';
import { releasedAtEnd, requestIdOf, StreamShares } from '../../src/edge/stream-shares.ts';
import { revocableBody } from '../../src/stateless/endable-listen.ts';

const encoder = new TextEncoder();
const SSE = { 'Content-Type': 'text/event-stream' };

function thrown(fn: () => unknown): McpHttpError {
  try {
    fn();
  } catch (error) {
    if (error instanceof McpHttpError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}
const wire = (error: McpHttpError) => ({ status: error.status, code: error.code, message: error.message, data: error.data, id: error.id });

describe('StreamShares', () => {
  it("refuses a listen past its holder's share 429 too_many_listens, and past the isolate's total as the SDK does", () => {
    const shares = new StreamShares(readConfig({ MAX_LISTEN_STREAMS: '3', MAX_LISTENS_PER_PRINCIPAL: '2' }));
    shares.listen('a', 1);
    shares.listen('a', 2);
    const share = wire(thrown(() => shares.listen('a', 3)));
    shares.listen('b', 4);
    const total = wire(thrown(() => shares.listen('c', 'five')));
    expect({ share, total, held: [shares.heldBy('a'), shares.heldBy('b'), shares.heldBy('c')] }).toEqual({
      share: {
        status: 429,
        code: -32000,
        message: expect.stringContaining('2 listen streams'),
        data: { reason: 'too_many_listens', limit: 2 },
        id: 3,
      },
      total: { status: 200, code: -32603, message: 'Subscription limit reached', data: undefined, id: 'five' },
      held: [
        [2, 0, 0],
        [1, 0, 0],
        [0, 0, 0],
      ],
    });
  });

  it("refuses a stream past its holder's share 429 too_many_streams; tryStream says so without refusing", () => {
    const shares = new StreamShares(readConfig({ MAX_STREAMS_PER_PRINCIPAL: '1' }));
    const release = shares.stream('a', null);
    expect(shares.tryStream('a')).toBeUndefined();
    expect(wire(thrown(() => shares.stream('a', 9)))).toEqual({
      status: 429,
      code: -32000,
      message: expect.stringContaining('1 open streams'),
      data: { reason: 'too_many_streams', limit: 1 },
      id: 9,
    });
    expect(shares.tryStream('b')).toBeTypeOf('function');
    release();
    expect(shares.tryStream('a')).toBeTypeOf('function');
  });

  it('bounds nothing per holder where the share is 0', () => {
    const shares = new StreamShares(
      readConfig({ MAX_STREAMS_PER_PRINCIPAL: '0', MAX_LISTEN_STREAMS: '4', MAX_LISTENS_PER_PRINCIPAL: '0' }),
    );
    for (let i = 0; i < 500; i++) shares.stream('a', null);
    for (let i = 0; i < 4; i++) shares.listen('a', i);
    expect(thrown(() => shares.listen('a', 4)).code).toBe(-32603);
    expect(shares.heldBy('a')).toEqual([4, 500, 0]);
  });

  it('event streams are a pool of their own ("Server SDKs MUST exempt events/stream from any general cap on concurrent requests"): each holder\'s share, none counted as a stream or a listen', () => {
    const shares = new StreamShares(
      readConfig({
        MAX_EVENT_STREAMS_PER_PRINCIPAL: '2',
        MAX_STREAMS_PER_PRINCIPAL: '1',
        MAX_LISTEN_STREAMS: '1',
        MAX_LISTENS_PER_PRINCIPAL: '1',
      }),
    );
    const first = shares.eventStream('a');
    expect(first).toBeTypeOf('function');
    expect(shares.eventStream('a')).toBeTypeOf('function');
    expect(shares.eventStream('a'), 'at its share').toBeUndefined();
    expect(shares.eventStream('b'), "another holder's share").toBeTypeOf('function');
    expect(shares.eventStreamsPerPrincipal).toBe(2);
    // The general caps are untouched by the event streams held.
    expect(shares.tryStream('a')).toBeTypeOf('function');
    shares.listen('a', 1);
    expect(shares.heldBy('a')).toEqual([1, 1, 2]);
    first!();
    expect(shares.heldBy('a')).toEqual([1, 1, 1]);
    expect(shares.eventStream('a'), 'the slot given back').toBeTypeOf('function');
  });

  it('bounds no event streams per holder where MAX_EVENT_STREAMS_PER_PRINCIPAL is 0', () => {
    const shares = new StreamShares(readConfig({ MAX_EVENT_STREAMS_PER_PRINCIPAL: '0' }));
    for (let i = 0; i < 100; i++) expect(shares.eventStream('a')).toBeTypeOf('function');
    expect(shares.heldBy('a')).toEqual([0, 0, 100]);
  });

  it.each([
    [{ id: 7 }, 7],
    [{ id: 'x' }, 'x'],
    [{ id: null }, null],
    [{}, null],
    [[{ id: 1 }], null],
    [undefined, null],
    ['text', null],
  ])('reads the id of %j as %j', (message, id) => {
    expect(requestIdOf(message)).toBe(id);
  });
});

/** An SSE body the test ends, and the slot counter of its response. */
function held(headers: Record<string, string> = SSE) {
  let upstream!: ReadableStreamDefaultController<Uint8Array>;
  const source = { cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    start: (controller) => {
      upstream = controller;
      controller.enqueue(encoder.encode('event: message\ndata: {}\n\n'));
    },
    cancel: () => {
      source.cancelled = true;
    },
  });
  const count = { released: 0 };
  const client = new AbortController();
  const response = releasedAtEnd(new Response(body, { headers }), () => count.released++, client.signal);
  return { upstream, source, count, client, response };
}

const drain = async (response: Response) => {
  const reader = response.body!.getReader();
  for (;;) if ((await reader.read()).done) return;
};

describe('releasedAtEnd', () => {
  it('holds the slot while the stream is open, passing its bytes through', async () => {
    const { count, response } = held();
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('event: message\ndata: {}\n\n');
    expect(count.released).toBe(0);
    await reader.cancel();
  });

  it.each([
    {
      name: 'the server ends it',
      end: async ({ upstream, response }: ReturnType<typeof held>) => {
        upstream.close();
        await drain(response);
      },
    },
    {
      name: 'it fails',
      end: async ({ upstream, response }: ReturnType<typeof held>) => {
        upstream.error(new Error('lost'));
        await drain(response).catch(() => undefined);
      },
    },
    {
      name: 'its client cancels it (and the SDK is told)',
      end: async ({ response, source }: ReturnType<typeof held>) => {
        await response.body!.cancel();
        expect(source.cancelled).toBe(true);
      },
    },
    {
      name: "its client's signal aborts",
      end: async ({ client }: ReturnType<typeof held>) => {
        client.abort();
      },
    },
  ])('gives the slot back once when $name, whatever follows', async ({ end }) => {
    const stream = held();
    await end(stream);
    // Every other ending after it: none counts again.
    stream.client.abort();
    await stream.response.body!.cancel().catch(() => undefined);
    expect(stream.count.released).toBe(1);
  });

  it('gives the slot back once when a revocation ends the stream (the endable wrapper closes it)', async () => {
    let upstream!: ReadableStreamDefaultController<Uint8Array>;
    const sdk = new ReadableStream<Uint8Array>({
      start: (controller) => {
        upstream = controller;
      },
    });
    const endable = revocableBody(sdk);
    let released = 0;
    const response = releasedAtEnd(new Response(endable.body, { headers: SSE }), () => released++);
    upstream.enqueue(encoder.encode('event: message\ndata: {}\n\n'));
    endable.end(encoder.encode('event: message\ndata: {"error":{}}\n\n'));
    await drain(response);
    expect(released).toBe(1);
  });

  it.each<{ name: string; headers: Record<string, string> }>([
    { name: 'a JSON answer (a refusal)', headers: { 'Content-Type': 'application/json' } },
    { name: 'an answer with no type', headers: {} },
  ])('gives the slot back at once for $name, and returns it untouched', ({ headers }) => {
    let released = 0;
    const answer = new Response('{}', { headers });
    expect(releasedAtEnd(answer, () => released++)).toBe(answer);
    expect(released).toBe(1);
  });
});
