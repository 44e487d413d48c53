/**
 * Reading an SSE answer (src/client/sse-frames.ts): a connection that carries nothing at all for
 * the idle limit is taken as dead — a connection dropped without a word leaves a read waiting
 * forever otherwise — while any chunk, a heartbeat comment included, starts the wait again.
 */
import { describe, expect, it } from 'vitest';
import { IdleConnectionError } from '../../src/client/errors.ts';
import { followTask, ForkSafeTransport } from '../../src/client/index.ts';
import { readConfig } from '../../src/config.ts';
import { DEFAULT_IDLE_TIMEOUT_MS, idleLimit } from '../../src/client/idle-limit.ts';
import { sseFrames } from '../../src/client/sse-frames.ts';
import type { SseFrame } from '../../src/core/sse-parser.ts';
import { settle } from './faults.ts';

const encoder = new TextEncoder();

/** A body that sends `chunks`, each `gapMs` after the one before, then nothing more: it never ends. */
function body(chunks: readonly string[], gapMs: number) {
  let sent = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent === chunks.length) return new Promise<void>(() => undefined); // silent, never ends
      if (sent > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
      controller.enqueue(encoder.encode(chunks[sent++]!));
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, cancelled: () => cancelled };
}

class Broke extends Error {}

/** Every frame `sseFrames` hands on, and how its reading ended. */
async function readAll(stream: ReadableStream<Uint8Array>, idleMs: number | undefined) {
  const frames: SseFrame[] = [];
  const stop = new AbortController();
  const read = (async () => {
    for await (const batch of sseFrames(stream, stop.signal, (cause) => new Broke('broken', { cause }), idleMs)) {
      frames.push(...batch);
    }
  })();
  const outcome = await settle(read, 1_000);
  return { frames, outcome, stop: () => stop.abort() };
}

describe('sseFrames: the idle limit', () => {
  it('a connection silent for idleMs fails with broken(IdleConnectionError); the frame it cut short is not handed on', async () => {
    const { stream, cancelled } = body(['id: 1-2-1\ndata: {"a":1}\n\n', 'id: 1-2-2\ndata: {"a"'], 5);
    const { frames, outcome } = await readAll(stream, 50);
    expect(frames.map((frame) => frame.id)).toEqual(['1-2-1']);
    expect(outcome).not.toBe('hung');
    const { error } = outcome as { error: unknown };
    expect(error).toBeInstanceOf(Broke);
    expect((error as Broke).cause).toBeInstanceOf(IdleConnectionError);
    expect(((error as Broke).cause as IdleConnectionError).idleMs).toBe(50);
    expect(cancelled()).toBe(true); // the dead connection is closed, not left open
  });

  it('heartbeats keep a quiet connection: each chunk starts the wait again', async () => {
    // 8 keepalives 25 ms apart (~175 ms in all, past the 60 ms limit several times over), then an event.
    const chunks = [...Array.from({ length: 8 }, () => ': keepalive\n\n'), 'id: 1-2-1\ndata: {"a":1}\n\n'];
    const { stream } = body(chunks, 25);
    const { frames, outcome } = await readAll(stream, 60);
    expect(frames.map((frame) => frame.id)).toEqual(['1-2-1']);
    // Then silence: only that ends it.
    expect(((outcome as { error: Broke }).error.cause as IdleConnectionError).idleMs).toBe(60);
  });

  it.each([undefined, 0])('idleMs %s: a silent connection is waited on (here, until the bounded wait gives up)', async (idleMs) => {
    const { stream, cancelled } = body(['id: 1-2-1\ndata: {"a":1}\n\n'], 5);
    const { frames, outcome, stop } = await readAll(stream, idleMs);
    expect(frames.map((frame) => frame.id)).toEqual(['1-2-1']);
    expect(outcome).toBe('hung');
    expect(cancelled()).toBe(false);
    stop(); // the caller's abort still closes it
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(cancelled()).toBe(true);
  });
});

describe('idleLimit', () => {
  it.each([
    { chosen: undefined, safe: true, limit: DEFAULT_IDLE_TIMEOUT_MS },
    { chosen: undefined, safe: false, limit: undefined },
    { chosen: 0, safe: true, limit: undefined },
    { chosen: 0, safe: false, limit: undefined },
    { chosen: 250, safe: true, limit: 250 },
    { chosen: 250, safe: false, limit: 250 },
  ])('chosen $chosen, resume safe $safe: $limit', ({ chosen, safe, limit }) => {
    expect(idleLimit(chosen, safe)).toBe(limit);
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31])(
    'refuses %s: no timer keeps it (past 2^31 − 1 ms one fires at once)',
    (chosen) => {
      expect(() => idleLimit(chosen, true)).toThrow(RangeError);
    },
  );

  it('the largest a timer keeps is taken', () => {
    expect(idleLimit(2 ** 31 - 1, false)).toBe(2 ** 31 - 1);
  });

  it('the transport and followTask refuse a limit no timer keeps', async () => {
    expect(() => new ForkSafeTransport('http://localhost/mcp', { idleTimeoutMs: 3e9 })).toThrow(RangeError);
    await expect(followTask({ url: 'http://localhost/mcp', taskId: 'k3Jd9xQ2bT5nW8pL1vR4sA', idleTimeoutMs: 3e9 })).rejects.toThrow(
      RangeError,
    );
  });

  it('the default is three of the server’s default heartbeats (HEARTBEAT_MS)', () => {
    expect(DEFAULT_IDLE_TIMEOUT_MS).toBe(3 * readConfig({}).heartbeatMs);
  });
});
