// E3: MCP Events webhooks (SEP-3415 *Webhook-Based Delivery*, issue 47), `ours` only: no other
// peer serves `events/subscribe` (n/a, as E1 gives a peer without events). Subscribing needs an
// authenticated principal and a receiver origin the server may POST to over http, so E3 runs
// against the helper `ours-webhooks` (the same Worker as `ours`, AUTH=jwt with a key made for the
// run, WEBHOOK_DEV_ORIGINS = the receiver's origin; bench/peers/index.mjs), started once by the
// first round and reused by the others, and a receiver in this process (../webhooks.mjs). Each
// round subscribes `demo.note` anew (a new URL path: a new subscription, its own object) and ends
// with `events/unsubscribe`, so one subscription at a time listens on the helper's log:
// - E3a: E1's shape — occurrences emitted one at a time (`post_note`, with the token), each sent
//   once the one before was received: p50/p90/p99 of the call sent → the webhook POST's body in
//   at the receiver (answered 200);
// - E3b: E2's shape — 8 concurrent emitters, each sequential, not waiting for deliveries:
//   deliveries ÷ (first call sent → last delivery received), and whether every one arrived;
// - E3c: with B1's counters on, rows written, rows read and DO requests (every class: the log and
//   the subscription) per delivered occurrence, one emitter awaiting each delivery and 8 at once;
//   the subscription object's own share; the retry path: the receiver answers each occurrence's
//   first attempt 503 and its retry 200 (the helper's first retry 100–200 ms after), the
//   subscription's rows of that occurrence less a delivered one's; and each further retry: first two attempts 503 (the
//   second retry 0.4–0.8 s after), less the retry path. Each priced with billing.mjs (USD per
//   million). Also what the round's subscribe and unsubscribe wrote.
// Every POST is checked against the subscription's secret (a bad signature is noted).
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { perUnit, usdPerMillion } from '../billing.mjs';
import { modernRequest, now } from '../client.mjs';
import { percentile } from '../stats.mjs';
import { makeIssuer, newSecret, startReceiver } from '../webhooks.mjs';
import { B1_SETTLE_MS, CALL_TIMEOUT_MS, billingOf, inBatches, measure, setBilling } from './shared.mjs';

const EVENTS = { extensions: { 'io.modelcontextprotocol/events': {} } };
const TYPE = 'demo.note';
const HELPER = 'ours-webhooks';
/** How long an occurrence may take to reach the receiver after its call was sent (a retried one: its retry too). */
const DELIVERY_TIMEOUT_MS = 10_000;
const NO_WEBHOOKS = 'no webhooks (events/subscribe: ours only, through its helper ours-webhooks)';

/** The helper, the receiver and the key, made once per run (the first round that needs them). */
let setup;
function setUp(startHelper) {
  setup ??= (async () => {
    const receiver = await startReceiver();
    const issuer = makeIssuer();
    const helper = await startHelper(HELPER, { vars: { AUTH_JWKS: issuer.jwks, WEBHOOK_DEV_ORIGINS: receiver.origin } });
    return { receiver, issuer, helper };
  })();
  return setup;
}

/** A 2026-07-28 request of the helper as `auth`'s principal: the result, or a throw naming the answer. */
async function call(helper, auth, method, params) {
  const { status, message } = await modernRequest(helper.url, method, params, {
    capabilities: EVENTS,
    timeoutMs: CALL_TIMEOUT_MS,
    headers: auth,
  });
  if (message?.result === undefined || message.result.isError) {
    throw new Error(`${method}: HTTP ${status} ${JSON.stringify(message)?.slice(0, 300)}`);
  }
  return message.result;
}

/** One `post_note {text}` on the helper: its time sent and returned. */
async function emit(helper, auth, text) {
  const tSent = now();
  await call(helper, auth, 'tools/call', { name: 'post_note', arguments: { text } });
  return { tSent, tReturned: now() };
}

/** One occurrence emitted and awaited at the receiver: ms from the call sent to its delivery (answered 200) and to the call's result. */
async function emitAndReceive(context, label) {
  const { helper, auth, receiver } = context;
  const text = `${label} ${randomUUID()}`;
  const arrived = receiver.arrival(text, DELIVERY_TIMEOUT_MS);
  arrived.catch(() => undefined); // a failed emit throws first
  const { tSent, tReturned } = await emit(helper, auth, text);
  const { t, attempts } = await arrived;
  return { deliveryMs: t - tSent, returnMs: tReturned - tSent, attempts };
}

