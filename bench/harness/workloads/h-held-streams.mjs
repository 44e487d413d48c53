// The H family: what a held SSE stream costs the Worker's isolate once every object behind it
// hibernated — the figure a deployment's isolate count rests on (the platform's isolate has
// 128 MB; docs/scale.md). H1 holds `h1Streams` streams of each kind the Worker serves over an
// object: a session's standalone `GET` stream, a 2026-07-28 `subscriptions/listen` stream (the
// bus object behind it), the `tasks/stream` of a task waiting for input (`ask`: input_required;
// its task object behind it) and an MCP Events push stream (`events/stream` of `demo.note`: its
// log object). `ours` only, through a helper of its own (`ours-held`, bench/peers/index.mjs):
// started fresh, with workerd's inspector open and its objects counted alive.
//
// Why so: local workerd runs the Worker and its objects in one isolate and one process. So the
// isolate's heap (JavaScript, the embedder's C++ objects behind it, ArrayBuffers: isolateBytes)
// is read through the inspector (harness/inspector.mjs) after a forced collection, and only once
// every object was evicted and collected (the helper's weak references: GET /bench/instances
// `live`): what is left is what the Worker holds for its streams. RSS is read too, as a second figure, but it mixes more: workerd keeps an evicted
// object's memory (W6, bench/README.md) and counts native buffers and sockets.
//
// The kinds are opened one after another and kept open (each measured on top of the ones before,
// so no kind's memory is reused by the next): after each, the wait for eviction, then the heap.
// A stream that ended by the end is counted and reported, never measured as held.
import { setTimeout as sleep } from 'node:timers/promises';
import { initialize, modernListen, modernStream, modernTaskStream, now } from '../client.mjs';
import { openInspector } from '../inspector.mjs';
import { CALL_TIMEOUT_MS, TASKS, countsOf, createTask, inBatches } from './shared.mjs';

const HELPER = 'ours-held';
const MIB = 2 ** 20;
/** The platform's memory per isolate (Workers limits: 128 MB), taken as MiB as V8 counts its heap. */
const ISOLATE_BYTES = 128 * MIB;
/** How long a held stream may stay open: the whole workload, with room. */
const HOLD_MS = 40 * 60_000;
/** Between two looks at whether every object was evicted (each look forces a collection). */
const EVICTION_POLL_MS = 5_000;
/** What `ask`'s client declares: the Tasks extension and form elicitation (its question). */
const TASK_CLIENT = { ...TASKS, elicitation: { form: {} } };
const EVENTS = { extensions: { 'io.modelcontextprotocol/events': {} } };
const isTaskEvent = (event) => event.message?.method === 'notifications/tasks/event' && !('id' in event.message);

/** One held stream: `close()`, and whether it is still open (`ended()`). */
const held = (close, done) => {
  let ended = false;
  done?.then(
    () => (ended = true),
    () => (ended = true),
  );
  return { close, ended: () => ended };
};

/**
 * The kinds, each opening one stream and resolving once it is held (the server answered it and
 * said what it holds it for): `open(peer)` → { close, ended, session? }.
 */
const KINDS = [
  {
    key: 'session',
    what: "a session's standalone GET stream",
    async open(peer) {
      const session = await initialize(peer.url);
      const stream = await session.openStream({ maxMs: HOLD_MS });
      if (!stream.ok) throw new Error(`GET stream: HTTP ${stream.status}`);
      return { ...held(stream.close, stream.done), session };
    },
  },
  {
    key: 'listen',
    what: 'a 2026-07-28 subscriptions/listen stream',
    async open(peer) {
      const listen = await modernListen(peer.url, () => undefined, { maxMs: HOLD_MS });
      return held(listen.close, listen.done);
    },
  },
  {
    key: 'task',
    what: 'the tasks/stream of a task waiting for input (ask)',
    async open(peer) {
      const { taskId } = await createTask(peer, 'ask', {}, TASK_CLIENT);
      const stream = await modernTaskStream(peer.url, taskId, { capabilities: TASK_CLIENT, timeoutMs: CALL_TIMEOUT_MS, maxMs: HOLD_MS });
      try {
        if (!stream.ok) throw new Error(`tasks/stream: HTTP ${stream.status}`);
        await stream.waitFor((event) => isTaskEvent(event) && event.message.params.payload?.status === 'input_required', CALL_TIMEOUT_MS);
      } catch (error) {
        stream.close();
        throw error;
      }
      return held(stream.close, stream.done);
    },
  },
  {
    key: 'event',
    what: 'an MCP Events push stream (events/stream of demo.note)',
    async open(peer) {
      const stream = await modernStream(
        peer.url,
        'events/stream',
        { name: 'demo.note', arguments: {}, cursor: null },
        { capabilities: EVENTS, timeoutMs: CALL_TIMEOUT_MS, maxMs: HOLD_MS },
      );
      try {
        if (!stream.ok) throw new Error(`events/stream: HTTP ${stream.status}`);
        await stream.waitFor((event) => event.message?.method === 'notifications/events/active', CALL_TIMEOUT_MS);
      } catch (error) {
        stream.close();
        throw error;
      }
      return held(stream.close, stream.done);
    },
  },
];

