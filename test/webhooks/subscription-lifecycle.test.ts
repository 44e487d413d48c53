/**
 * A webhook subscription's life in its object (src/events/webhook-object.ts; SEP-3415,
 * *Subscription lifecycle*, *Unsubscribing*): a second create answers as a refresh, a refresh
 * re-grants the TTL and rotates the secret (both signatures during the grace window), a streak of
 * failures suspends it and a refresh reactivates it, a cursor replays the backlog, `terminated`
 * then the end, unsubscribe without an envelope, and expiry on its alarm.
 */
import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { eventsError } from '../../src/core/events-wire.ts';
import { grantTtl } from '../../src/core/webhook-subscription-key.ts';
import {
  config,
  cursorOf,
  note,
  NOTE_LOG,
  objectOf,
  pokeToHead,
  type Received,
  received,
  receivedUntil,
  rowsWritten,
  SECRET_A,
  SECRET_B,
  script,
  subscribe,
  subscriptionStub,
  until,
  verifiesUnder,
  idOf,
  bodyOf,
} from '../support/webhook-subscription.ts';

const refreshOf = (secret: string, ttlMs: number | null = 600_000) => ({
  secret,
  ttl: grantTtl(ttlMs, Date.now(), config.ttl),
  cursor: null,
  grant: 'grant-2',
});

describe('rows written (total_changes(): a setAlarm counts, CREATE TABLE does not)', () => {
  it('create 2 (the record, its expiry alarm; 1 with no expiry); refresh 1 (one UPDATE, the alarm untouched when the expiry moves later); terminate 2 (terminating, the alarm at once)', async () => {
    const made = await subscribe();
    const created = await rowsWritten(made.id);
    await made.stub.refresh(refreshOf(SECRET_B, 900_000));
    const refreshed = (await rowsWritten(made.id)) - created;
    const noExpiry = await subscribe({ ttlMs: null });
    const error = eventsError('Forbidden', 'the grant was revoked', { reason: 'grant_revoked' });
    // The envelope's answer held back, so that the end (deleteAll) cannot come before the count.
    await script(made.endpoint, [{ kind: 'slow', delayMs: 2_000 }]);
    const before = await rowsWritten(made.id);
    await made.stub.terminate({ error, cause: 'revoked' });
    const terminated = (await rowsWritten(made.id)) - before;
    expect({ created, refreshed, noExpiry: await rowsWritten(noExpiry.id), terminated }).toEqual({
      created: 2,
      refreshed: 1,
      noExpiry: 1,
      terminated: 2,
    });
  });
});

describe('refresh', () => {
  it("the registry's probe: how long it lives at least, never past the TTL floor from now — a refresh may shorten the TTL unseen", async () => {
    const made = await subscribe();
    await made.stub.refresh(refreshOf(SECRET_A, 900_000));
    const before = Date.now();
    const told = await made.stub.probe();
    // Long granted (15 min), but the registry is told no more than the floor: a refresh may bring it down to that.
    expect(told?.liveUntil).toBeGreaterThanOrEqual(before + config.ttl.minTtlMs);
    expect(told?.liveUntil).toBeLessThanOrEqual(Date.now() + config.ttl.minTtlMs);
    // A refresh to the floor then shortens it to about what the registry was told, not below: the bound held.
    const short = refreshOf(SECRET_A, 1);
    await made.stub.refresh(short);
    expect(short.ttl.expiresAt).toBeGreaterThanOrEqual(told!.liveUntil - (Date.now() - before));
  });

  it('no live subscription: {live: false}, nothing stored', async () => {
    expect(await subscriptionStub(`sub_${crypto.randomUUID()}`).refresh(refreshOf(SECRET_A))).toEqual({ live: false });
  });

  it('a live one: the TTL re-granted, the cursor our watermark, deliveryStatus with active: true; a second create answers the same way', async () => {
    const made = await subscribe();
    const delivered = await note(`${made.tok} before`);
    await pokeToHead(made.stub);
    await receivedUntil(made.endpoint, (l) => l.length >= 1);
    const ttl = refreshOf(SECRET_A, 900_000);
    const answer = await made.stub.refresh(ttl);
    expect(answer.live).toBe(true);
    if (!answer.live) return;
    expect(answer.result).toMatchObject({ id: made.id, refreshBefore: ttl.ttl.refreshBefore, truncated: false });
    expect(answer.result.deliveryStatus).toMatchObject({ active: true, lastError: null });
    expect(answer.result.deliveryStatus?.lastDeliveryAt).toEqual(expect.any(String));
    expect(answer.result.deliveryStatus).not.toHaveProperty('failedSince');
    expect((await cursorOf({ body: JSON.stringify({ cursor: answer.result.cursor }) } as Received)).next).toBe(delivered.seq + 1);
    expect((await made.stub.describe())?.refreshBefore).toBe(ttl.ttl.refreshBefore);
    // Two concurrent first subscribes of one key: the second create finds the first live and answers as a refresh.
    const again = await subscriptionStub(made.id).create({
      id: made.id,
      principal: 'alice',
      grant: 'grant-1',
      name: 'demo.note',
      args: { contains: made.tok },
      log: NOTE_LOG,
      url: 'http://ignored.invalid/',
      secret: SECRET_A,
      ttl: ttl.ttl,
      cursor: null,
      verifiedAt: Date.now(),
      origin: 'http://localhost',
      bindings: { logs: 'MCP_EVENTS', webhooks: 'MCP_WEBHOOKS' },
    });
    expect(again).toMatchObject({ result: { id: made.id, deliveryStatus: { active: true } } });
  });

  it('a new secret: deliveries are signed under both during the grace window ("SHOULD dual-sign")', async () => {
    const made = await subscribe({ secret: SECRET_A });
    await made.stub.refresh(refreshOf(SECRET_B));
    await note(`${made.tok} rotated`);
    await pokeToHead(made.stub);
    const [request] = await receivedUntil(made.endpoint, (l) => l.length >= 1);
    expect(await verifiesUnder(request!, SECRET_B)).toBe(true);
    expect(await verifiesUnder(request!, SECRET_A)).toBe(true);
  });
});

