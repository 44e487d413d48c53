/**
 * The Worker's side of the relay (edge/sse-relay.ts), against a first answer the test holds
 * open (the bridge) and a real WebSocketPair whose other end plays the session object: what the
 * client receives, what the object is told, and who ends what.
 */
import { describe, expect, it } from 'vitest';
import { relayResponse, relayStream, type RelayOptions } from '../../src/edge/sse-relay.ts';
import { INTERNAL_HEADERS } from '../../src/core/wire.ts';
import { ENDED, SseReader, TIMED_OUT } from '../support/sse-reader.ts';

const encoder = new TextEncoder();
const frame = (seq: number, data = 'x'.repeat(90)) => `id: 1-1-${seq}\ndata: ${data}\n\n`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A first answer the test controls, as the object's bridge stream; `cancelled` says whether the Worker cancelled it. */
function bridgeStream(head: string) {
  let bridge!: ReadableStreamDefaultController<Uint8Array>;
  const state = { cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    start: (controller) => {
      bridge = controller;
      if (head !== '') controller.enqueue(encoder.encode(head));
    },
    cancel: () => {
      state.cancelled = true;
    },
  });
  return { stream, bridge, state };
}

/**
 * A relayed connection whose object end the test holds. Opening the socket ends the bridge,
 * as the object's bind does; what the Worker sends the object is recorded.
 */
function relayPair(head = '', options: Partial<RelayOptions> & { noSocket?: boolean } = {}) {
  const { stream, bridge } = bridgeStream(head);
  const pair = new WebSocketPair();
  const object = pair[1];
  object.accept();
  const received: string[] = [];
  let closed: { code: number; reason: string } | undefined;
  let opened = 0;
  object.addEventListener('message', ({ data }) => {
    received.push(String(data));
  });
  object.addEventListener('close', ({ code, reason }) => {
    closed = { code, reason };
  });
  const body = relayStream(
    stream,
    async () => {
      opened++;
      bridge.close();
      return options.noSocket ? null : pair[0];
    },
    { heartbeatMs: 0, maxAgeMs: 0, bufferBytes: 1024 * 1024, bridgeMs: 0, ...options },
  );
  return { object, body, bridge, received, closed: () => closed, opened: () => opened };
}

