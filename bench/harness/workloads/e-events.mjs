// The E family: MCP Events (SEP-3415, draft) on one event type, `demo.note` (data `{text, n}`),
// emitted by the tool `post_note {text}` — E1 an occurrence's trip from the emitting call to a
// push stream, E2 how many occurrences one type takes per second. Both then count, with B1's
// counters where the peer has them, what an occurrence and an empty poll bill. The wire is the
// 2026-07-28 one (client.mjs `modernRequest`, `modernStream`): emit = `tools/call post_note`,
// push = `events/stream {name, arguments: {}, cursor: null}` (`notifications/events/active`
// first, then one `notifications/events/event` per occurrence, the request's id as
// `_meta["io.modelcontextprotocol/subscriptionId"]`), poll = `events/poll`. A peer whose
// `events/stream` is not answered with that stream gets n/a. The peers: `ours`, and
// `events-floor` (a bare Worker, one SQLite object per type: peers/events-floor).
import { randomUUID } from 'node:crypto';
import { modernRequest, modernStream, now } from '../client.mjs';
import { percentile } from '../stats.mjs';
import { CALL_TIMEOUT_MS, billingOf, inBatches, measure, setBilling } from './shared.mjs';
import { roundOrder } from '../round-order.mjs';

/** What the client declares: the Events extension, in every request's client capabilities. */
const EVENTS = { extensions: { 'io.modelcontextprotocol/events': {} } };
const TYPE = 'demo.note';
const TOOL = 'post_note';
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
const NO_EVENTS = `does not serve events (events/stream {name: "${TYPE}"} not answered with notifications/events/active)`;
/** How long an occurrence may take to reach the stream after its call was sent. */
const DELIVERY_TIMEOUT_MS = 10_000;
/** How long a push stream is held at most (a whole workload). */
const STREAM_MAX_MS = 600_000;

export const isMethod = (event, method) => event.message?.method === method && !('id' in event.message);
export const isOccurrence = (event) => isMethod(event, 'notifications/events/event');

/**
 * A push stream of `demo.note` from now (`cursor: null`), read in the background; resolves once
 * `notifications/events/active` arrived, or with undefined where the peer does not answer with
 * it (not an SSE 200, or an error answer). An active notification without the request's id as
 * its subscription id is an error, not "unserved".
 */
export async function openPush(peer) {
  const stream = await modernStream(
    peer.url,
    'events/stream',
    { name: TYPE, arguments: {}, cursor: null },
    { capabilities: EVENTS, timeoutMs: CALL_TIMEOUT_MS, maxMs: STREAM_MAX_MS },
  );
  if (!stream.ok) {
    stream.close();
    return undefined;
  }
  let active;
  try {
    active = await stream.waitFor((event) => isMethod(event, 'notifications/events/active') || event.message?.id === stream.id, 5_000);
  } catch {
    stream.close();
    return undefined;
  }
  if (!isMethod(active, 'notifications/events/active')) {
    stream.close();
    return undefined;
  }
  if (active.message.params?._meta?.[SUBSCRIPTION_ID] !== stream.id) {
    stream.close();
    throw new Error(`events/stream: active without the subscription id ${stream.id}: ${JSON.stringify(active.message).slice(0, 300)}`);
  }
  return stream;
}

/** One `post_note {text}`: its time sent and returned, or a throw when it did not return a result. */
export async function emit(peer, text) {
  const tSent = now();
  const { status, message } = await modernRequest(
    peer.url,
    'tools/call',
    { name: TOOL, arguments: { text } },
    { capabilities: EVENTS, timeoutMs: CALL_TIMEOUT_MS },
  );
  if (message?.result === undefined || message.result.isError) {
    throw new Error(`tools/call ${TOOL}: HTTP ${status} ${JSON.stringify(message)?.slice(0, 300)}`);
  }
  return { tSent, tReturned: now() };
}

/** What is wrong with an occurrence's frame on `stream` (undefined: nothing). */
function frameProblem(event, stream) {
  const params = event.message.params ?? {};
  if (params._meta?.[SUBSCRIPTION_ID] !== stream.id) return `no subscription id ${stream.id}`;
  if (params.name !== TYPE) return `name ${JSON.stringify(params.name)}`;
  if (typeof params.eventId !== 'string' || params.eventId === '') return 'no eventId';
  if (typeof params.timestamp !== 'string') return 'no timestamp';
  if (typeof params.cursor !== 'string') return 'no cursor';
  if (typeof params.data?.text !== 'string' || !Number.isSafeInteger(params.data?.n)) return `data ${JSON.stringify(params.data)}`;
  return undefined;
}