const METRICS = [
  { key: 'p50_ms', label: 'E3 emit → webhook received p50 ms', better: 'lower' },
  { key: 'p90_ms', label: 'E3 emit → webhook received p90 ms', better: 'lower' },
  { key: 'p99_ms', label: 'E3 emit → webhook received p99 ms', better: 'lower' },
  { key: 'emit_p50_ms', label: 'E3 tools/call post_note → its result p50 ms', better: 'lower' },
  { key: 'deliveries_per_s', label: 'E3 deliveries/s, one subscription (8 emitters)', better: 'higher' },
  { key: 'all_delivered', label: 'E3 every occurrence of the 8 emitters delivered once', better: 'higher', kind: 'yesno' },
  {
    key: 'rows_written_per_delivery',
    label: 'E3 rows written per delivered occurrence (log + subscription), one emitter',
    better: 'lower',
  },
  { key: 'webhook_rows_written_per_delivery', label: 'E3 of which the subscription object, one emitter', better: 'lower' },
  { key: 'rows_read_per_delivery', label: 'E3 rows read per delivered occurrence, one emitter', better: 'lower' },
  { key: 'requests_per_delivery', label: 'E3 DO requests per delivered occurrence, one emitter', better: 'lower' },
  { key: 'usd_per_m_deliveries', label: 'E3 USD per million deliveries, one emitter', better: 'lower' },
  { key: 'load_rows_written_per_delivery', label: 'E3 rows written per delivered occurrence, 8 emitters', better: 'lower' },
  { key: 'load_webhook_rows_written_per_delivery', label: 'E3 of which the subscription object, 8 emitters', better: 'lower' },
  { key: 'load_requests_per_delivery', label: 'E3 DO requests per delivered occurrence, 8 emitters', better: 'lower' },
  { key: 'load_usd_per_m_deliveries', label: 'E3 USD per million deliveries, 8 emitters', better: 'lower' },
  { key: 'retry_rows_written', label: 'E3 rows written by the retry path (503 once, then 200), over a delivery', better: 'lower' },
  { key: 'retry_rows_read', label: 'E3 rows read by the retry path', better: 'lower' },
  { key: 'retry_requests', label: 'E3 DO requests of the retry path', better: 'lower' },
  { key: 'retry_usd_per_m', label: 'E3 USD per million retried occurrences (the retry path alone)', better: 'lower' },
  { key: 'next_retry_rows_written', label: 'E3 rows written per further retry (503 twice, over once)', better: 'lower' },
  { key: 'next_retry_requests', label: 'E3 DO requests per further retry', better: 'lower' },
  { key: 'subscribe_rows_written', label: 'E3 rows written by events/subscribe (new subscription, no registry)', better: 'lower' },
  { key: 'unsubscribe_rows_written', label: 'E3 rows written by events/unsubscribe', better: 'lower' },
];

const nulls = () => Object.fromEntries(METRICS.map(({ key }) => [key, null]));

/** The subscription object's share of an operation's rows written (perOperation's `by_class`). */
export const webhookShare = (op) => op.by_class?.BenchWebhooks?.rowsWritten ?? 0;

/**
 * The subscription object's billed counts of `op` less those of `base` (perUnit of two
 * perOperation results, `by_class.BenchWebhooks`), priced. A retry's rows are the subscription's:
 * the log writes the same per occurrence whether its delivery fails or not, and its retention
 * deletes (a batch when the log passes its bound) would land in one window and not the other.
 */
export function webhookDifference(op, base) {
  const counts = { rowsWritten: 0, rowsRead: 0, requests: 0, ...perUnit(op, base, 1).by_class?.BenchWebhooks };
  return { ...counts, usd_per_million: usdPerMillion(counts) };
}

/**
 * The figures of E3c from its measured operations (billing.mjs perOperation results): per
 * delivered occurrence (one emitter, `delivery`; 8 emitters, `load`), the retry path (the
 * subscription's counts of `retried` less those of `delivery`: the same sequential shape, each
 * occurrence failing once), a further retry (`retriedTwice` less `retried`, likewise),
 * subscribe, unsubscribe.
 */