describe('the relayed SSE response', () => {
  it('is the first answer, then every message of the socket, byte for byte, in order', async () => {
    const { object, body } = relayPair(frame(0, ''));
    const reader = new SseReader(new Response(body));
    object.send(encoder.encode(frame(1) + frame(2)));
    object.send(encoder.encode(frame(3)));
    object.close(1000, 'stream-finished');
    await reader.all();
    expect(reader.raw).toBe(frame(0, '') + frame(1) + frame(2) + frame(3));
  });

  it('ends with the first answer when the stream ends on it, and opens no socket', async () => {
    const { body, bridge, opened } = relayPair(frame(0, ''), { bridgeMs: 1_000 });
    bridge.enqueue(encoder.encode(frame(1)));
    bridge.close();
    expect((await new SseReader(new Response(body)).all()).map((e) => e.id)).toEqual(['1-1-0', '1-1-1']);
    expect(opened()).toBe(0);
  });

  it('ends after the first answer when the object has no connection for the socket', async () => {
    const { body } = relayPair(frame(0, ''), { noSocket: true });
    expect((await new SseReader(new Response(body)).all()).map((e) => e.id)).toEqual(['1-1-0']);
  });

  it('acknowledges the first answer once it is taken, then the socket bytes taken, every quarter of the buffer', async () => {
    const { object, body, received } = relayPair(frame(0, ''), { bufferBytes: 4_096 });
    const reader = new SseReader(new Response(body));
    await reader.take(1);
    for (let seq = 1; seq <= 40; seq++) object.send(encoder.encode(frame(seq))); // ~110 bytes each: ~4.4 KB
    await reader.take(40);
    await sleep(20);
    expect(received.every((m) => /^ack \d+$/.test(m))).toBe(true);
    const acks = received.map((m) => Number(m.split(' ')[1]));
    expect(acks[0], 'the first ack: the first answer is taken').toBe(0);
    expect(acks.length).toBeGreaterThanOrEqual(4);
    expect(
      acks.every((n, i) => i === 0 || n - acks[i - 1]! >= 1_024),
      'at least a quarter apart',
    ).toBe(true);
    const sent = Array.from({ length: 40 }, (_, i) => frame(i + 1).length).reduce((a, b) => a + b);
    expect(acks.at(-1)).toBeLessThanOrEqual(sent);
    await reader.cancel();
  });

  it('acknowledges nothing its client has not taken', async () => {
    const { object, body, received } = relayPair(frame(0, ''), { bufferBytes: 1_024 });
    for (let seq = 1; seq <= 20; seq++) object.send(encoder.encode(frame(seq)));
    await sleep(50);
    expect(received, 'not even the first answer').toEqual([]);
    await body.cancel();
  });

  it('sends heartbeats while its client has nothing waiting, none while it has', async () => {
    const idle = relayPair('', { heartbeatMs: 10 });
    const reader = new SseReader(new Response(idle.body));
    const reading = reader.all(); // the client reads as bytes come
    await sleep(60);
    idle.object.close(1000, 'stream-finished');
    await reading;
    expect(reader.raw.match(/: keepalive\n\n/g)?.length).toBeGreaterThanOrEqual(2);

    const busy = relayPair(frame(0, ''), { heartbeatMs: 10 });
    await sleep(60); // the first answer is never read: the client has bytes waiting throughout
    busy.object.close(1000, 'stream-finished');
    const unread = new SseReader(new Response(busy.body));
    await unread.all();
    expect(unread.raw).toBe(frame(0, ''));
  });

  it('ends the connection at its maximum age and tells the object', async () => {
    const { body, closed } = relayPair(frame(0, ''), { maxAgeMs: 50 });
    const reader = new SseReader(new Response(body));
    expect((await reader.all(2_000)).map((e) => e.id)).toEqual(['1-1-0']);
    await sleep(20);
    expect(closed()).toMatchObject({ code: 1000, reason: 'connection-age' });
  });

  it('tells the object when its client goes away: at once by the request signal', async () => {
    const client = new AbortController();
    const { body, closed } = relayPair(frame(0, ''), { clientSignal: client.signal });
    const reader = new SseReader(new Response(body));
    await reader.take(1);
    await sleep(20); // the socket carries the connection now
    client.abort();
    await sleep(20);
    expect(closed()).toMatchObject({ code: 1000, reason: 'client-gone' });
    await reader.cancel();
  });

  it('tells the object when its client goes away: without a signal, at the next write', async () => {
    const { object, body, closed } = relayPair(frame(0, ''));
    const reader = new SseReader(new Response(body));
    await reader.take(1);
    await sleep(20);
    await reader.cancel();
    await sleep(20);
    expect(closed(), 'a quiet body does not tell').toBeUndefined();
    object.send(encoder.encode(frame(1)));
    await sleep(20);
    expect(closed()).toMatchObject({ code: 1000, reason: 'client-gone' });
  });

  it('stays open while the object is quiet', async () => {
    const { body } = relayPair(frame(0, ''));
    const reader = new SseReader(new Response(body));
    await reader.take(1);
    expect(await reader.next(100)).toBe(TIMED_OUT);
    await reader.cancel();
  });

  it('an object that closes at once still delivers what it sent first', async () => {
    const { object, body } = relayPair();
    object.send(encoder.encode(frame(1)));
    object.close(1000, 'connection-closed');
    const reader = new SseReader(new Response(body));
    expect((await reader.all()).map((e) => e.id)).toEqual(['1-1-1']);
    expect(await reader.next(50)).toBe(ENDED);
  });
});

describe("the connection's slot (edge/stream-shares.ts)", () => {
  /** A relayed connection counting its releases. */
  const counted = (head: string, options: Partial<RelayOptions> & { noSocket?: boolean } = {}) => {
    const count = { released: 0 };
    return { count, ...relayPair(head, { ...options, release: () => count.released++ }) };
  };

  it('is held while the connection is open, and given back once when the object ends it', async () => {
    const { object, body, count } = counted(frame(0, ''));
    const reader = new SseReader(new Response(body));
    await reader.take(1);
    await sleep(20);
    expect(count.released, 'open').toBe(0);
    object.close(1000, 'stream-finished');
    await reader.all();
    await sleep(20);
    expect(count.released).toBe(1);
  });

  it.each([
    {
      name: 'by the request signal',
      end: async (_relay: ReturnType<typeof counted>, reader: SseReader, client: AbortController) => {
        client.abort();
        await reader.cancel();
      },
    },
    {
      name: 'without a signal, at the next write',
      end: async (relay: ReturnType<typeof counted>, reader: SseReader) => {
        await reader.cancel();
        relay.object.send(encoder.encode(frame(1)));
      },
    },
  ])('is given back once when its client leaves, $name', async ({ end }) => {
    const client = new AbortController();
    const relay = counted(frame(0, ''), { clientSignal: client.signal });
    const reader = new SseReader(new Response(relay.body));
    await reader.take(1);
    await sleep(20);
    expect(relay.count.released).toBe(0);
    await end(relay, reader, client);
    await sleep(20);
    client.abort(); // a later signal changes nothing
    relay.object.close(1000, 'late');
    await sleep(20);
    expect(relay.count.released).toBe(1);
  });

  it.each([
    { name: 'the stream ends on the first answer', options: { bridgeMs: 1_000 }, endBridge: true },
    { name: 'the object has no connection for the socket', options: { noSocket: true }, endBridge: false },
    { name: 'the connection reaches its age', options: { maxAgeMs: 30 }, endBridge: false },
  ])('is given back once when $name', async ({ options, endBridge }) => {
    const { body, bridge, count } = counted(frame(0, ''), options);
    if (endBridge) bridge.close();
    await new SseReader(new Response(body)).all(2_000);
    await sleep(20);
    expect(count.released).toBe(1);
  });

  it('is given back at once for an answer that is not relayed', async () => {
    let released = 0;
    const first = new Response('{"jsonrpc":"2.0"}', { status: 404 });
    const response = await relayResponse(first, async () => new Response(null), {
      heartbeatMs: 0,
      maxAgeMs: 0,
      bufferBytes: 1024,
      release: () => released++,
    });
    expect([response === first, released]).toEqual([true, 1]);
  });
});

