// The webhook fault soak (issue 47; docs/events.md, *Webhooks*): `wrangler dev` (the fixture
// server, AUTH=jwt with a key made for this run, state persisted in a temporary folder) delivers
// demo.note occurrences to a receiver on 127.0.0.1 that this script controls
// (webhook-soak-receiver.mjs: receiveWebhook with a deduplicating store), through two
// subscriptions — one with a 2-minute TTL the script refreshes, one with no expiry — while
// `--calls` notes (default 1,000) are posted in phases:
//   up → the receiver down (connections refused) for `--outage-ms` (default 2 minutes) → 5xx in
//   three 20-s bursts → answers slower than the server's attempt timeout → acknowledgements
//   dropped with the connection → the server SIGKILLed mid-delivery twice and restarted.
// Then it waits, bounded by the retry policy's window, for every note to be processed, and
// checks: every posted note processed exactly once per subscription (0 lost, 0 duplicates after
// deduplication by webhook-id), 0 signature failures, 0 event POSTs before the subscription's
// verification, no gap or terminated envelope (nothing may be given up: the outage is shorter
// than the policy's window), and attempts per occurrence within the documented policy (at most
// `maxAttempts`, plus one per kill that cut an attempt; the wait before retry n at least its
// step's lower bound, except across a kill). Prints one line and the attempt histogram; exits 1
// on any failure. Loopback only; every wait bounded. ~12 minutes with the defaults.
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { newWebhookSecret } from '../../dist/client/index.js';
import { webhookServer } from './webhook-server.mjs';
import { startSoakReceiver } from './webhook-soak-receiver.mjs';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '1000' },
    'outage-ms': { type: 'string', default: '120000' },
    port: { type: 'string', default: process.env.WEBHOOK_SOAK_PORT ?? '8803' },
    'receiver-port': { type: 'string', default: process.env.WEBHOOK_SOAK_RECEIVER_PORT ?? '8804' },
  },
});
const calls = Number(values.calls);
const outageMs = Number(values['outage-ms']);
const port = Number(values.port);
/** DEFAULT_RETRY_POLICY (core/webhook-retry.ts): the soak runs the documented policy, not a test's. */
const POLICY = { firstRetryMs: 10_000, factor: 4, maxDelayMs: 600_000, jitter: 0.5, maxAttempts: 5, windowMs: 900_000 };
const ATTEMPT_TIMEOUT_MS = 10_000;
/** The receiver's slow answers come after the attempt timeout. */
const SLOW_MS = ATTEMPT_TIMEOUT_MS + 2_000;
const TTL_MS = 120_000;

const secret = newWebhookSecret();
const receiver = await startSoakReceiver({ port: Number(values['receiver-port']), secrets: [secret], slowMs: SLOW_MS });
const tag = `soak-${Date.now()}`;

const server = await webhookServer({ port, receiverOrigin: receiver.origin });

const subscriptions = [
  { path: '/hook/ttl', ttlMs: TTL_MS },
  { path: '/hook/forever', ttlMs: null },
];

/** Subscribes (or refreshes) with the cursor the application last persisted, as a client whose subscription lapsed resumes. */
async function subscribe(subscription) {
  const cursor = subscription.id === undefined ? null : (receiver.record.cursors.get(subscription.id) ?? null);
  const result = await server.subscribe({ tag, path: subscription.path, secret, ttlMs: subscription.ttlMs, cursor });
  subscription.id = result.id;
  return result;
}