export function billedFigures({ delivery, load, retried, retriedTwice, subscribe, unsubscribe }) {
  const retry = webhookDifference(retried, delivery);
  const next = webhookDifference(retriedTwice, retried);
  return {
    rows_written_per_delivery: delivery.billed.rowsWritten,
    webhook_rows_written_per_delivery: webhookShare(delivery),
    rows_read_per_delivery: delivery.billed.rowsRead,
    requests_per_delivery: delivery.billed.requests,
    usd_per_m_deliveries: delivery.usd_per_million,
    load_rows_written_per_delivery: load.billed.rowsWritten,
    load_webhook_rows_written_per_delivery: webhookShare(load),
    load_requests_per_delivery: load.billed.requests,
    load_usd_per_m_deliveries: load.usd_per_million,
    retry_rows_written: retry.rowsWritten,
    retry_rows_read: retry.rowsRead,
    retry_requests: retry.requests,
    retry_usd_per_m: retry.usd_per_million,
    next_retry_rows_written: next.rowsWritten,
    next_retry_requests: next.requests,
    subscribe_rows_written: subscribe.billed.rowsWritten,
    unsubscribe_rows_written: unsubscribe.billed.rowsWritten,
  };
}

/** `count` occurrences from `emitters` concurrent emitters, each awaiting its delivery before the next. */
async function deliverAll(context, emitters, count, label) {
  const perEmitter = Math.ceil(count / emitters);
  const done = await inBatches(emitters, emitters, async (e) => {
    for (let i = 0; i < perEmitter; i++) await emitAndReceive(context, `${label} ${e}.${i}`);
  });
  const failed = done.find((result) => result.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return emitters * perEmitter;
}

/** One round against the helper: subscribe, E3a, E3b, E3c, unsubscribe. */
async function round(context, sizes) {
  const { helper, auth, receiver } = context;
  const notes = [];
  const secret = newSecret();
  receiver.secret(secret);
  receiver.failures(0);
  const params = { name: TYPE, arguments: {}, delivery: { mode: 'webhook', url: receiver.url(`/hook/e3-${randomUUID()}`), secret } };
  const before = { ...receiver.counts };
  // Counting on for the subscribe (the subscription's object and the log's row are counted from their first request with it on).
  await setBilling(helper, true);
  let subscribed;
  const subscribe = await measure(helper, 1, async () => {
    subscribed = await call(helper, auth, 'events/subscribe', params);
  });
  await setBilling(helper, false);
  try {
    // E3a
    const runs = [];
    for (let i = -sizes.e1Warmup; i < sizes.e1Emits; i++) {
      const run = await emitAndReceive(context, `E3a ${i}`);
      if (i >= 0) runs.push(run);
    }
    // E3b
    const texts = [];
    const t0 = now();
    const returns = [];
    let lastReturn = t0;
    const emitted = await inBatches(sizes.e2Emitters, sizes.e2Emitters, async (e) => {
      for (let i = 0; i < sizes.e2Emits; i++) {
        const text = `E3b ${e}.${i} ${randomUUID()}`;
        texts.push(text);
        const { tSent, tReturned } = await emit(helper, auth, text);
        returns.push(tReturned - tSent);
        lastReturn = Math.max(lastReturn, tReturned);
      }
    });
    const failedEmit = emitted.find((result) => result.status === 'rejected');
    if (failedEmit !== undefined) throw failedEmit.reason;
    const arrivals = await Promise.allSettled(texts.map((text) => receiver.arrival(text, DELIVERY_TIMEOUT_MS)));
    const received = arrivals.filter((a) => a.status === 'fulfilled').map((a) => a.value.t);
    const missing = texts.length - received.length;
    const lastMs = Math.max(...received) - t0;
    if (missing > 0) notes.push(`E3b: ${missing} of ${texts.length} occurrences not received within ${DELIVERY_TIMEOUT_MS} ms`);
    // E3c
    await setBilling(helper, true);
    let billed;
    try {
      await emitAndReceive(context, 'E3c unrecorded');
      await sleep(B1_SETTLE_MS); // its position written before the window opens
      const delivery = await measure(helper, sizes.eBillingEmits, () => deliverAll(context, 1, sizes.eBillingEmits, 'E3c'));
      const loadCount = sizes.e2Emitters * Math.ceil(sizes.eBillingEmits / sizes.e2Emitters);
      const load = await measure(helper, loadCount, () => deliverAll(context, sizes.e2Emitters, loadCount, 'E3c load'));
      receiver.failures(1);
      // The subscription's first failure creates its failing table (2 rows, once): not a retry's.
      const first = await emitAndReceive(context, 'E3c retry, unrecorded');
      if (first.attempts !== 2) notes.push(`retry: the unrecorded occurrence took ${first.attempts} attempts`);
      await sleep(B1_SETTLE_MS);
      const attempts = { once: [], twice: [] };
      const failing = (failures, into) => async () => {
        receiver.failures(failures);
        for (let i = 0; i < sizes.eBillingRetries; i++) into.push((await emitAndReceive(context, `E3c retry ${failures}.${i}`)).attempts);
      };
      const retried = await measure(helper, sizes.eBillingRetries, failing(1, attempts.once));
      const retriedTwice = await measure(helper, sizes.eBillingRetries, failing(2, attempts.twice));
      receiver.failures(0);
      if (attempts.once.some((n) => n !== 2) || attempts.twice.some((n) => n !== 3)) {
        notes.push(`retry: attempts per occurrence ${attempts.once.join(',')} and ${attempts.twice.join(',')} (2 and 3 expected)`);
      }
      const unsubscribe = await measure(helper, 1, async () => {
        await call(helper, auth, 'events/unsubscribe', { name: TYPE, arguments: {}, delivery: params.delivery });
        subscribed = undefined;
      });
      billed = { delivery, load, retried, retriedTwice, subscribe, unsubscribe, retry_attempts: attempts };
    } finally {
      receiver.failures(0);
      await setBilling(helper, false).catch(() => undefined);
    }
    const counts = Object.fromEntries(Object.entries(receiver.counts).map(([key, value]) => [key, value - before[key]]));
    if (counts.badSignatures > 0) notes.push(`${counts.badSignatures} of ${counts.posts} POSTs not signed under the subscription's secret`);
    if (counts.duplicates > 0) notes.push(`${counts.duplicates} occurrences delivered again after a 200`);
    if (counts.verifications !== 1) notes.push(`${counts.verifications} verification POSTs (1 expected)`);
    const delivery = runs.map((run) => run.deliveryMs);
    return {
      metrics: {
        p50_ms: percentile(delivery, 50),
        p90_ms: percentile(delivery, 90),
        p99_ms: percentile(delivery, 99),
        emit_p50_ms: percentile(
          runs.map((run) => run.returnMs),
          50,
        ),
        deliveries_per_s: received.length / (lastMs / 1000),
        all_delivered: missing === 0 && counts.duplicates === 0 ? 1 : 0,
        ...billedFigures(billed),
      },
      status: notes.join('; ') || undefined,
      raw: {
        subscription: subscribed?.id ?? null,
        delivery_ms: delivery,
        return_ms: runs.map((run) => run.returnMs),
        delivered_before_return: runs.filter((run) => run.deliveryMs <= run.returnMs).length,
        e3b: {
          emitters: sizes.e2Emitters,
          emits: texts.length,
          received: received.length,
          last_delivery_ms: lastMs,
          emits_per_s: texts.length / ((lastReturn - t0) / 1000),
          return_ms: returns,
        },
        receiver: counts,
        billing: billed,
      },
    };
  } finally {
    if (subscribed !== undefined) {
      await call(helper, auth, 'events/unsubscribe', { name: TYPE, arguments: {}, delivery: params.delivery }).catch(() => undefined);
    }
  }
}

export const e3 = {
  id: 'E3',
  title: 'MCP Events webhooks: emit → webhook received, deliveries/s per subscription, rows per delivery and per retry',
  timeoutMs: 300_000,
  metrics: METRICS,
  /**
   * `ours` only (its helper `ours-webhooks`, started by the first round that runs it); every
   * other peer n/a. One round: `round` above.
   */
  async runAcross({ peers, sizes, startHelper }) {
    const results = {};
    for (const peer of peers) {
      if (peer.name !== 'ours') results[peer.name] = { metrics: nulls(), status: NO_WEBHOOKS, raw: {} };
    }
    if (!peers.some((peer) => peer.name === 'ours')) return results;
    try {
      if (startHelper === undefined) throw new Error('E3 needs startHelper (run.mjs) for its helper ours-webhooks');
      const { receiver, issuer, helper } = await setUp(startHelper);
      if ((await billingOf(helper)) === undefined) throw new Error(`${HELPER} has no billing counters`);
      const auth = { Authorization: `Bearer ${issuer.token('bench-e3')}` };
      results.ours = await round({ helper, auth, receiver }, sizes);
    } catch (error) {
      results.ours = { error };
    }
    return results;
  },
};
