/**
 * serveEndableListen (endable-listen.ts) over a `serve` whose stream the test writes: the
 * SDK's frames pass through unchanged, and a revocation or a bus lost for good ends the stream
 * with exactly one error frame for the listen request, never inside a frame, and cancels what
 * the SDK was writing — with tags or without (no registry: nothing to revoke by).
 */
import { describe, expect, it, vi } from 'vitest';
import { listenScope, type ListenOwner } from '../../src/stateless/event-bus.ts';
import { lastFrameEnd, revokedListenFrame, serveEndableListen, unreachableListenFrame } from '../../src/stateless/endable-listen.ts';
import { ENDED, SseReader, TIMED_OUT } from '../support/sse-reader.ts';

const TAG = '0123456789abcdef0123456789abcdef';
const TAGS = [TAG];
const encoder = new TextEncoder();
const frame = (method: string) => `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method })}\n\n`;

/** What the SDK would answer a listen request with: an event stream the test writes, and the owner its subscription saw. */
function sdkStream() {
  let writer!: ReadableStreamDefaultController<Uint8Array>;
  const cancelled = vi.fn();
  let owner: ListenOwner | undefined;
  const serve = async () => {
    owner = listenScope.getStore(); // where the SDK's bus.subscribe reads it
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        writer = controller;
      },
      cancel: cancelled,
    });
    return new Response(body, { headers: { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' } });
  };
  return {
    serve,
    write: (text: string) => writer.enqueue(encoder.encode(text)),
    end: () => writer.close(),
    cancelled,
    owner: () => {
      if (owner === undefined) throw new Error('served outside a listen scope');
      return owner;
    },
  };
}

describe('the revoked-listen frame', () => {
  it('is the error answer to the listen request, as one SSE message event', () => {
    expect(revokedListenFrame(7)).toBe(
      'event: message\ndata: {"jsonrpc":"2.0","id":7,"error":{"code":-32000,' +
        '"message":"Listen ended: the grant of the principal that opened it was revoked","data":{"reason":"grant_revoked"}}}\n\n',
    );
    expect(JSON.parse(revokedListenFrame('a"b').split('data: ')[1]!).id).toBe('a"b');
  });

  it('has a sibling for a bus that stayed unreachable: -32603, worth listening again', () => {
    expect(unreachableListenFrame(7)).toBe(
      'event: message\ndata: {"jsonrpc":"2.0","id":7,"error":{"code":-32603,' +
        '"message":"Listen ended: the server can no longer tell changes on this stream; listen again","data":{"reason":"bus_unreachable"}}}\n\n',
    );
  });
});

describe('lastFrameEnd', () => {
  it.each([
    ['nothing', '', 0],
    ['a line, no blank one', 'data: x\n', 0],
    ['an LF frame', 'data: x\n\n', 9],
    ['a CRLF frame', 'data: x\r\n\r\n', 11],
    ['a CR frame', 'data: x\r\r', 9],
    ['LF then CRLF', 'data: x\n\r\n', 10],
    ['one CRLF only', 'data: x\r\n', 0],
    ['two frames, then half a third', 'data: a\n\ndata: b\n\ndata: c', 18],
    ['a frame, then a line of the next', 'data: a\n\nid: 1\n', 9],
    ['a comment frame', ': keepalive\n\n', 13],
  ])('finds the end of the last complete frame in %s', (_name, text, end) => {
    expect(lastFrameEnd(encoder.encode(text))).toBe(end);
  });
});

describe('serveEndableListen', () => {
  it('passes the SDK’s frames on; revoked, it sends the error for the request, ends, and cancels the SDK’s stream', async () => {
    const sdk = sdkStream();
    const tags = [TAG, 'fedcba9876543210fedcba9876543210'];
    const response = await serveEndableListen(tags, 'listen-9', sdk.serve);
    expect(sdk.owner().tags).toEqual(tags);
    expect(response.status).toBe(200);
    expect(response.headers.get('Cache-Control')).toBe('no-cache');
    const reader = new SseReader(response);
    try {
      sdk.write(frame('notifications/subscriptions/acknowledged'));
      sdk.write(frame('notifications/tools/list_changed'));
      await reader.take(2);
      sdk.owner().revoked();
      const [end] = await reader.take(1);
      expect(end!.raw).toBe(revokedListenFrame('listen-9'));
      expect(await reader.next(500)).toBe(ENDED);
      expect(reader.raw).toBe(
        frame('notifications/subscriptions/acknowledged') + frame('notifications/tools/list_changed') + revokedListenFrame('listen-9'),
      );
      expect(sdk.cancelled).toHaveBeenCalledOnce();
      expect(() => sdk.owner().revoked(), 'a second revocation is a no-op').not.toThrow();
    } finally {
      await reader.cancel();
    }
  });

  it.each([
    ['a tag', TAGS],
    ['no tag (no registry: nothing a revocation could name)', []],
  ])('ends with the unreachable frame, once, when the bus could not be reached again: a listen with %s', async (_name, tags) => {
    const sdk = sdkStream();
    const reader = new SseReader(await serveEndableListen(tags, 'listen-4', sdk.serve));
    try {
      expect(sdk.owner().tags).toEqual(tags.length > 0 ? tags : undefined);
      sdk.write(frame('notifications/subscriptions/acknowledged'));
      await reader.take(1);
      sdk.owner().unreachable();
      sdk.owner().revoked(); // too late: the stream has ended
      expect(await reader.all()).toHaveLength(1);
      expect(reader.raw).toBe(frame('notifications/subscriptions/acknowledged') + unreachableListenFrame('listen-4'));
      expect(sdk.cancelled).toHaveBeenCalledOnce();
    } finally {
      await reader.cancel();
    }
  });

  it('never puts the error inside a frame: a frame the SDK had half written is dropped', async () => {
    const sdk = sdkStream();
    const reader = new SseReader(await serveEndableListen(TAGS, 3, sdk.serve));
    try {
      const half = frame('notifications/tools/list_changed').slice(0, 20);
      sdk.write(frame('notifications/subscriptions/acknowledged') + half);
      await reader.take(1);
      expect(await reader.next(100), 'the half frame is held back').toBe(TIMED_OUT);
      sdk.owner().revoked();
      expect(await reader.all()).toHaveLength(1);
      expect(reader.raw).toBe(frame('notifications/subscriptions/acknowledged') + revokedListenFrame(3));
    } finally {
      await reader.cancel();
    }
  });

  it('passes a frame written in pieces on once it is complete, byte for byte', async () => {
    const sdk = sdkStream();
    const reader = new SseReader(await serveEndableListen(TAGS, 3, sdk.serve));
    try {
      const whole = frame('notifications/prompts/list_changed');
      sdk.write(whole.slice(0, 10));
      sdk.write(whole.slice(10, -1));
      expect(await reader.next(100)).toBe(TIMED_OUT);
      sdk.write(whole.slice(-1));
      await reader.take(1);
      expect(reader.raw).toBe(whole);
    } finally {
      await reader.cancel();
    }
  });

  it('ends when the SDK’s stream ends, with everything it wrote, and a later revocation adds nothing', async () => {
    const sdk = sdkStream();
    const reader = new SseReader(await serveEndableListen(TAGS, 3, sdk.serve));
    try {
      sdk.write(frame('notifications/subscriptions/acknowledged'));
      sdk.write(': trailing');
      sdk.end();
      await reader.all();
      sdk.owner().revoked();
      expect(reader.raw).toBe(`${frame('notifications/subscriptions/acknowledged')}: trailing`);
    } finally {
      await reader.cancel();
    }
  });

  it('cancels the SDK’s stream when the client leaves', async () => {
    const sdk = sdkStream();
    const reader = new SseReader(await serveEndableListen(TAGS, 3, sdk.serve));
    sdk.write(frame('notifications/subscriptions/acknowledged'));
    await reader.take(1);
    await reader.cancel();
    await vi.waitFor(() => expect(sdk.cancelled).toHaveBeenCalledOnce());
  });

  it.each([
    ['a JSON-RPC error', () => Response.json({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Subscription limit reached' } })],
    ['a bodiless answer', () => new Response(null, { status: 202, headers: { 'Content-Type': 'text/event-stream' } })],
    ['a look-alike media type', () => new Response('x', { headers: { 'Content-Type': 'text/event-streams' } })],
  ])('returns %s unchanged', async (_name, answer) => {
    const response = answer();
    expect(await serveEndableListen(TAGS, 1, async () => response)).toBe(response);
  });

  it.each([
    ['a tag not of 32 lowercase hex digits', [TAG.toUpperCase()]],
    ['the same tag twice', [TAG, TAG]],
    ['more tags than a principal’s and a grant’s', [TAG, TAG.replace('0', '1'), TAG.replace('0', '2')]],
  ])('refuses %s, serving nothing', async (_name, tags) => {
    const serve = vi.fn(async () => new Response(null));
    await expect(serveEndableListen(tags, 1, serve)).rejects.toThrow(RangeError);
    expect(serve).not.toHaveBeenCalled();
  });
});