describe('suspension and reactivation', () => {
  it('a streak of failures suspends it (held, not lost); a refresh reactivates it: deliveryStatus active: false, failedSince; then every held occurrence is delivered', async () => {
    const made = await subscribe();
    await script(made.endpoint, [], { kind: 'status', status: 503 });
    const a = await note(`${made.tok} a`);
    const b = await note(`${made.tok} b`);
    await pokeToHead(made.stub);
    await until(async () => (await made.stub.describe())?.state === 'suspended', 'suspended');
    const suspended = await made.stub.describe();
    expect(suspended?.failing).toBeGreaterThan(0);
    expect(suspended?.watermarkSeq).toBeLessThanOrEqual(a.seq);
    // Nothing is attempted while suspended: a new occurrence stays derived pending.
    const c = await note(`${made.tok} c`);
    await pokeToHead(made.stub);
    const attemptsWhileSuspended = (await received(made.endpoint)).length;
    expect((await received(made.endpoint)).some((r) => idOf(r) === c.eventId)).toBe(false);
    await script(made.endpoint, []);
    const answer = await made.stub.refresh(refreshOf(SECRET_A));
    expect(answer.live && answer.result.deliveryStatus).toMatchObject({
      active: false,
      lastError: 'http_5xx',
      failedSince: expect.any(String),
    });
    expect((await made.stub.describe())?.state).toBe('active');
    const log = await receivedUntil(
      made.endpoint,
      (l) => [a, b, c].every((o) => l.some((r) => idOf(r) === o.eventId && r.answered === 200)),
      'the held occurrences delivered',
    );
    expect(log.length).toBeGreaterThan(attemptsWhileSuspended);
    await until(async () => (await made.stub.describe())?.watermarkSeq === c.seq + 1, 'the watermark past every one');
    const status = await made.stub.refresh(refreshOf(SECRET_A));
    expect(status.live && status.result.deliveryStatus).toMatchObject({ active: true, lastError: null });
  });
});

describe('replay', () => {
  it('create with a cursor replays the backlog from it, with no poke', async () => {
    const tok = `t${crypto.randomUUID().slice(0, 12)}`;
    const first = await note(`${tok} old 1`);
    const second = await note(`${tok} old 2`);
    const made = await subscribe({ tok, cursor: { ...NOTE_LOG, logId: first.logId, next: first.seq } });
    expect(made.result.truncated).toBe(false);
    const log = await receivedUntil(made.endpoint, (l) => l.length >= 2, 'the backlog');
    expect(log.map(idOf)).toEqual([first.eventId, second.eventId]);
  });
});

describe('creation refused', () => {
  it("a cursor the log refuses (another type's): {refusal} with -32602, nothing stored", async () => {
    const id = `sub_${crypto.randomUUID().replaceAll('-', '')}`;
    const stub = subscriptionStub(id);
    const answer = await stub.create({
      id,
      principal: 'alice',
      grant: 'grant-1',
      name: 'demo.note',
      args: {},
      log: NOTE_LOG,
      url: 'http://127.0.0.1/unused',
      secret: SECRET_A,
      ttl: grantTtl(600_000, Date.now(), config.ttl),
      cursor: { type: 'demo.other', partition: '', logId: 'x', next: 0 },
      verifiedAt: Date.now(),
      origin: 'http://localhost',
      bindings: { logs: 'MCP_EVENTS', webhooks: 'MCP_WEBHOOKS' },
    });
    expect(answer).toMatchObject({ refusal: { code: -32602, data: { reason: 'cursor_other_type' } } });
    expect(await stub.describe()).toBeNull();
    expect(await stub.probe()).toBeNull();
  });
});

