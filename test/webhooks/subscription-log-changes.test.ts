/**
 * A webhook subscription when its log changes under it (src/events/webhook-wake.ts): the log is
 * reset (a new log id: the old generation's positions name nothing) or it pruned past the
 * subscription's position. Either loss is announced by a `gap` envelope before any cursor passes
 * it ("The client persists `cursor` and treats it as `truncated: true`"); a reset's new generation
 * waits for its gap to be acknowledged, and a gap that cannot be delivered suspends the
 * subscription rather than being retried indefinitely or passed silently. demo.hooked is these
 * tests' own type (kept 3 occurrences; known to the webhook objects only), so its resets touch no
 * other test's log; this file runs its tests one after another.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { resetEventLog } from '../../src/events/event-logs.ts';
import { hookedEvents } from '../fixture-server/note-events.ts';
import {
  cursorOf,
  detachFromLog,
  HOOKED_LOG,
  note,
  pokeToHead,
  type Received,
  received,
  receivedUntil,
  SECRET_A,
  script,
  subscribe,
  until,
  idOf,
  typeOf,
} from '../support/webhook-subscription.ts';

describe('the log changes under a subscription', () => {
  it('a reset: a `gap` in the new log, from its start, comes before the first delivery of the new generation', async () => {
    const made = await subscribe({ log: HOOKED_LOG });
    const before = await note(`${made.tok} before`, HOOKED_LOG);
    await receivedUntil(made.endpoint, (l) => l.length >= 1, 'the delivery before the reset');
    const logId = await resetEventLog(env.MCP_EVENTS, hookedEvents);
    expect(logId).not.toBe(before.logId);
    const after = await note(`${made.tok} after`, HOOKED_LOG);
    await pokeToHead(made.stub, HOOKED_LOG);
    const log = await receivedUntil(made.endpoint, (l) => l.some((r) => idOf(r) === after.eventId), 'the delivery after the reset');
    expect(log.map((r) => typeOf(r) ?? idOf(r))).toEqual([before.eventId, 'gap', after.eventId]);
    expect(await cursorOf(log[1]!)).toMatchObject({ logId, next: 0 });
    expect(await cursorOf(log[2]!)).toMatchObject({ logId });
    await until(async () => (await made.stub.describe())?.watermarkSeq === after.seq + 1, 'the watermark in the new log');
  });

  it('a reset whose `gap` is refused until its retries are spent: nothing of the new generation is attempted, the subscription is suspended ("SHOULD NOT retry indefinitely"), a refresh answers the old log\'s watermark and reactivates it; the gap is then acknowledged before the new generation\'s first delivery', async () => {
    const made = await subscribe({ log: HOOKED_LOG });
    const before = await note(`${made.tok} before`, HOOKED_LOG);
    await receivedUntil(made.endpoint, (l) => l.length >= 1, 'the delivery before the reset');
    const unavailable = { kind: 'status', status: 503 } as const;
    await script(made.endpoint, [unavailable, unavailable, unavailable, unavailable, unavailable]);
    const logId = await resetEventLog(env.MCP_EVENTS, hookedEvents);
    const after = await note(`${made.tok} after`, HOOKED_LOG);
    await pokeToHead(made.stub, HOOKED_LOG);
    await until(async () => (await made.stub.describe())?.state === 'suspended', 'suspended once the gap is given up');
    const held = await received(made.endpoint);
    expect(held.map((r) => typeOf(r) ?? idOf(r))).toEqual([before.eventId, 'gap', 'gap', 'gap', 'gap', 'gap']);
    expect(new Set(held.slice(1).map(idOf)).size).toBe(1);
    const refreshed = await made.stub.refresh({ secret: SECRET_A, ttl: made.ttl, cursor: null, grant: 'grant-1' });
    if (!refreshed.live) throw new Error('the subscription is live');
    expect(refreshed.result).toMatchObject({ truncated: false, deliveryStatus: { active: false } });
    expect(await cursorOf({ body: JSON.stringify({ cursor: refreshed.result.cursor }) } as Received)).toMatchObject({
      logId: before.logId,
    });
    const log = await receivedUntil(made.endpoint, (l) => l.some((r) => idOf(r) === after.eventId), 'the delivery after the reactivation');
    const acknowledged = log.findIndex((r) => typeOf(r) === 'gap' && r.answered === 200);
    expect(acknowledged).toBeGreaterThan(0);
    expect(log.findIndex((r) => idOf(r) === after.eventId)).toBeGreaterThan(acknowledged);
    expect(idOf(log[acknowledged]!)).toBe(idOf(held[1]!));
    expect(await cursorOf(log[acknowledged]!)).toMatchObject({ logId, next: 0 });
    expect(await cursorOf(log.find((r) => idOf(r) === after.eventId)!)).toMatchObject({ logId });
    await until(async () => (await made.stub.describe())?.watermarkSeq === after.seq + 1, 'the watermark in the new log');
  });

  it('pruned past its position: the loss held by the watermark until a `gap` announces it, then the watermark moves on', async () => {
    const made = await subscribe({ log: HOOKED_LOG });
    await detachFromLog(made.id, HOOKED_LOG);
    const notes: Awaited<ReturnType<typeof note>>[] = [];
    for (let i = 0; i < 6; i++) notes.push(await note(`${made.tok} ${i}`, HOOKED_LOG));
    await pokeToHead(made.stub, HOOKED_LOG);
    const log = await receivedUntil(made.endpoint, (l) => l.some((r) => typeOf(r) === 'gap'), 'the gap');
    const events = log.filter((r) => typeOf(r) === undefined);
    expect(events.length).toBeGreaterThan(0);
    expect(events.length).toBeLessThan(notes.length);
    for (const request of events) expect((await cursorOf(request)).next).toBeLessThanOrEqual(notes[0]!.seq);
    const gap = log.find((r) => typeOf(r) === 'gap')!;
    expect((await cursorOf(gap)).next).toBe(notes.at(-1)!.seq + 1);
    await until(async () => (await made.stub.describe())?.watermarkSeq === notes.at(-1)!.seq + 1, 'the watermark past the loss');
  });
});
