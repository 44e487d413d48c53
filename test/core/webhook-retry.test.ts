import { describe, expect, it } from 'vitest';
import {
  type AttemptOutcome,
  checkRetryPolicy,
  DEFAULT_RETRY_POLICY,
  type DeliveryDecision,
  type DeliveryProgress,
  dropSuspended,
  HEALTHY,
  nextAttempt,
  reactivated,
  resumeHeld,
  type RetryPolicy,
  retryDelay,
  retrySpan,
  retryStep,
  type SubscriptionHealth,
  statusCategory,
} from '../../src/core/webhook-retry.ts';

const now = 1_000_000_000;
const status = (code: number): AttemptOutcome => ({ kind: 'response', status: code });
const fixed = (value: number) => () => value;
const progress = (attempts: number, startedAgo = 0, pausedMs = 0): DeliveryProgress => ({
  attempts,
  firstAttemptAt: now - startedAgo,
  pausedMs,
});
const failing = (consecutiveFailures: number, sinceAgo: number): SubscriptionHealth => ({
  consecutiveFailures,
  failingSince: now - sinceAgo,
  lastError: 'http_5xx',
  lastDeliveryAt: now - 3_600_000,
});

/** A deterministic generator (a 32-bit LCG): the same draws for the same seed. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('the retry schedule', () => {
  it.each([
    [1, 10_000],
    [2, 40_000],
    [3, 160_000],
    [4, 600_000],
    [5, 600_000],
    [9, 600_000],
  ])('retry %i has a step of %i ms', (n, step) => {
    expect(retryStep(n)).toBe(step);
  });

  it.each([
    { n: 1, random: 0, delay: 5_000 },
    { n: 1, random: 0.5, delay: 7_500 },
    { n: 1, random: 0.999_999_9, delay: 9_999 },
    { n: 2, random: 0, delay: 20_000 },
    { n: 2, random: 0.5, delay: 30_000 },
    { n: 3, random: 0.25, delay: 100_000 },
    { n: 4, random: 0, delay: 300_000 },
    { n: 4, random: 0.999_999_9, delay: 599_999 },
  ])('retry $n with draw $random waits $delay ms (the upper half of its step)', ({ n, random, delay }) => {
    expect(retryDelay(n, random)).toBe(delay);
  });

  it('makes the first retry within 10 s for any draw', () => {
    const draw = lcg(1);
    for (let i = 0; i < 1_000; i++) {
      const delay = retryDelay(1, draw());
      expect(delay).toBeGreaterThanOrEqual(5_000);
      expect(delay).toBeLessThan(10_000);
    }
  });

  it('is full jitter with jitter: 1', () => {
    const full: RetryPolicy = { ...DEFAULT_RETRY_POLICY, jitter: 1 };
    expect(retryDelay(1, 0, full)).toBe(0);
    expect(retryDelay(3, 0.5, full)).toBe(80_000);
    expect(retrySpan(full)).toEqual({ minMs: 0, maxMs: 810_000 });
  });

  it.each([1, -0.1, Number.NaN, 1.5])('refuses the draw %s', (random) => {
    expect(() => retryDelay(1, random)).toThrow(RangeError);
  });

  it('spans 6 min 45 s to 13 min 30 s, within the 15 min window, and suspends a streak before the span ends', () => {
    const span = retrySpan();
    expect(span).toEqual({ minMs: 405_000, maxMs: 810_000 });
    expect(span.maxMs).toBeLessThanOrEqual(DEFAULT_RETRY_POLICY.windowMs);
    expect(DEFAULT_RETRY_POLICY.suspendAfterMs).toBeLessThan(span.minMs);
  });
});

describe('the decision after an attempt', () => {
  type Row = {
    name: string;
    delivery: DeliveryProgress;
    health?: SubscriptionHealth;
    outcome: AttemptOutcome;
    decision: DeliveryDecision;
    health2: SubscriptionHealth;
  };
  const first5xx: SubscriptionHealth = { consecutiveFailures: 1, failingSince: now, lastError: 'http_5xx', lastDeliveryAt: null };
  const first4xx: SubscriptionHealth = { ...first5xx, lastError: 'http_4xx' };
  const rows: Row[] = [
    {
      name: '200: delivered',
      delivery: progress(1),
      outcome: status(200),
      decision: { kind: 'delivered' },
      health2: { ...HEALTHY, lastDeliveryAt: now },
    },
    {
      name: '204 after a streak: delivered, the streak over',
      delivery: progress(3, 50_000),
      health: failing(30, 600_000),
      outcome: status(204),
      decision: { kind: 'delivered' },
      health2: { ...HEALTHY, lastDeliveryAt: now },
    },
    {
      name: '299: delivered',
      delivery: progress(1),
      outcome: status(299),
      decision: { kind: 'delivered' },
      health2: { ...HEALTHY, lastDeliveryAt: now },
    },
    {
      name: '410: declined, health untouched',
      delivery: progress(2, 9_000),
      health: failing(3, 9_000),
      outcome: status(410),
      decision: { kind: 'declined' },
      health2: failing(3, 9_000),
    },
    {
      name: '410 at the suspension threshold: declined, not suspended',
      delivery: progress(5, 400_000),
      health: failing(19, 400_000),
      outcome: status(410),
      decision: { kind: 'declined' },
      health2: failing(19, 400_000),
    },
    {
      name: '413 on a first attempt: given up, streak untouched',
      delivery: progress(1),
      outcome: status(413),
      decision: { kind: 'give_up', reason: 'too_large' },
      health2: { ...HEALTHY, lastError: 'http_4xx' },
    },
    {
      name: '500 on attempt 1: retry in 7.5 s',
      delivery: progress(1),
      outcome: status(500),
      decision: { kind: 'retry', at: now + 7_500 },
      health2: first5xx,
    },
    {
      name: '503 on attempt 2: retry in 30 s',
      delivery: progress(2, 8_000),
      outcome: status(503),
      decision: { kind: 'retry', at: now + 30_000 },
      health2: first5xx,
    },
    {
      name: '599 on attempt 3: retry in 120 s',
      delivery: progress(3, 40_000),
      outcome: status(599),
      decision: { kind: 'retry', at: now + 120_000 },
      health2: first5xx,
    },
    {
      name: '500 on attempt 4: retry in 450 s',
      delivery: progress(4, 160_000),
      outcome: status(500),
      decision: { kind: 'retry', at: now + 450_000 },
      health2: first5xx,
    },
    { name: '404: retried', delivery: progress(1), outcome: status(404), decision: { kind: 'retry', at: now + 7_500 }, health2: first4xx },
    { name: '429: retried', delivery: progress(1), outcome: status(429), decision: { kind: 'retry', at: now + 7_500 }, health2: first4xx },
    { name: '401: retried', delivery: progress(1), outcome: status(401), decision: { kind: 'retry', at: now + 7_500 }, health2: first4xx },
    {
      name: '302 (never followed): retried as http_4xx',
      delivery: progress(1),
      outcome: status(302),
      decision: { kind: 'retry', at: now + 7_500 },
      health2: first4xx,
    },
    {
      name: '300: retried as http_4xx',
      delivery: progress(1),
      outcome: status(300),
      decision: { kind: 'retry', at: now + 7_500 },
      health2: first4xx,
    },
    {
      name: 'a timeout: retried',
      delivery: progress(1),
      outcome: { kind: 'unreachable', reason: 'timeout' },
      decision: { kind: 'retry', at: now + 7_500 },
      health2: { ...first5xx, lastError: 'timeout' },
    },
    {
      name: 'a refused connection: retried',
      delivery: progress(1),
      outcome: { kind: 'unreachable', reason: 'connection_refused' },
      decision: { kind: 'retry', at: now + 7_500 },
      health2: { ...first5xx, lastError: 'connection_refused' },
    },
    {
      name: 'a TLS failure: retried',
      delivery: progress(1),
      outcome: { kind: 'unreachable', reason: 'tls_error' },
      decision: { kind: 'retry', at: now + 7_500 },
      health2: { ...first5xx, lastError: 'tls_error' },
    },
    {
      name: 'a failure extending a streak: its start kept',
      delivery: progress(1),
      health: failing(4, 60_000),
      outcome: status(502),
      decision: { kind: 'retry', at: now + 7_500 },
      health2: failing(5, 60_000),
    },
    {
      name: 'the fifth attempt failing: given up',
      delivery: progress(5, 500_000),
      outcome: status(500),
      decision: { kind: 'give_up', reason: 'attempts' },
      health2: first5xx,
    },
    {
      name: 'a retry past the window: given up',
      delivery: progress(4, 460_000),
      outcome: status(500),
      decision: { kind: 'give_up', reason: 'window' },
      health2: first5xx,
    },
    {
      name: 'a retry ending exactly at the window: made',
      delivery: progress(4, 450_000),
      outcome: status(500),
      decision: { kind: 'retry', at: now + 450_000 },
      health2: first5xx,
    },
    {
      name: 'suspended time not counted in the window',
      delivery: progress(4, 3_000_000, 2_600_000),
      outcome: status(500),
      decision: { kind: 'retry', at: now + 450_000 },
      health2: first5xx,
    },
    {
      name: '20 failures over 5 min: suspended',
      delivery: progress(2, 10_000),
      health: failing(19, 300_000),
      outcome: status(500),
      decision: { kind: 'suspend' },
      health2: failing(20, 300_000),
    },
    {
      name: '20 failures over 5 min less 1 ms: retried',
      delivery: progress(2, 10_000),
      health: failing(19, 299_999),
      outcome: status(500),
      decision: { kind: 'retry', at: now + 30_000 },
      health2: failing(20, 299_999),
    },
    {
      name: '19 failures over an hour: retried',
      delivery: progress(2, 10_000),
      health: failing(18, 3_600_000),
      outcome: status(500),
      decision: { kind: 'retry', at: now + 30_000 },
      health2: failing(19, 3_600_000),
    },
    {
      name: 'suspension and an exhausted budget at once: suspended (held, not lost)',
      delivery: progress(5, 700_000),
      health: failing(40, 700_000),
      outcome: { kind: 'unreachable', reason: 'timeout' },
      decision: { kind: 'suspend' },
      health2: { ...failing(41, 700_000), lastError: 'timeout' },
    },
  ];

  it.each(rows)('$name', ({ delivery, health, outcome, decision, health2 }) => {
    let draws = 0;
    const random = () => {
      draws++;
      return 0.5;
    };
    const judged = nextAttempt({ delivery, health: health ?? HEALTHY, now }, outcome, random);
    expect(judged).toEqual({ decision, health: health2 });
    expect(draws).toBe(decision.kind === 'retry' || (decision.kind === 'give_up' && decision.reason === 'window') ? 1 : 0);
  });

  it.each([
    { name: 'no attempt made', delivery: progress(0), outcome: status(500) },
    { name: 'a status below 100', delivery: progress(1), outcome: status(99) },
    { name: 'a status above 599', delivery: progress(1), outcome: status(600) },
    { name: 'a fractional status', delivery: progress(1), outcome: status(200.5) },
  ])('refuses $name', ({ delivery, outcome }) => {
    expect(() => nextAttempt({ delivery, health: HEALTHY, now }, outcome, fixed(0.5))).toThrow(RangeError);
  });

  it.each([
    { name: 'maxAttempts 0', policy: { ...DEFAULT_RETRY_POLICY, maxAttempts: 0 } },
    { name: 'a fractional window', policy: { ...DEFAULT_RETRY_POLICY, windowMs: 1.5 } },
    { name: 'a negative first step', policy: { ...DEFAULT_RETRY_POLICY, firstRetryMs: -1 } },
    { name: 'a factor below 1', policy: { ...DEFAULT_RETRY_POLICY, factor: 0.5 } },
    { name: 'jitter 0', policy: { ...DEFAULT_RETRY_POLICY, jitter: 0 } },
    { name: 'jitter above 1', policy: { ...DEFAULT_RETRY_POLICY, jitter: 1.5 } },
    { name: 'a NaN suspension count', policy: { ...DEFAULT_RETRY_POLICY, suspendAfterFailures: Number.NaN } },
  ])('refuses a policy with $name', ({ policy }) => {
    expect(() => checkRetryPolicy(policy)).toThrow(RangeError);
    expect(() => nextAttempt({ delivery: progress(1), health: HEALTHY, now }, status(500), fixed(0.5), policy)).toThrow(RangeError);
  });

  it.each([
    [300, 'http_4xx'],
    [400, 'http_4xx'],
    [499, 'http_4xx'],
    [500, 'http_5xx'],
    [599, 'http_5xx'],
  ])('files status %i under %s', (code, category) => {
    expect(statusCategory(code)).toBe(category);
  });
});

/** One occurrence against a receiver down until `downFor`: its attempts, and how it ended. */
function deliverThroughOutage(downFor: number, random: () => number): { attempts: number[]; end: DeliveryDecision } {
  const start = 0;
  let at = start;
  let health = HEALTHY;
  const attempts: number[] = [];
  for (;;) {
    attempts.push(at);
    const outcome = at < downFor ? status(503) : status(200);
    const judged = nextAttempt(
      { delivery: { attempts: attempts.length, firstAttemptAt: start, pausedMs: 0 }, health, now: at },
      outcome,
      random,
    );
    health = judged.health;
    if (judged.decision.kind !== 'retry') return { attempts, end: judged.decision };
    at = judged.decision.at;
  }
}