/**
 * One occurrence emitted with a unique text and awaited on `stream`: the ms from the call sent to
 * its frame's arrival (`deliveryMs`) and to the call's result (`returnMs`). Throws when it does
 * not arrive within DELIVERY_TIMEOUT_MS or its frame is not the wire's.
 */
export async function emitAndDeliver(peer, stream, label) {
  const text = `${label} ${randomUUID()}`;
  const arrived = stream.waitFor((event) => isOccurrence(event) && event.message.params?.data?.text === text, DELIVERY_TIMEOUT_MS);
  arrived.catch(() => undefined); // a failed emit throws first; its waiter must not go unhandled
  const { tSent, tReturned } = await emit(peer, text);
  const event = await arrived;
  const problem = frameProblem(event, stream);
  if (problem !== undefined) throw new Error(`notifications/events/event: ${problem}: ${JSON.stringify(event.message).slice(0, 300)}`);
  return { deliveryMs: event.t - tSent, returnMs: tReturned - tSent, eventId: event.message.params.eventId };
}

/** How many occurrences arrived on `stream` more than once, by eventId. */
function duplicatesOf(stream) {
  const ids = stream.events.filter(isOccurrence).map((event) => event.message.params.eventId);
  return ids.length - new Set(ids).size;
}

/** `events/poll` of `demo.note` at `cursor` (null: from now): its result, or a throw. */
async function poll(peer, cursor) {
  const { status, message } = await modernRequest(
    peer.url,
    'events/poll',
    { name: TYPE, arguments: {}, cursor },
    { capabilities: EVENTS, mcpName: null, timeoutMs: CALL_TIMEOUT_MS },
  );
  const result = message?.result;
  if (result?.resultType !== 'complete' || !Array.isArray(result.events) || typeof result.cursor !== 'string') {
    throw new Error(`events/poll: HTTP ${status} ${JSON.stringify(message)?.slice(0, 300)}`);
  }
  return result;
}

/**
 * What an occurrence and an empty poll bill (B1's counters), counting on for these alone:
 * `emitters` concurrent emitters × `perEmitter` occurrences, each awaited on `stream`, ÷ their
 * number; then `polls` polls at the head (a cursor after the last occurrence), each answered
 * with no events, ÷ `polls`. Undefined where the peer has no counters. `counted` says whether the
 * counters saw the log's storage at all (a log object wrapped before counting was on sees none:
 * peers/shared/billing.ts `instrumentLate`).
 */