/**
 * The isolate's memory as V8 counts it: its JavaScript heap, what workerd's C++ objects behind
 * JavaScript ones hold (the embedder's heap: a Request, a WebSocket, a stream) and ArrayBuffers'
 * backing stores. Native buffers of sockets and streams below those are not in it (RSS has them).
 */
const isolateBytes = (heap) => heap.usedBytes + (heap.embedderBytes ?? 0) + (heap.backingBytes ?? 0);
const perStreamKb = (after, before, streams) => ({
  total: (isolateBytes(after) - isolateBytes(before)) / 1024 / streams,
  js: (after.usedBytes - before.usedBytes) / 1024 / streams,
  embedder: ((after.embedderBytes ?? 0) - (before.embedderBytes ?? 0)) / 1024 / streams,
  backing: ((after.backingBytes ?? 0) - (before.backingBytes ?? 0)) / 1024 / streams,
});

const liveTotal = (live) => Object.values(live ?? {}).reduce((sum, n) => sum + n, 0);

/**
 * Forces collections until no object is alive in the isolate (every one evicted and its instance
 * collected), `deadlineMs` at most. Resolves with the heap read then, the objects still alive,
 * and how long it took.
 */
async function heapOnceEvicted(helper, inspector, deadlineMs) {
  const t0 = now();
  for (;;) {
    const heap = await inspector.heapAfterGc(() => countsOf(helper));
    // The collection queued the weak references' clearing; the count reads them in a later turn.
    const counts = await countsOf(helper);
    if (counts?.live === undefined) throw new Error(`${HELPER}: GET /bench/instances has no live counts (BENCH_LIVE_OBJECTS)`);
    const alive = liveTotal(counts.live);
    if (alive === 0 || now() - t0 > deadlineMs) return { heap, live: counts.live, alive, waitedMs: now() - t0 };
    await sleep(EVICTION_POLL_MS);
  }
}

export const h1 = {
  id: 'H1',
  title: "held SSE streams with every object behind them evicted: the Worker isolate's heap per stream, by kind",
  firstRoundOnly: true,
  timeoutMs: 45 * 60_000,
  metrics: [
    { key: 'heap_base_mb', label: 'H1 isolate heap, nothing held, MB', better: 'lower' },
    { key: 'heap_kb_session', label: 'H1 isolate heap KB per held session GET stream', better: 'lower' },
    { key: 'heap_kb_listen', label: 'H1 isolate heap KB per held subscriptions/listen stream', better: 'lower' },
    { key: 'heap_kb_task', label: 'H1 isolate heap KB per held tasks/stream (task waiting)', better: 'lower' },
    { key: 'heap_kb_event', label: 'H1 isolate heap KB per held events/stream push stream', better: 'lower' },
    { key: 'streams_per_128mb', label: 'H1 held streams a 128 MB isolate holds (costliest kind)', better: 'higher' },
    { key: 'rss_kb_per_stream', label: 'H1 workerd RSS KB per held stream, all kinds (objects too)', better: 'lower' },
    { key: 'alive_when_measured', label: 'H1 objects alive when the heap was read (most)', better: 'lower' },
  ],
  /** `ours` only, through its helper `ours-held` (started here, stopped at the end); every other peer n/a. */
  async runAcross({ peers, sizes, startHelper, memoryRss }) {
    const results = {};
    const nulls = () => Object.fromEntries(h1.metrics.map(({ key }) => [key, null]));
    for (const peer of peers) {
      if (peer.name !== 'ours') results[peer.name] = { metrics: nulls(), status: 'ours only (its helper ours-held)', raw: {} };
    }
    if (!peers.some((peer) => peer.name === 'ours')) return results;
    try {
      if (startHelper === undefined) throw new Error(`H1 needs startHelper (run.mjs) for its helper ${HELPER}`);
      results.ours = await heldStreams(await startHelper(HELPER), sizes, memoryRss);
    } catch (error) {
      results.ours = { error };
    }
    return results;
  },
};

