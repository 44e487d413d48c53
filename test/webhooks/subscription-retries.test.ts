/**
 * What a webhook subscription's object does when its receiver does not take a delivery
 * (src/events/webhook-delivery.ts; core/webhook-retry.ts under the webhooks project's short
 * policy: first retry within 200 ms, steps capped at 1 s, 5 attempts, suspension after 6 failures
 * lasting 1.5 s): retried with the same webhook-id and a fresh signature, declined on 410, a
 * redirect never followed, a give-up announced by a `gap` before the watermark passes it, and
 * retries surviving the object's restart (its alarm).
 */
import { abortAllDurableObjects } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_TIMESTAMP_HEADER } from '../../src/core/events-webhook-wire.ts';
import { BREAKER_STREAK, MAX_IN_FLIGHT } from '../../src/core/webhook-schedule.ts';
import {
  cursorOf,
  detachFromLog,
  hookUrl,
  note,
  pokeToHead,
  received,
  receivedUntil,
  rowsWritten,
  SECRET_A,
  script,
  subscribe,
  subscriptionStub,
  until,
  verifiesUnder,
  idOf,
  typeOf,
} from '../support/webhook-subscription.ts';

const unavailable = { kind: 'status', status: 503 } as const;

describe('retries', () => {
  it('503, 503, 503, then 2xx: retried with the same webhook-id, each attempt signed afresh (its timestamp moves on), then acknowledged', async () => {
    const made = await subscribe();
    await script(made.endpoint, [unavailable, unavailable, unavailable]);
    const { eventId } = await note(`${made.tok} retried`);
    expect(await pokeToHead(made.stub)).toBe('processed');
    expect((await made.stub.describe())?.failing).toBe(1);
    const log = await receivedUntil(made.endpoint, (l) => l.some((r) => r.answered === 200), 'the fourth attempt');
    expect(log.map(idOf)).toEqual([eventId, eventId, eventId, eventId]);
    expect(log.map((r) => r.answered)).toEqual([503, 503, 503, 200]);
    for (const request of log) expect(await verifiesUnder(request, SECRET_A)).toBe(true);
    // The policy's least waits (100 + 400 + 500 ms) put the fourth attempt at least a second after the first.
    const stamps = log.map((r) => Number(r.headers[WEBHOOK_TIMESTAMP_HEADER]));
    expect(stamps.at(-1)!).toBeGreaterThan(stamps[0]!);
    await until(async () => (await made.stub.describe())?.failing === 0, 'the failing row deleted');
  });

  it('410: declined — not retried, no row kept, the watermark passes it, the subscription unaffected', async () => {
    const made = await subscribe();
    await script(made.endpoint, [{ kind: 'status', status: 410 }]);
    const gone = await note(`${made.tok} declined`);
    await pokeToHead(made.stub);
    const description = await made.stub.describe();
    expect(description).toMatchObject({ failing: 0, watermarkSeq: gone.seq + 1, state: 'active', lastError: null });
    const next = await note(`${made.tok} next`);
    await pokeToHead(made.stub);
    const log = await receivedUntil(made.endpoint, (l) => l.length >= 2);
    expect(log.map(idOf)).toEqual([gone.eventId, next.eventId]);
  });

  it('a 307 is never followed (no request reaches its Location, here another endpoint of the receiver): a failed attempt, http_4xx', async () => {
    const made = await subscribe();
    const elsewhere = `${made.endpoint}-elsewhere`;
    await script(made.endpoint, [
      { kind: 'redirect', status: 307, location: hookUrl(elsewhere) },
      { kind: 'redirect', status: 307, location: 'http://10.0.0.1/' },
    ]);
    await note(`${made.tok} redirected`);
    await pokeToHead(made.stub);
    expect(await made.stub.describe()).toMatchObject({ failing: 1, lastError: 'http_4xx' });
    const log = await receivedUntil(made.endpoint, (l) => l.some((r) => r.answered === 200), 'the retry after two redirects');
    expect(log.map((r) => r.answered)).toEqual([307, 307, 200]);
    expect(await received(elsewhere)).toEqual([]);
  });

  it('retries spent: the occurrence is abandoned and a `gap` announces it before any cursor passes it; the gap is acknowledged, the watermark moves on', async () => {
    const made = await subscribe();
    await script(made.endpoint, [unavailable, unavailable, unavailable, unavailable, unavailable]);
    const lost = await note(`${made.tok} lost`);
    await pokeToHead(made.stub);
    const log = await receivedUntil(made.endpoint, (l) => l.some((r) => typeOf(r) === 'gap' && r.answered === 200), 'the gap');
    const events = log.filter((r) => typeOf(r) === undefined);
    expect(events.map((r) => r.answered)).toEqual([503, 503, 503, 503, 503]);
    for (const request of events) expect((await cursorOf(request)).next).toBeLessThanOrEqual(lost.seq);
    const gaps = log.filter((r) => typeOf(r) === 'gap');
    expect(gaps).toHaveLength(1);
    expect(idOf(gaps[0]!)).toMatch(/^msg_gap_[0-9a-f]{32}$/);
    expect(await verifiesUnder(gaps[0]!, SECRET_A)).toBe(true);
    expect((await cursorOf(gaps[0]!)).next).toBe(lost.seq + 1);
    await until(async () => (await made.stub.describe())?.watermarkSeq === lost.seq + 1, 'the watermark past the announced loss');
    const after = await note(`${made.tok} after`);
    await pokeToHead(made.stub);
    const last = (await receivedUntil(made.endpoint, (l) => l.some((r) => idOf(r) === after.eventId))).at(-1)!;
    expect((await cursorOf(last)).next).toBe(lost.seq + 1);
  });

  it('the breaker: while the receiver fails, new occurrences are not first-attempted (rows stay within the streak and the in-flight window); the first 2xx lets the held backlog flow', async () => {
    const made = await subscribe();
    await script(made.endpoint, [], unavailable);
    const notes: Awaited<ReturnType<typeof note>>[] = [];
    for (let i = 0; i < 12; i++) notes.push(await note(`${made.tok} outage ${i}`));
    await pokeToHead(made.stub);
    const during = await made.stub.describe();
    const attempted = new Set((await received(made.endpoint)).map(idOf));
    // Held: not every occurrence was attempted — the streak and the in-flight window, and the
    // breaker's probes since (one at a time, a step apart) — and each attempted one has its row.
    expect(attempted.size).toBeLessThan(notes.length);
    expect(attempted.size).toBeGreaterThanOrEqual(BREAKER_STREAK);
    expect(during?.failing).toBeGreaterThanOrEqual(Math.min(attempted.size, BREAKER_STREAK + MAX_IN_FLIGHT - 1));
    expect(during?.watermarkSeq).toBe(notes[0]!.seq);
    await script(made.endpoint, []);
    // Should the streak have reached the short policy's suspension meanwhile, a refresh reactivates it.
    if ((await made.stub.describe())?.state === 'suspended')
      await made.stub.refresh({ secret: SECRET_A, ttl: made.ttl, cursor: null, grant: 'grant-1' });
    await receivedUntil(
      made.endpoint,
      (l) => notes.every((n) => l.some((r) => idOf(r) === n.eventId && r.answered === 200)),
      'every held occurrence delivered',
    );
    await until(async () => (await made.stub.describe())?.watermarkSeq === notes.at(-1)!.seq + 1, 'the watermark at the head');
  });

  it("a failing delivery survives the object's restart: its row and alarm are durable, and the alarm delivers it", async () => {
    const made = await subscribe();
    await script(made.endpoint, [unavailable]);
    const { eventId } = await note(`${made.tok} survives`);
    await pokeToHead(made.stub);
    await abortAllDurableObjects();
    const log = await receivedUntil(made.endpoint, (l) => l.some((r) => r.answered === 200), 'the retry after the restart');
    expect(log.map(idOf)).toEqual([eventId, eventId]);
    const stub = subscriptionStub(made.id);
    await until(async () => (await stub.describe())?.failing === 0, 'the row deleted');
  });

  // Counted as the object's SQLite counts them (total_changes(): a setAlarm is a row there; CREATE TABLE is not).
  it("rows written: a first failure 3 (INSERT, the batch's position, the alarm); a retry 2 (UPDATE, the alarm); the success 3 (DELETE, the streak's end, the expiry alarm again)", async () => {
    const made = await subscribe();
    await script(made.endpoint, [unavailable, unavailable]);
    await detachFromLog(made.id);
    const base = await rowsWritten(made.id);
    await note(`${made.tok} counted`);
    await pokeToHead(made.stub);
    const marks = [(await rowsWritten(made.id)) - base];
    await receivedUntil(made.endpoint, (l) => l.length >= 2, 'the first retry');
    await until(async () => (await rowsWritten(made.id)) - base >= 5, 'the first retry stored');
    marks.push((await rowsWritten(made.id)) - base);
    await receivedUntil(made.endpoint, (l) => l.some((r) => r.answered === 200), 'the delivery');
    await until(async () => (await made.stub.describe())?.failing === 0, 'the row deleted');
    await until(async () => (await rowsWritten(made.id)) - base >= 8, 'the success stored, the expiry alarm set again');
    marks.push((await rowsWritten(made.id)) - base);
    await note(`${made.tok} delivered beside a failure`);
    await script(made.endpoint, [unavailable]);
    await note(`${made.tok} second failure`);
    await pokeToHead(made.stub);
    marks.push((await rowsWritten(made.id)) - base);
    // The second batch: one delivered, one failing: its INSERT, the position, the alarm.
    expect(marks).toEqual([3, 5, 8, 11]);
  });
});