describe('the end', () => {
  it('terminate: `terminated` with the error, a stable msg_terminated_ id, then gone (describe null, poke gone, refresh not live)', async () => {
    const made = await subscribe();
    const error = eventsError('Forbidden', 'the grant was revoked', { reason: 'grant_revoked' });
    expect(await made.stub.terminate({ error, cause: 'revoked' })).toBe(true);
    expect(await made.stub.probe()).toBeNull();
    const [envelope] = await receivedUntil(made.endpoint, (l) => l.length >= 1, 'the terminated envelope');
    expect(bodyOf(envelope!)).toEqual({ type: 'terminated', error });
    expect(idOf(envelope!)).toMatch(/^msg_terminated_[0-9a-f]{32}$/);
    expect(await verifiesUnder(envelope!, SECRET_A)).toBe(true);
    await until(async () => (await made.stub.describe()) === null, 'ended');
    expect(await pokeToHead(made.stub)).toBe('gone');
    expect(await made.stub.refresh(refreshOf(SECRET_A))).toEqual({ live: false });
    expect(await made.stub.terminate({ error, cause: 'revoked' })).toBe(false);
  });

  it('terminate while the receiver fails: the envelope is retried (same id) until acknowledged; no event POST starts meanwhile', async () => {
    const made = await subscribe();
    await script(made.endpoint, [{ kind: 'status', status: 503 }]);
    const error = eventsError('Forbidden', 'ended by the operator', { reason: 'ended_by_operator' });
    await made.stub.terminate({ error, cause: 'operator' });
    await note(`${made.tok} after the end`);
    await pokeToHead(made.stub);
    const log = await receivedUntil(made.endpoint, (l) => l.some((r) => r.answered === 200), 'the retried envelope');
    expect(log.map((r) => bodyOf(r).type)).toEqual(['terminated', 'terminated']);
    expect(idOf(log[0]!)).toBe(idOf(log[1]!));
    await until(async () => (await made.stub.describe()) === null, 'ended');
  });

  it('unsubscribe: true, no envelope, gone; again: false', async () => {
    const made = await subscribe();
    expect(await made.stub.unsubscribe()).toBe(true);
    expect(await made.stub.describe()).toBeNull();
    await note(`${made.tok} after unsubscribe`);
    expect(await pokeToHead(made.stub)).toBe('gone');
    expect(await received(made.endpoint)).toEqual([]);
    expect(await made.stub.unsubscribe()).toBe(false);
  });

  it('"The server MUST persist no-expiry subscriptions across restarts" with "their verification status alongside them": after a restart it delivers with no resubscribe', async () => {
    const made = await subscribe({ ttlMs: null });
    const before = await made.stub.describe();
    expect(before).toMatchObject({ refreshBefore: null, state: 'active' });
    await abortAllDurableObjects();
    const stub = subscriptionStub(made.id);
    expect(await stub.describe()).toEqual(before);
    const { eventId } = await note(`${made.tok} after the restart`);
    await pokeToHead(stub);
    const log = await receivedUntil(made.endpoint, (l) => l.some((r) => idOf(r) === eventId && r.answered === 200), 'the delivery');
    expect(await verifiesUnder(log.at(-1)!, SECRET_A)).toBe(true);
  });

  it('a no-expiry subscription suspended past the drop time: "MAY drop … and SHOULD attempt a `terminated` envelope" (NotFound delivery_failed), then gone', async () => {
    const made = await subscribe({ ttlMs: null });
    await script(made.endpoint, [], { kind: 'status', status: 503 });
    await note(`${made.tok} a`);
    await note(`${made.tok} b`);
    await pokeToHead(made.stub);
    await until(async () => (await made.stub.describe())?.state === 'suspended', 'suspended');
    await script(made.endpoint, []);
    const object = objectOf(made.id);
    // The suspension made as old as the policy's drop time (7 days): the record re-read after a restart.
    await runInDurableObject(object, (_instance, state) => {
      state.storage.sql.exec('UPDATE subscription SET suspended_at = suspended_at - ?', config.retry.dropNoExpiryAfterMs);
    });
    await abortAllDurableObjects();
    const attempted = (await received(made.endpoint)).length;
    await runDurableObjectAlarm(objectOf(made.id));
    const log = await receivedUntil(made.endpoint, (l) => l.slice(attempted).some((r) => r.answered === 200), 'the terminated envelope');
    const last = log.at(-1)!;
    expect(bodyOf(last)).toEqual({
      type: 'terminated',
      error: eventsError('NotFound', 'delivery kept failing: the subscription was dropped', {
        kind: 'subscription',
        reason: 'delivery_failed',
      }),
    });
    expect(log.slice(attempted).every((r) => bodyOf(r).type === 'terminated')).toBe(true);
    await until(async () => (await subscriptionStub(made.id).describe()) === null, 'ended');
  });

  it('a finite TTL: its alarm ends it silently at expiry (no envelope)', async () => {
    const made = await subscribe({ ttlMs: config.ttl.minTtlMs });
    const expiresAt = Date.parse((await made.stub.describe())!.refreshBefore!);
    await until(() => Date.now() > expiresAt, 'past the expiry');
    expect(await made.stub.probe()).toBeNull();
    await runDurableObjectAlarm(objectOf(made.id));
    expect(await made.stub.describe()).toBeNull();
    expect(await received(made.endpoint)).toEqual([]);
  });
});