async function heldStreams(helper, sizes, memoryRss) {
  if (helper.inspectorPort === undefined) throw new Error(`${HELPER} was started without an inspector port`);
  const rss = async () => (memoryRss === undefined ? null : await memoryRss(helper));
  const inspector = await openInspector(helper.inspectorPort);
  const open = [];
  const sessions = [];
  try {
    // One of each first, closed again, not counted: code compiled, classes set up, the bus and
    // the log objects made once (one-time costs the streams measured would otherwise share).
    for (const kind of KINDS) {
      const stream = await kind.open(helper);
      stream.close();
      if (stream.session) await stream.session.close();
    }
    const base = await heapOnceEvicted(helper, inspector, sizes.h1EvictionDeadlineMs);
    const baseRss = await rss();
    const steps = [];
    let before = { heap: base.heap, rss: baseRss };
    for (const kind of KINDS) {
      const t0 = now();
      const opened = await inBatches(sizes.h1Streams, sizes.h1Batch, async () => {
        const stream = await kind.open(helper);
        open.push({ kind: kind.key, ...stream });
        if (stream.session) sessions.push(stream.session);
      });
      const refused = opened.filter((result) => result.status === 'rejected');
      if (refused.length > 0)
        throw new Error(
          `H1 ${kind.what}: ${refused.length} of ${sizes.h1Streams} not held (${refused[0].reason?.message ?? refused[0].reason})`,
        );
      const openMs = now() - t0;
      const after = await heapOnceEvicted(helper, inspector, sizes.h1EvictionDeadlineMs);
      const afterRss = await rss();
      const stillOpen = open.filter((stream) => stream.kind === kind.key && !stream.ended()).length;
      steps.push({
        kind: kind.key,
        what: kind.what,
        streams: sizes.h1Streams,
        still_open: stillOpen,
        open_ms: openMs,
        waited_for_eviction_ms: after.waitedMs,
        alive: after.alive,
        live: after.live,
        heap_kb_per_stream: perStreamKb(after.heap, before.heap, sizes.h1Streams).total,
        heap_kb_parts: perStreamKb(after.heap, before.heap, sizes.h1Streams),
        heap_before: before.heap,
        heap_after: after.heap,
        rss_kb_per_stream: afterRss === null || before.rss === null ? null : (afterRss - before.rss) / 1024 / sizes.h1Streams,
      });
      before = { heap: after.heap, rss: afterRss };
    }
    const ended = open.filter((stream) => stream.ended()).length;
    const heapOf = (key) => steps.find((step) => step.kind === key).heap_kb_per_stream;
    const costliest = Math.max(...steps.map((step) => step.heap_kb_per_stream));
    const room = ISOLATE_BYTES - isolateBytes(base.heap);
    return {
      metrics: {
        heap_base_mb: isolateBytes(base.heap) / MIB,
        heap_kb_session: heapOf('session'),
        heap_kb_listen: heapOf('listen'),
        heap_kb_task: heapOf('task'),
        heap_kb_event: heapOf('event'),
        streams_per_128mb: costliest > 0 ? Math.floor(room / (costliest * 1024)) : null,
        rss_kb_per_stream: baseRss === null || before.rss === null ? null : (before.rss - baseRss) / 1024 / open.length,
        alive_when_measured: Math.max(base.alive, ...steps.map((step) => step.alive)),
      },
      status: ended > 0 ? `${ended} of ${open.length} streams ended before the last reading` : undefined,
      raw: {
        streams_per_kind: sizes.h1Streams,
        inspector_target: inspector.target,
        base: { heap: base.heap, rss: baseRss, waited_for_eviction_ms: base.waitedMs, live: base.live },
        steps,
        // Each kind alone, as if an isolate held only that kind.
        streams_per_128mb_by_kind: Object.fromEntries(
          steps.map((step) => [step.kind, step.heap_kb_per_stream > 0 ? Math.floor(room / (step.heap_kb_per_stream * 1024)) : null]),
        ),
        ended_before_last_reading: ended,
      },
    };
  } finally {
    inspector.close();
    for (const stream of open) stream.close();
    await inBatches(sessions.length, sizes.h1Batch, (i) => sessions[i].close());
    // Its own instance, with thousands of objects on disk: gone before the next workload.
    await helper.stop();
  }
}
