/**
 * The webhook metrics points (core/metrics.ts `webhook_attempt`, `webhook_subscription`,
 * `webhook_verification`), as the fixture's objects and Worker write them to the recorder this
 * project binds as MCP_METRICS (test/fixture-server/metrics-recorder.ts): each attempt with its
 * outcome, number, category and lag (webhook-delivery.ts, the one place attempts are judged), a
 * held wake, each subscription outcome where the object decides it, each verification where
 * the Worker makes or skips it — and nothing of the URL, the host, the subscription's id or a
 * string the client chose. Each test has its own principal: its points are the ones of its
 * keyed index, whatever other tests write meanwhile. A principal's first points wait for its
 * index's HMAC, so they may be recorded out of order: compared as multisets (sorted).
 */
import { expect, it } from 'vitest';
import { eventsError } from '../../src/core/events-wire.ts';
import { grantTtl } from '../../src/core/webhook-subscription-key.ts';
import { keyedIndex, recordedPoints, TEST_METRICS_KEY } from '../fixture-server/metrics-recorder.ts';
import { eventsRequest, token } from '../support/events-http.ts';
import { answerOf } from '../support/modern-http.ts';
import { newPrincipal } from '../support/principals.ts';
import {
  config,
  hookUrl,
  note,
  pokeToHead,
  RECEIVER,
  receivedUntil,
  SECRET_A,
  script,
  subscribe,
  until,
} from '../support/webhook-subscription.ts';
import { endpoint, newSecret } from './receiver.ts';

interface Point {
  readonly indexes: string[];
  readonly blobs: string[];
  readonly doubles: number[];
}

/** The webhook points of `principal` so far: those under its keyed index. */
async function pointsOf(principal: string): Promise<Point[]> {
  const index = await keyedIndex(TEST_METRICS_KEY, principal);
  return (recordedPoints as unknown as Point[]).filter((point) => point.indexes[0] === index && point.blobs[0]!.startsWith('webhook_'));
}

/** `kind outcome [category]` of each point, sorted. */
const named = (points: readonly Point[]) => points.map(({ blobs }) => [blobs[0], blobs[4], blobs[5]].filter(Boolean).join(' ')).sort();

/** `outcome attempt category lag` of each webhook_attempt point, lag reduced to whether it is positive. */
const attempts = (points: readonly Point[]) =>
  points
    .filter(({ blobs }) => blobs[0] === 'webhook_attempt')
    .map(({ blobs, doubles }) => ({ outcome: blobs[4], attempt: doubles[1], category: blobs[5], lagged: doubles[2]! > 0 }))
    .sort((a, b) => `${a.outcome}${a.attempt}`.localeCompare(`${b.outcome}${b.attempt}`));

/** Waits for `principal`'s points to satisfy `check`; answers them. */
async function pointsUntil(principal: string, check: (names: string[]) => boolean, what: string): Promise<Point[]> {
  await until(async () => check(named(await pointsOf(principal))), what);
  return pointsOf(principal);
}

/** No point names what identifies the subscription or was the client's to choose. */
function expectNothingIdentifying(points: readonly Point[], ...strings: string[]): void {
  const host = new URL(RECEIVER).host;
  for (const { blobs } of points) {
    for (const blob of blobs) for (const string of [host, 'sub_', '://', ...strings]) expect(blob).not.toContain(string);
    // The era and the closed sets only.
    expect(blobs[1]).toBe('modern');
    expect(blobs.slice(2, 4)).toEqual(['', '']);
  }
}

const refreshOf = (secret: string) => ({ secret, ttl: grantTtl(600_000, Date.now(), config.ttl), cursor: null, grant: 'grant-2' });

it('an object: created; 503 then 2xx (retry 1 http_5xx, delivered 2, no lag); delivered 1 with its lag; 410 declined; refreshed; unsubscribed', async () => {
  const principal = `metrics-${crypto.randomUUID()}`;
  const made = await subscribe({ principal });
  await script(made.endpoint, [{ kind: 'status', status: 503 }]);
  await note(`${made.tok} retried`);
  await pokeToHead(made.stub);
  await receivedUntil(made.endpoint, (log) => log.some((r) => r.answered === 200), 'the retry delivered');
  await pointsUntil(principal, (names) => names.includes('webhook_attempt delivered'), 'the retry counted');

  await note(`${made.tok} at once`);
  await pokeToHead(made.stub);
  await script(made.endpoint, [{ kind: 'status', status: 410 }]);
  await note(`${made.tok} declined`);
  await pokeToHead(made.stub);
  expect((await made.stub.refresh(refreshOf(SECRET_A))).live).toBe(true);
  expect(await made.stub.unsubscribe()).toBe(true);

  const points = await pointsUntil(principal, (names) => names.includes('webhook_subscription unsubscribed'), 'the end counted');
  expect(named(points)).toEqual([
    'webhook_attempt declined http_4xx',
    'webhook_attempt delivered',
    'webhook_attempt delivered',
    'webhook_attempt retry http_5xx',
    'webhook_subscription created',
    'webhook_subscription refreshed',
    'webhook_subscription unsubscribed',
  ]);
  expect(attempts(points)).toEqual([
    { outcome: 'declined', attempt: 1, category: 'http_4xx', lagged: false },
    { outcome: 'delivered', attempt: 1, category: '', lagged: expect.any(Boolean) },
    // A retry's lag is the policy's, not counted: only a first attempt delivered has one.
    { outcome: 'delivered', attempt: 2, category: '', lagged: false },
    { outcome: 'retry', attempt: 1, category: 'http_5xx', lagged: false },
  ]);
  // Its lag: from the log's storing to the 2xx, never negative.
  expect(points.filter(({ blobs }) => blobs[0] === 'webhook_attempt').every(({ doubles }) => doubles[2]! >= 0 && doubles[0]! >= 0)).toBe(
    true,
  );
  expectNothingIdentifying(points, made.id, made.endpoint, made.tok);
});

