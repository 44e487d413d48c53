import { describe, expect, it } from 'vitest';
import {
  ATTEMPT_TIMEOUT_MS,
  type AttemptObservation,
  classifyAttempt,
  discardBody,
  FollowedRedirectError,
  MAX_RESPONSE_BYTES,
  readCapped,
} from '../../src/core/webhook-attempt.ts';
import { DEFAULT_RETRY_POLICY, HEALTHY, nextAttempt } from '../../src/core/webhook-retry.ts';

const answered = (status: number): AttemptObservation => ({ status, timedOut: false, redirected: false });
const threw = (error: unknown, timedOut = false): AttemptObservation => ({ error, timedOut, redirected: false });

describe('classifyAttempt: an answer', () => {
  it.each([
    [200, 'delivered'],
    [201, 'delivered'],
    [202, 'delivered'],
    [204, 'delivered'],
    [299, 'delivered'],
    [300, 'http_4xx'],
    [100, 'http_4xx'],
    [101, 'http_4xx'],
    [301, 'http_4xx'],
    [302, 'http_4xx'],
    [303, 'http_4xx'],
    [307, 'http_4xx'],
    [308, 'http_4xx'],
    [400, 'http_4xx'],
    [401, 'http_4xx'],
    [404, 'http_4xx'],
    [410, 'http_4xx'],
    [413, 'http_4xx'],
    [425, 'http_4xx'],
    [429, 'http_4xx'],
    [499, 'http_4xx'],
    [500, 'http_5xx'],
    [502, 'http_5xx'],
    [503, 'http_5xx'],
    [504, 'http_5xx'],
    [599, 'http_5xx'],
  ])('status %i is %s, and the status is kept for the retry decision', (status, verdict) => {
    expect(classifyAttempt(answered(status))).toEqual({ verdict, outcome: { kind: 'response', status } });
  });

  it.each([
    [410, 'declined'],
    [413, 'give_up'],
    [302, 'retry'],
    [503, 'retry'],
    [200, 'delivered'],
  ])('status %i leads nextAttempt to %s (410 and 413 never retried)', (status, decision) => {
    const { outcome } = classifyAttempt(answered(status));
    const state = { delivery: { attempts: 1, firstAttemptAt: 0, pausedMs: 0 }, health: HEALTHY, now: 0 };
    expect(nextAttempt(state, outcome, () => 0, DEFAULT_RETRY_POLICY).decision.kind).toBe(decision);
  });

  it.each([99, 600, 200.5, Number.NaN])('refuses a status no HTTP answer has: %s', (status) => {
    expect(() => classifyAttempt(answered(status))).toThrow(RangeError);
  });

  it('refuses an observation of nothing', () => {
    expect(() => classifyAttempt({ timedOut: false, redirected: false })).toThrow(RangeError);
  });

  it.each([200, 302, 500])('throws FollowedRedirectError when the fetch followed a redirect (final status %i)', (status) => {
    expect(() => classifyAttempt({ status, timedOut: false, redirected: true })).toThrow(FollowedRedirectError);
  });
});

describe('classifyAttempt: no answer', () => {
  const timeoutError = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
  it.each([
    ['our timer fired', threw(new DOMException('aborted', 'AbortError'), true), 'timeout'],
    ['AbortSignal.timeout rejected the fetch', threw(timeoutError), 'timeout'],
    ['the timer fired after the status, while reading', { status: 200, error: timeoutError, timedOut: true, redirected: false }, 'timeout'],
    ['the timer fired with nothing thrown', { timedOut: true, redirected: false }, 'timeout'],
    [
      'a status came, then the connection was lost',
      { status: 200, error: new Error('Network connection lost.'), timedOut: false, redirected: false },
      'connection_refused',
    ],
    ['workerd: connection lost', threw(new Error('Network connection lost.')), 'connection_refused'],
    ['connect(): Connection refused', threw(new Error('disconnected: connect(): Connection refused')), 'connection_refused'],
    ['a TypeError from fetch', threw(new TypeError('fetch failed')), 'connection_refused'],
    ['an opaque internal error', threw(new Error('internal error; reference = asv0lnabm9mht2l97b8uim0n')), 'connection_refused'],
    ['a thrown string', threw('boom'), 'connection_refused'],
    [
      'workerd: untrusted certificate',
      threw(new Error("kj/compat/tls.c++:221: failed: TLS peer's certificate is not trusted; reason = Hostname mismatch")),
      'tls_error',
    ],
    ['a certificate error', threw(new TypeError('TLS certificate validation failed; reason: self signed certificate')), 'tls_error'],
    ['an SSL handshake failure', threw(new Error('SSL handshake failed')), 'tls_error'],
    ['tls inside a word, at its end', threw(new Error('settls unreachable')), 'connection_refused'],
    ['tls inside a word, at its start', threw(new Error('tlsx-gateway unreachable')), 'connection_refused'],
  ] as const)('%s: %s', (_, observation, reason) => {
    expect(classifyAttempt(observation)).toEqual({ verdict: reason, outcome: { kind: 'unreachable', reason } });
  });

  it('never carries the endpoint or error text in what it returns', () => {
    const result = classifyAttempt(threw(new Error('connect ECONNREFUSED 10.0.0.1:443 secret-internal-host')));
    expect(JSON.stringify(result)).not.toMatch(/10\.0\.0\.1|secret-internal-host|ECONNREFUSED/);
  });
});