describe('the schedule through an outage (simulated, seeded draws)', () => {
  it.each([60_000, 120_000, 404_999])(
    'delivers every occurrence through a %i ms outage, in at most 5 attempts within 15 min',
    (downFor) => {
      for (let seed = 1; seed <= 200; seed++) {
        const { attempts, end } = deliverThroughOutage(downFor, lcg(seed));
        expect(end).toEqual({ kind: 'delivered' });
        expect(attempts.length).toBeLessThanOrEqual(5);
        expect(attempts.at(-1)).toBeLessThanOrEqual(DEFAULT_RETRY_POLICY.windowMs);
      }
    },
  );

  it('abandons a quiet subscription’s occurrence after 5 attempts when the receiver stays down', () => {
    const { attempts, end } = deliverThroughOutage(Number.POSITIVE_INFINITY, lcg(7));
    expect(end).toEqual({ kind: 'give_up', reason: 'attempts' });
    expect(attempts.length).toBe(5);
    expect(attempts[1]).toBeLessThan(10_000);
  });

  it('suspends a busy subscription in a lasting outage before abandoning any of its occurrences', () => {
    // One occurrence a second, the receiver never answering: attempts are judged in time order.
    const due = Array.from({ length: 120 }, (_, i) => ({ at: i * 1_000, first: i * 1_000, attempts: 0 }));
    const random = lcg(3);
    let health = HEALTHY;
    const decisions: string[] = [];
    while (due.length > 0) {
      due.sort((a, b) => a.at - b.at);
      const next = due.shift() as (typeof due)[number];
      next.attempts++;
      const judged = nextAttempt(
        { delivery: { attempts: next.attempts, firstAttemptAt: next.first, pausedMs: 0 }, health, now: next.at },
        status(500),
        random,
      );
      health = judged.health;
      decisions.push(judged.decision.kind);
      if (judged.decision.kind === 'suspend') break;
      if (judged.decision.kind === 'retry') due.push({ ...next, at: judged.decision.at });
    }
    expect(decisions.at(-1)).toBe('suspend');
    expect(decisions).not.toContain('give_up');
    expect(health.failingSince).toBe(0);
  });
});