async function billedEvents(peer, stream, { emitters, perEmitter, polls }) {
  if ((await billingOf(peer)) === undefined) return undefined;
  await setBilling(peer, true);
  try {
    await emitAndDeliver(peer, stream, 'billing, unrecorded'); // the first request with counting on may wrap the log
    const count = emitters * perEmitter;
    const occurrence = await measure(peer, count, async () => {
      const done = await inBatches(emitters, emitters, async (e) => {
        for (let i = 0; i < perEmitter; i++) await emitAndDeliver(peer, stream, `billing ${e}.${i}`);
      });
      const failed = done.find((result) => result.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    });
    const { cursor } = await poll(peer, null);
    const emptyPoll = await measure(peer, polls, async () => {
      for (let i = 0; i < polls; i++) {
        const result = await poll(peer, cursor);
        if (result.events.length !== 0) throw new Error(`an events/poll at the head answered ${result.events.length} events`);
      }
    });
    const counted = (occurrence.sql.statements ?? 0) + (occurrence.kv.calls ?? 0) > 0;
    return { occurrence, emptyPoll, counted };
  } finally {
    await setBilling(peer, false).catch(() => undefined);
  }
}

const BILLING_METRICS = (id) => [
  { key: 'rows_written_per_event', label: `${id} rows written per occurrence emitted`, better: 'lower' },
  { key: 'rows_read_per_event', label: `${id} rows read per occurrence emitted`, better: 'lower' },
  { key: 'requests_per_event', label: `${id} DO requests per occurrence emitted`, better: 'lower' },
  { key: 'usd_per_m_events', label: `${id} USD per million occurrences`, better: 'lower' },
  { key: 'empty_poll_rows_written', label: `${id} rows written per empty events/poll`, better: 'lower' },
  { key: 'empty_poll_rows_read', label: `${id} rows read per empty events/poll`, better: 'lower' },
];

/** The billing metrics of `billedEvents`' answer (nulls without counters), and a note when there are none. */
function billingFigures(billed) {
  if (billed === undefined) return { metrics: nulls(BILLING_METRICS('')), note: 'no billing counters: rows not counted' };
  if (!billed.counted)
    return { metrics: nulls(BILLING_METRICS('')), note: 'the counters saw no storage of the log (wrapped before counting was on?)' };
  const { occurrence, emptyPoll } = billed;
  return {
    metrics: {
      rows_written_per_event: occurrence.billed.rowsWritten,
      rows_read_per_event: occurrence.billed.rowsRead,
      requests_per_event: occurrence.billed.requests,
      usd_per_m_events: occurrence.usd_per_million,
      empty_poll_rows_written: emptyPoll.billed.rowsWritten,
      empty_poll_rows_read: emptyPoll.billed.rowsRead,
    },
  };
}

const nulls = (metrics) => Object.fromEntries(metrics.map(({ key }) => [key, null]));

export const e1 = {
  id: 'E1',
  title: 'an occurrence from its emitting call (tools/call post_note) to its frame on an open events/stream',
  metrics: [
    { key: 'p50_ms', label: 'E1 emit → push delivery p50 ms', better: 'lower' },
    { key: 'p90_ms', label: 'E1 emit → push delivery p90 ms', better: 'lower' },
    { key: 'p99_ms', label: 'E1 emit → push delivery p99 ms', better: 'lower' },
    { key: 'emit_p50_ms', label: 'E1 tools/call post_note → its result p50 ms', better: 'lower' },
    ...BILLING_METRICS('E1'),
  ],
  /**
   * Per peer one push stream of `demo.note` from now, held through the workload; then `e1Emits`
   * occurrences after `e1Warmup` unrecorded ones, each a `post_note` call with a unique text,
   * sent once the one before arrived, peers interleaved emit by emit (as W1's calls): p50/p90/p99
   * of the call sent → the occurrence's frame received on the stream, p50 of the call sent → its
   * result. Every frame is checked (subscription id, name, eventId, timestamp, cursor, data);
   * duplicates by eventId counted. Then, counting on, `eBillingEmits` more and `eBillingPolls`
   * empty polls (billedEvents).
   */
  async runAcross({ peers, sizes }) {
    const results = {};
    const open = [];
    for (const peer of peers) {
      try {
        const stream = await openPush(peer);
        if (stream === undefined) results[peer.name] = { metrics: nulls(e1.metrics), status: NO_EVENTS, raw: {} };
        else open.push({ peer, stream, runs: [] });
      } catch (error) {
        results[peer.name] = { error };
      }
    }
    const failed = new Map();
    try {
      for (let i = -sizes.e1Warmup; i < sizes.e1Emits; i++) {
        for (const k of roundOrder(i, open.length)) {
          const entry = open[k];
          if (failed.has(entry.peer.name)) continue;
          try {
            const run = await emitAndDeliver(entry.peer, entry.stream, `E1 ${i}`);
            if (i >= 0) entry.runs.push(run);
          } catch (error) {
            failed.set(entry.peer.name, error);
          }
        }
      }
      for (const entry of open) {
        const error = failed.get(entry.peer.name);
        if (error !== undefined) {
          results[entry.peer.name] = { error };
          continue;
        }
        const notes = [];
        let billed;
        try {
          billed = await billedEvents(entry.peer, entry.stream, {
            emitters: 1,
            perEmitter: sizes.eBillingEmits,
            polls: sizes.eBillingPolls,
          });
        } catch (error) {
          notes.push(`billing: ${error.message ?? error}`);
        }
        const billing = billingFigures(billed);
        if (billing.note !== undefined && !notes.some((note) => note.startsWith('billing'))) notes.push(billing.note);
        const delivery = entry.runs.map((run) => run.deliveryMs);
        const duplicates = duplicatesOf(entry.stream);
        if (duplicates > 0) notes.push(`${duplicates} occurrences delivered twice (by eventId)`);
        results[entry.peer.name] = {
          metrics: {
            p50_ms: percentile(delivery, 50),
            p90_ms: percentile(delivery, 90),
            p99_ms: percentile(delivery, 99),
            emit_p50_ms: percentile(
              entry.runs.map((run) => run.returnMs),
              50,
            ),
            ...billing.metrics,
          },
          status: notes.join('; ') || undefined,
          raw: {
            emits: entry.runs.length,
            delivery_ms: delivery,
            return_ms: entry.runs.map((run) => run.returnMs),
            delivered_before_return: entry.runs.filter((run) => run.deliveryMs <= run.returnMs).length,
            duplicates,
            billing: billed ?? null,
          },
        };
      }
    } finally {
      for (const { stream } of open) stream.close();
    }
    return results;
  },
};

export const e2 = {
  id: 'E2',
  title: 'occurrences of one type per second: concurrent emitters, each sequential, one push stream following',
  metrics: [
    { key: 'emits_per_s', label: 'E2 emits/s, one type', better: 'higher' },
    { key: 'emit_p50_ms', label: 'E2 tools/call post_note → its result p50 ms, under load', better: 'lower' },
    { key: 'all_delivered', label: 'E2 every occurrence delivered once on the stream', better: 'higher', kind: 'yesno' },
    ...BILLING_METRICS('E2'),
  ],
  /**
   * Per peer, one after another: one push stream of `demo.note` from now, then `e2Emitters`
   * concurrent emitters, each sending `e2Emits` `post_note` calls one after another (not waiting
   * for the stream): occurrences ÷ (first call sent → last call's result), and whether the stream
   * then delivered each exactly once. Then, counting on, `e2Emitters` × `eBillingEmits` ÷
   * `e2Emitters` (rounded up) occurrences concurrently and `eBillingPolls` empty polls (billedEvents).
   */
  async run({ peer, sizes }) {
    const stream = await openPush(peer);
    if (stream === undefined) return { metrics: nulls(e2.metrics), status: NO_EVENTS, raw: {} };
    try {
      await emitAndDeliver(peer, stream, 'E2 warm-up'); // the log's object exists and is warm
      const texts = new Set();
      const returns = [];
      const t0 = now();
      const done = await inBatches(sizes.e2Emitters, sizes.e2Emitters, async (e) => {
        for (let i = 0; i < sizes.e2Emits; i++) {
          const text = `E2 ${e}.${i} ${randomUUID()}`;
          texts.add(text);
          const { tSent, tReturned } = await emit(peer, text);
          returns.push(tReturned - tSent);
        }
      });
      const seconds = (now() - t0) / 1000;
      const failed = done.find((result) => result.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      const count = sizes.e2Emitters * sizes.e2Emits;
      // Until every text was heard (each event is offered to the predicate once), then counted whole.
      const unheard = new Set(texts);
      await stream
        .waitFor((event) => {
          if (isOccurrence(event)) unheard.delete(event.message.params?.data?.text);
          return unheard.size === 0;
        }, DELIVERY_TIMEOUT_MS)
        .catch(() => undefined);
      const seen = new Map();
      for (const event of stream.events.filter(isOccurrence)) {
        const text = event.message.params?.data?.text;
        if (texts.has(text)) seen.set(text, (seen.get(text) ?? 0) + 1);
      }
      const missing = count - seen.size;
      const twice = [...seen.values()].filter((n) => n > 1).length;
      const notes = [];
      if (missing > 0) notes.push(`${missing} of ${count} occurrences not delivered within ${DELIVERY_TIMEOUT_MS} ms`);
      if (twice > 0) notes.push(`${twice} occurrences delivered more than once`);
      let billed;
      try {
        const perEmitter = Math.ceil(sizes.eBillingEmits / sizes.e2Emitters);
        billed = await billedEvents(peer, stream, { emitters: sizes.e2Emitters, perEmitter, polls: sizes.eBillingPolls });
      } catch (error) {
        notes.push(`billing: ${error.message ?? error}`);
      }
      const billing = billingFigures(billed);
      if (billing.note !== undefined && !notes.some((note) => note.startsWith('billing'))) notes.push(billing.note);
      return {
        metrics: {
          emits_per_s: count / seconds,
          emit_p50_ms: percentile(returns, 50),
          all_delivered: missing === 0 && twice === 0 ? 1 : 0,
          ...billing.metrics,
        },
        status: notes.join('; ') || undefined,
        raw: { emitters: sizes.e2Emitters, emits: count, seconds, return_ms: returns, missing, twice, billing: billed ?? null },
      };
    } finally {
      stream.close();
    }
  },
};