let kills = 0;
const killTimes = [];
const emitted = [];
let refreshes = 0;
let refreshTimer;
const started = Date.now();
try {
  await server.start();
  for (const subscription of subscriptions) await subscribe(subscription);
  // The TTL'd subscription is refreshed every half TTL, as a client does (its refreshes cross the kills too).
  refreshTimer = setInterval(() => {
    subscribe(subscriptions[0])
      .then(() => refreshes++)
      .catch(() => undefined);
  }, TTL_MS / 2);

  const share = (fraction) => Math.round(calls * fraction);
  const phases = [
    { name: 'up', notes: share(0.15), run: async (post) => post() },
    {
      name: 'down',
      notes: share(0.2),
      run: async (post) => {
        await receiver.set('down');
        await post(outageMs);
        await receiver.set('up');
      },
    },
    {
      name: '5xx',
      notes: share(0.2),
      run: async (post) => {
        const posting = post(90_000);
        for (let burst = 0; burst < 3; burst++) {
          await receiver.set('5xx');
          await sleep(20_000);
          await receiver.set('up');
          await sleep(10_000);
        }
        await posting;
      },
    },
    {
      name: 'slow',
      notes: share(0.1),
      run: async (post) => {
        await receiver.set('slow');
        await post(20_000);
        await receiver.set('up');
      },
    },
    {
      name: 'ackdrop',
      notes: share(0.1),
      run: async (post) => {
        await receiver.set('ackdrop');
        await post(20_000);
        await receiver.set('up');
      },
    },
    {
      name: 'kills',
      notes: calls - share(0.75),
      run: async (post, notes) => {
        // Two SIGKILLs while notes flow and are being delivered: after a third and two thirds of them.
        let posted = 0;
        await post(undefined, async () => {
          posted++;
          if (posted === Math.floor(notes / 3) || posted === Math.floor((2 * notes) / 3)) {
            killTimes.push(Date.now());
            await server.kill();
            kills++;
            await server.start();
          }
        });
      },
    },
  ];
  let next = 0;
  for (const phase of phases) {
    const first = next;
    next += phase.notes;
    /** Posts the phase's notes, spread over `overMs` when given, calling `after` after each. */
    const post = async (overMs, after) => {
      for (let i = first; i < first + phase.notes; i++) {
        emitted.push(await server.postNote(tag, i));
        if (after !== undefined) await after();
        if (overMs !== undefined) await sleep(overMs / phase.notes);
      }
    };
    await phase.run(post, phase.notes);
    console.log(`webhook soak: phase ${phase.name}: ${phase.notes} notes posted (${Math.round((Date.now() - started) / 1000)} s)`);
  }

  // Drain: bounded by the policy's window from the last note (every retry falls inside it).
  const deadline = Date.now() + POLICY.windowMs + 60_000;
  const processedFor = (subscription) =>
    emitted.filter((id) => (receiver.record.processed.get(`${subscription.id} ${id}`) ?? 0) > 0).length;
  let told = Date.now();
  while (Date.now() < deadline && subscriptions.some((subscription) => processedFor(subscription) < emitted.length)) {
    await sleep(1_000);
    if (Date.now() - told >= 30_000) {
      told = Date.now();
      const counts = subscriptions.map((subscription) => `${subscription.path} ${processedFor(subscription)}`).join(', ');
      console.log(`webhook soak: draining, ${counts} of ${emitted.length} processed (${Math.round((Date.now() - started) / 1000)} s)`);
    }
  }
} finally {
  clearInterval(refreshTimer);
  await server.close();
  await receiver.close();
}

// The checks.
const { record } = receiver;
let lost = 0;
let duplicates = 0;
for (const subscription of subscriptions) {
  for (const id of emitted) {
    const times = record.processed.get(`${subscription.id} ${id}`) ?? 0;
    if (times === 0) lost++;
    if (times > 1) duplicates += times - 1;
  }
}
/** The least a retry n waits: its step's lower bound (webhook-retry.ts retryDelay with random 0). */
const lowerBound = (n) => Math.floor(Math.min(POLICY.maxDelayMs, POLICY.firstRetryMs * POLICY.factor ** (n - 1)) * (1 - POLICY.jitter));
const acrossKill = (from, to) => killTimes.some((at) => at >= from - ATTEMPT_TIMEOUT_MS && at <= to);
let overAttempts = 0;
let tooSoon = 0;
const histogram = new Map();
for (const attempts of record.attempts.values()) {
  for (const subscription of subscriptions) {
    const mine = attempts.filter((attempt) => attempt.subscription === subscription.id);
    if (mine.length === 0) continue;
    histogram.set(mine.length, (histogram.get(mine.length) ?? 0) + 1);
    const cutByKills = mine.filter((attempt, i) => i > 0 && acrossKill(mine[i - 1].at, attempt.at)).length;
    if (mine.length > POLICY.maxAttempts + cutByKills) overAttempts++;
    for (let n = 1; n < mine.length; n++) {
      const waited = mine[n].at - mine[n - 1].at;
      if (!acrossKill(mine[n - 1].at, mine[n].at) && waited < lowerBound(n)) tooSoon++;
    }
  }
}
const failures = [
  lost > 0 && `${lost} lost`,
  duplicates > 0 && `${duplicates} processed twice`,
  record.signatureFailures > 0 && `${record.signatureFailures} signature failures`,
  record.malformed > 0 && `${record.malformed} malformed`,
  record.beforeVerification > 0 && `${record.beforeVerification} deliveries before verification`,
  record.gaps.length > 0 && `${record.gaps.length} gap envelopes`,
  record.terminated.length > 0 && `${record.terminated.length} terminated envelopes`,
  overAttempts > 0 && `${overAttempts} occurrences over the policy's attempts`,
  tooSoon > 0 && `${tooSoon} retries sooner than the policy allows`,
  kills < 2 && `${kills} kills (2 expected)`,
].filter(Boolean);
const attemptsLine = [...histogram.entries()]
  .sort(([a], [b]) => a - b)
  .map(([n, count]) => `${n}: ${count}`)
  .join(', ');
console.log(
  `webhook soak: ${emitted.length} notes × ${subscriptions.length} subscriptions, ${lost} lost, ${duplicates} duplicates processed, ` +
    `${record.signatureFailures} signature failures, ${record.beforeVerification} before verification, ${record.gaps.length} gaps, ` +
    `${kills} kills, ${refreshes} refreshes, ${Math.round((Date.now() - started) / 1000)} s; attempts per delivery {${attemptsLine}}`,
);
if (failures.length > 0) {
  console.error(`webhook soak failed: ${failures.join(', ')}`);
  process.exit(1);
}
