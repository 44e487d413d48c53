import { describe, expect, it } from 'vitest';
import { DEFAULT_RECONNECT, reconnectDelay, reconnectOptions, type ReconnectOptions } from '../../src/client/backoff.ts';
import { retryAfterMs } from '../../src/client/http.ts';

const options: ReconnectOptions = { initialDelayMs: 100, maxDelayMs: 1_000, factor: 2, maxAttempts: 5 };

describe('reconnectDelay', () => {
  it.each<{ name: string; attempt: number; retry: number | undefined; delay: number | undefined; retryAfter?: number }>([
    { name: 'the first reconnect waits the initial delay without a server retry', attempt: 0, retry: undefined, delay: 100 },
    { name: 'the server’s retry: replaces the initial delay', attempt: 0, retry: 300, delay: 300 },
    { name: 'a retry: 0 means at once', attempt: 0, retry: 0, delay: 0 },
    { name: 'each attempt without progress waits factor times longer', attempt: 2, retry: undefined, delay: 400 },
    { name: 'growth starts from the server’s retry', attempt: 1, retry: 300, delay: 600 },
    { name: 'no wait exceeds maxDelayMs', attempt: 4, retry: undefined, delay: 1_000 },
    { name: 'not even the server’s retry', attempt: 0, retry: 60_000, delay: 1_000 },
    { name: 'the last allowed attempt', attempt: 4, retry: 10, delay: 160 },
    { name: 'past maxAttempts: give up', attempt: 5, retry: undefined, delay: undefined },
    { name: 'an answer’s Retry-After, when longer, is waited', attempt: 0, retry: 100, retryAfter: 700, delay: 700 },
    { name: 'the backoff, when longer than a Retry-After', attempt: 2, retry: undefined, retryAfter: 50, delay: 400 },
    { name: 'a Retry-After within maxDelayMs too', attempt: 0, retry: undefined, retryAfter: 60_000, delay: 1_000 },
    { name: 'past maxAttempts, whatever the Retry-After', attempt: 5, retry: undefined, retryAfter: 10, delay: undefined },
  ])('$name', ({ attempt, retry, delay, retryAfter }) => {
    expect(reconnectDelay(attempt, retry, options, retryAfter)).toBe(delay);
  });

  it('gives up at once with maxAttempts 0', () => {
    expect(reconnectDelay(0, undefined, { ...options, maxAttempts: 0 })).toBeUndefined();
  });
});

describe('reconnectOptions', () => {
  it('fills in the defaults', () => {
    expect(reconnectOptions()).toEqual(DEFAULT_RECONNECT);
    expect(reconnectOptions({ maxDelayMs: 5 })).toEqual({ ...DEFAULT_RECONNECT, maxDelayMs: 5 });
  });

  it.each<Partial<ReconnectOptions>>([
    { initialDelayMs: -1 },
    { maxDelayMs: Number.NaN },
    { factor: 0.5 },
    { maxAttempts: 1.5 },
    { maxAttempts: -1 },
  ])('refuses %o', (bad) => {
    expect(() => reconnectOptions(bad)).toThrow(RangeError);
  });
});

describe('retryAfterMs', () => {
  const NOW = Date.parse('2026-12-04T20:00:00Z');
  it.each<{ name: string; header: string | undefined; ms: number | undefined }>([
    { name: 'delay-seconds', header: '60', ms: 60_000 },
    { name: 'zero', header: '0', ms: 0 },
    { name: 'an HTTP-date ahead', header: 'Fri, 04 Dec 2026 20:00:05 GMT', ms: 5_000 },
    { name: 'an HTTP-date past', header: 'Fri, 04 Dec 2026 19:59:00 GMT', ms: 0 },
    { name: 'none', header: undefined, ms: undefined },
    { name: 'negative', header: '-5', ms: undefined },
    { name: 'a fraction', header: '1.5', ms: undefined },
    { name: 'not a date', header: 'soon', ms: undefined },
  ])('$name', ({ header, ms }) => {
    const response = new Response(null, { status: 429, headers: header === undefined ? {} : { 'Retry-After': header } });
    expect(retryAfterMs(response, NOW)).toBe(ms);
  });
});