describe('the bounds of an attempt', () => {
  it('times an attempt out after 10 s and reads at most 64 KiB', () => {
    expect(ATTEMPT_TIMEOUT_MS).toBe(10_000);
    expect(MAX_RESPONSE_BYTES).toBe(65_536);
  });
});

/** A real Response over a stream of `chunks`, recording how many were pulled and whether it was cancelled. */
function streamed(chunks: readonly number[], endless = false) {
  const seen = { pulled: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const size = chunks[seen.pulled] ?? (endless ? 1024 : undefined);
      seen.pulled++;
      if (size === undefined) controller.close();
      else controller.enqueue(new Uint8Array(size).fill(0x61));
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { response: new Response(body), seen };
}

describe('readCapped', () => {
  it.each([
    ['under the cap, one chunk', [99], 100, 99],
    ['at the cap, one chunk', [100], 100, 100],
    ['at the cap, many chunks', [40, 40, 20], 100, 100],
    ['under the cap, many chunks', [1, 1, 1], 100, 3],
    ['empty', [], 100, 0],
    ['a zero cap and an empty body', [], 0, 0],
  ] as const)('reads the whole body %s', async (_, chunks, cap, length) => {
    const { response, seen } = streamed(chunks);
    const read = await readCapped(response, cap);
    expect(read.kind).toBe('whole');
    if (read.kind === 'whole') expect(read.bytes.byteLength).toBe(length);
    expect(seen.cancelled).toBe(false);
  });

  it.each([
    ['one byte over, one chunk', [101], 100],
    ['one byte over, in the last chunk', [50, 50, 1], 100],
    ['far over, in one chunk', [1_000_000], 100],
    ['a zero cap and one byte', [1], 0],
  ] as const)('stops %s and cancels the body', async (_, chunks, cap) => {
    const { response, seen } = streamed(chunks);
    expect(await readCapped(response, cap)).toEqual({ kind: 'over_cap' });
    expect(seen.cancelled).toBe(true);
  });

  it('stops an endless body at the cap, pulling no chunk past the one that crossed it', async () => {
    const { response, seen } = streamed([], true);
    expect(await readCapped(response, 4096)).toEqual({ kind: 'over_cap' });
    expect(seen.cancelled).toBe(true);
    // 1 KiB chunks: the 5th crosses 4 KiB; the stream may have queued one more ahead (its high-water mark).
    expect(seen.pulled).toBeLessThanOrEqual(6);
  });

  it('reads the exact bytes of a body within the default cap', async () => {
    const text = '{"challenge":"abc"}';
    const read = await readCapped(new Response(text));
    expect(read.kind === 'whole' && new TextDecoder().decode(read.bytes)).toBe(text);
  });

  it('reads the default cap and no more', async () => {
    expect((await readCapped(new Response(new Uint8Array(MAX_RESPONSE_BYTES)))).kind).toBe('whole');
    expect((await readCapped(new Response(new Uint8Array(MAX_RESPONSE_BYTES + 1)))).kind).toBe('over_cap');
  });

  it('reads a body-less answer as empty', async () => {
    expect(await readCapped(new Response(null, { status: 204 }))).toEqual({ kind: 'whole', bytes: new Uint8Array(0) });
  });

  it('rejects when the body fails mid-read, for the caller to classify', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(10));
        controller.error(new Error('Network connection lost.'));
      },
    });
    await expect(readCapped(new Response(body), 100)).rejects.toThrow('Network connection lost.');
  });

  it.each([-1, 1.5, Number.POSITIVE_INFINITY])('refuses a cap of %s', async (cap) => {
    await expect(readCapped(new Response('x'), cap)).rejects.toThrow(RangeError);
  });
});

describe('discardBody', () => {
  it('cancels the body unread', async () => {
    const { response, seen } = streamed([], true);
    await discardBody(response);
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThanOrEqual(1);
  });

  it('accepts an answer without a body', async () => {
    await expect(discardBody(new Response(null, { status: 204 }))).resolves.toBeUndefined();
  });
});