it('a streak suspends it (one `suspended` attempt), a poke of a matching occurrence meanwhile is `held`, a refresh `reactivated`', async () => {
  const principal = `metrics-${crypto.randomUUID()}`;
  const made = await subscribe({ principal });
  await script(made.endpoint, [], { kind: 'status', status: 503 });
  await note(`${made.tok} a`);
  await pokeToHead(made.stub);
  await until(async () => (await made.stub.describe())?.state === 'suspended', 'suspended');
  // The log's own poke of a new occurrence carries it: held, not attempted.
  const text = `${made.tok} c`;
  const c = await note(text);
  const occurrence = {
    seq: c.seq,
    storedAt: c.storedAt,
    eventId: c.eventId,
    timestamp: c.timestamp,
    data: JSON.stringify({ text, n: text.length }),
  };
  expect(await made.stub.poke({ logId: c.logId, head: c.seq + 1, earliestSeq: 0, occurrences: [occurrence] })).toBe('processed');
  await pointsUntil(principal, (names) => names.includes('webhook_attempt held'), 'held counted');
  await script(made.endpoint, []);
  expect((await made.stub.refresh(refreshOf(SECRET_A))).live).toBe(true);
  const points = await pointsUntil(principal, (names) => names.includes('webhook_subscription reactivated'), 'reactivated');
  const names = named(points);
  expect(names.filter((name) => name === 'webhook_attempt suspended http_5xx')).toHaveLength(1);
  expect(attempts(points).find(({ outcome }) => outcome === 'held')).toEqual({ outcome: 'held', attempt: 0, category: '', lagged: false });
  expect(names.filter((name) => name.startsWith('webhook_subscription'))).toEqual([
    'webhook_subscription created',
    'webhook_subscription reactivated',
  ]);
  expectNothingIdentifying(points, made.id, made.endpoint, made.tok);
  await made.stub.unsubscribe();
});

it('ended by its cause: the operator’s termination once (its `terminated` envelope delivered, attempt 1), an expiry', async () => {
  const principal = `metrics-${crypto.randomUUID()}`;
  const ended = await subscribe({ principal });
  const error = eventsError('Forbidden', 'ended by the operator', { reason: 'ended_by_operator' });
  expect(await ended.stub.terminate({ error, cause: 'operator' })).toBe(true);
  const expiring = await subscribe({ principal, ttlMs: 1_000 });
  const points = await pointsUntil(
    principal,
    (names) => names.includes('webhook_subscription expired') && names.includes('webhook_attempt delivered'),
    'both ended',
  );
  expect(named(points).filter((name) => name.startsWith('webhook_subscription'))).toEqual([
    'webhook_subscription created',
    'webhook_subscription created',
    'webhook_subscription expired',
    'webhook_subscription operator',
  ]);
  expect(attempts(points)).toEqual([{ outcome: 'delivered', attempt: 1, category: '', lagged: false }]);
  expectNothingIdentifying(points, ended.id, expiring.id, ended.endpoint, expiring.endpoint);
});

it('the Worker: a handshake `verified`, the registry’s `cached` one for the same URL, a wrong echo `challenge_failed`; the object counts `created`', async () => {
  const { id: principal, auth } = await newPrincipal('metrics');
  const hook = endpoint('metrics');
  const secret = newSecret();
  const subscribeTo = (url: string, contains: string) =>
    eventsRequest('events/subscribe', { name: 'demo.note', arguments: { contains }, delivery: { mode: 'webhook', url, secret } }, auth);
  expect((await answerOf(await subscribeTo(hook.url, token()))).error).toBeUndefined();
  expect((await answerOf(await subscribeTo(hook.url, token()))).error).toBeUndefined();
  const wrong = endpoint('metrics-wrong');
  await wrong.script([{ kind: 'wrong' }]);
  expect((await answerOf(await subscribeTo(wrong.url, token()))).error?.data).toMatchObject({ reason: 'challenge_failed' });
  const points = await pointsUntil(principal, (names) => names.includes('webhook_verification challenge_failed'), 'three verifications');
  expect(named(points)).toEqual([
    'webhook_subscription created',
    'webhook_subscription created',
    'webhook_verification cached',
    'webhook_verification challenge_failed',
    'webhook_verification verified',
  ]);
  expectNothingIdentifying(points, hook.name, wrong.name, hookUrl(hook.name));
});