describe('suspension and reactivation', () => {
  it('adds the suspended time to a held delivery’s pause and spreads it over the first step', () => {
    const held = progress(3, 400_000, 1_000);
    expect(resumeHeld(held, now - 100_000, now, 0.5)).toEqual({ delivery: { ...held, pausedMs: 101_000 }, at: now + 5_000 });
    expect(resumeHeld(held, now - 100_000, now, 0).at).toBe(now);
    expect(resumeHeld(held, now - 100_000, now, 0.999_999).at).toBe(now + 9_999);
  });

  it('adds no pause to a delivery first attempted after the suspension began', () => {
    const later = progress(1, 10_000);
    expect(resumeHeld(later, now - 100_000, now, 0).delivery.pausedMs).toBe(0);
  });

  it('refuses a resumption before the suspension, and a draw outside [0, 1)', () => {
    expect(() => resumeHeld(progress(1), now, now - 1, 0)).toThrow(RangeError);
    expect(() => resumeHeld(progress(1), now - 1, now, 1)).toThrow(RangeError);
  });

  it('gives a held delivery whose budget was spent one more attempt, then abandons it', () => {
    const held = progress(5, 700_000);
    const { delivery } = resumeHeld(held, now - 600_000, now, 0);
    const after = nextAttempt(
      { delivery: { ...delivery, attempts: 6 }, health: reactivated(failing(41, 700_000)), now: now + 1 },
      status(500),
      fixed(0.5),
    );
    expect(after.decision).toEqual({ kind: 'give_up', reason: 'attempts' });
  });

  it('starts the streak over on reactivation and keeps the last error', () => {
    expect(reactivated(failing(41, 700_000))).toEqual({
      consecutiveFailures: 0,
      failingSince: null,
      lastError: 'http_5xx',
      lastDeliveryAt: now - 3_600_000,
    });
  });

  it.each([
    { noExpiry: true, suspendedFor: 7 * 86_400_000, drop: true },
    { noExpiry: true, suspendedFor: 7 * 86_400_000 - 1, drop: false },
    { noExpiry: false, suspendedFor: 30 * 86_400_000, drop: false },
  ])('drops a suspended subscription: no expiry $noExpiry, suspended $suspendedFor ms → $drop', ({ noExpiry, suspendedFor, drop }) => {
    expect(dropSuspended(noExpiry, now - suspendedFor, now)).toBe(drop);
  });
});