describe('relayResponse', () => {
  const options = { heartbeatMs: 0, maxAgeMs: 0, bufferBytes: 1024, bridgeMs: 0 };

  it('passes an answer that names no relay connection through untouched', async () => {
    const first = new Response('{"jsonrpc":"2.0"}', { status: 404, headers: { 'X-Kept': 'yes' } });
    const opened: string[] = [];
    const open = async (token: string) => {
      opened.push(token);
      return new Response(null);
    };
    expect(await relayResponse(first, open, options)).toBe(first);
    expect(opened).toEqual([]);
  });

  it.each([
    { name: 'a first answer that asks for it (the buffer is full)', now: true, openedBeforeBridge: true },
    { name: 'any other first answer', now: false, openedBeforeBridge: false },
  ])('opens the socket at once for $name, else after the bridge', async ({ now, openedBeforeBridge }) => {
    const pair = new WebSocketPair();
    pair[1].accept();
    const { stream, bridge } = bridgeStream(frame(0, ''));
    const headers: Record<string, string> = { [INTERNAL_HEADERS.relay]: 't' };
    if (now) headers[INTERNAL_HEADERS.relayNow] = '1';
    let opened = 0;
    const open = async () => {
      opened++;
      bridge.close();
      return new Response(null, { status: 101, webSocket: pair[0] });
    };
    // A bridge long enough that only the header can explain an open within it.
    const response = await relayResponse(new Response(stream, { headers }), open, { ...options, bridgeMs: 60_000 });
    expect(response.headers.get(INTERNAL_HEADERS.relayNow)).toBeNull();
    await sleep(20);
    expect(opened).toBe(openedBeforeBridge ? 1 : 0);
    await response.body!.cancel();
  });

  it('acknowledges in step with the object buffer when it is smaller than its own', async () => {
    const pair = new WebSocketPair();
    pair[1].accept();
    const acks: string[] = [];
    pair[1].addEventListener('message', ({ data }) => {
      acks.push(String(data));
    });
    const { stream, bridge } = bridgeStream(frame(0, ''));
    const first = new Response(stream, { headers: { [INTERNAL_HEADERS.relay]: 't', [INTERNAL_HEADERS.relayBuffer]: '1024' } });
    const open = async () => {
      bridge.close();
      return new Response(null, { status: 101, webSocket: pair[0] });
    };
    const response = await relayResponse(first, open, { ...options, bufferBytes: 1024 * 1024 });
    expect(response.headers.get(INTERNAL_HEADERS.relayBuffer)).toBeNull();
    const reader = new SseReader(response);
    await reader.take(1);
    for (let seq = 1; seq <= 10; seq++) pair[1].send(encoder.encode(frame(seq))); // ~1.1 KB
    await reader.take(10);
    await sleep(20);
    expect(acks.length, 'acks every 256 bytes, not every 256 KB').toBeGreaterThanOrEqual(3);
    await reader.cancel();
  });

  it('opens the named connection, and never shows the client the internal header', async () => {
    const pair = new WebSocketPair();
    pair[1].accept();
    const { stream, bridge } = bridgeStream(frame(0, ''));
    const opened: string[] = [];
    const first = new Response(stream, {
      headers: { 'Content-Type': 'text/event-stream', 'Mcp-Stream-Id': '7', [INTERNAL_HEADERS.relay]: 'token-1' },
    });
    const open = async (token: string) => {
      opened.push(token);
      bridge.close();
      return new Response(null, { status: 101, webSocket: pair[0] });
    };
    const response = await relayResponse(first, open, options);
    expect(response.headers.get(INTERNAL_HEADERS.relay)).toBeNull();
    expect(response.headers.get('Mcp-Stream-Id')).toBe('7');
    pair[1].send(encoder.encode(frame(1)));
    pair[1].close(1000, 'stream-finished');
    expect((await new SseReader(response).all()).map((e) => e.id)).toEqual(['1-1-0', '1-1-1']);
    expect(opened).toEqual(['token-1']);
  });
});
