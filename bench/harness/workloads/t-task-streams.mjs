// The T family's streamed tasks (`tasks/stream`, SEP-2694): T3 a task streaming progress, run
// beside W3 (events/s, first event, rows per progress event), T4 tasks waiting for input with
// their streams held through an idle minute (`ours` only). With the helpers only they use:
// a task streamed whole and checked (`streamedTask`), the probe for task streams, what one
// streamed task bills, T4's waiting task. What a stream's answer says is read by
// ../task-stream.mjs; the task client, W3's run and the billing window are in shared.mjs.
import { setTimeout as sleep } from 'node:timers/promises';
import { perUnit } from '../billing.mjs';
import { modernRequest, modernTaskStream, now } from '../client.mjs';
import { median } from '../stats.mjs';
import { residentAfterIdle, streamFigures, taskEventsOf, timelineProblems } from '../task-stream.mjs';
import {
  CALL_TIMEOUT_MS,
  LONG_CALL_TIMEOUT_MS,
  inBatches,
  progressRun,
  countsOf,
  TASKS,
  createTask,
  billingOf,
  setBilling,
  measure,
} from './shared.mjs';
import { roundOrder } from '../round-order.mjs';

/** What T4's client declares: the extension, and form elicitation for the task's question. */
const TASK_CLIENT = { ...TASKS, elicitation: { form: {} } };
const NO_TASK_STREAMS = 'does not serve task streams (tools/call progress_task, declared, then tasks/stream)';
/** How long a task event may take to arrive (T4's events after tasks/update; a stream's result). */
const TASK_EVENT_TIMEOUT_MS = 15_000;
const isTaskEvent = (event) => event.message?.method === 'notifications/tasks/event' && !('id' in event.message);

/**
 * One `progress_task {n}` created and streamed from its first event (no `after`) to its result:
 * the task's id, the times of the call and the stream, its task events. Throws when the stream
 * is refused, ends without its result or the timeline is not the task's whole one (timelineProblems).
 */
async function streamedTask(peer, n) {
  const tCall = now();
  const { taskId } = await createTask(peer, 'progress_task', { n });
  const tCreated = now();
  const stream = await modernTaskStream(peer.url, taskId, { capabilities: TASKS, timeoutMs: CALL_TIMEOUT_MS, maxMs: LONG_CALL_TIMEOUT_MS });
  try {
    const end = await stream.done;
    if (stream.response?.result?.resultType !== 'complete') {
      const answer = stream.response ?? stream.events.at(-1)?.message;
      throw new Error(`tasks/stream: HTTP ${stream.status}, ended (${end}) without its result: ${JSON.stringify(answer)?.slice(0, 300)}`);
    }
    const taskEvents = taskEventsOf(stream.events);
    const problems = timelineProblems(taskEvents, { taskId, progress: n, terminal: 'completed' });
    if (problems.length > 0) throw new Error(`tasks/stream of progress_task {n: ${n}}: ${problems.join('; ')}`);
    return { taskId, tCall, tCreated, stream, taskEvents };
  } finally {
    stream.close();
  }
}

/** One T3 run: `streamedTask(peer, n)`'s figures (task-stream.mjs `streamFigures`) and the CreateTaskResult's time. */
async function taskStreamRun(peer, n) {
  const { tCall, tCreated, stream, taskEvents } = await streamedTask(peer, n);
  return { ...streamFigures(taskEvents, { tCall, tStream: stream.tSent, tResponse: stream.tResponse }), createMs: tCreated - tCall };
}

/**
 * Whether the peer streams tasks: a `progress_task {n: 1}` created and streamed whole. A call
 * not answered with a task, or a stream refused with -32601 (no task streams), is "no"; any
 * other answer that is not the task's whole timeline and its result is an error, not "unserved".
 */
async function probeTaskStreams(peer) {
  let taskId;
  try {
    ({ taskId } = await createTask(peer, 'progress_task', { n: 1 }));
  } catch {
    return false;
  }
  const stream = await modernTaskStream(peer.url, taskId, { capabilities: TASKS, timeoutMs: CALL_TIMEOUT_MS });
  try {
    const end = await stream.done;
    if (stream.response?.error?.code === -32601) return false;
    if (stream.response?.result?.resultType !== 'complete') {
      throw new Error(`tasks/stream: HTTP ${stream.status}, ended (${end}): ${JSON.stringify(stream.response)?.slice(0, 300)}`);
    }
    const problems = timelineProblems(taskEventsOf(stream.events), { taskId, progress: 1, terminal: 'completed' });
    if (problems.length > 0) throw new Error(`tasks/stream of progress_task {n: 1}: ${problems.join('; ')}`);
    return true;
  } finally {
    stream.close();
  }
}

/**
 * What one task of `n` progress events bills, streamed as T3 streams it, and what each progress
 * event adds: (the task of n − the task of none) ÷ n, as B1's progress event. Counting is on for
 * these two tasks only; undefined where the peer has no counters.
 */
async function taskStreamBilling(peer, n) {
  if ((await billingOf(peer)) === undefined) return undefined;
  await setBilling(peer, true);
  try {
    const none = await measure(peer, 1, () => streamedTask(peer, 0));
    const whole = await measure(peer, 1, () => streamedTask(peer, n));
    return { none, whole, perEvent: perUnit(whole, none, n) };
  } finally {
    await setBilling(peer, false).catch(() => undefined);
  }
}

export const t3 = {
  id: 'T3',
  title: 'a task streaming progress on tasks/stream (2026-07-28, SEP-2694), beside W3',
  metrics: [
    { key: 'events_per_s', label: 'T3 task progress events/s (call sent → last progress event)', better: 'higher' },
    { key: 'over_w3', label: 'T3 events/s ÷ W3 events/s, interleaved', better: 'higher' },
    { key: 'first_event_ms', label: 'T3 tasks/stream sent → first task event ms', better: 'lower' },
    { key: 'first_is_seq0', label: 'T3 first task event is seq 0', better: 'higher', kind: 'yesno' },
    { key: 'create_ms', label: 'T3 tools/call → CreateTaskResult ms', better: 'lower' },
    { key: 'stream_events_per_s', label: 'T3 progress events/s from tasks/stream sent', better: 'higher' },
    { key: 'longest_gap_ms', label: 'T3 longest wait between two task events ms', better: 'lower' },
    { key: 'rows_written_per_event', label: 'T3 rows written per progress event', better: 'lower' },
    { key: 'rows_read_per_event', label: 'T3 rows read per progress event', better: 'lower' },
    { key: 'rows_written_task', label: 'T3 rows written, the whole task (n progress events)', better: 'lower' },
    { key: 'requests_task', label: 'T3 DO requests, the whole task', better: 'lower' },
  ],
  /**
   * Peers that stream tasks (a probe: `progress_task {n: 1}`, declared, then `tasks/stream`):
   * `w3Runs` runs per peer and round of `progress_task {n: w3N}` created and streamed at once
   * (no `after`) to its result, each beside a W3 run (`progress {n: w3N}` in a fresh session),
   * the two alternating which goes first, peers interleaved run by run; the figures on W3's
   * definitions (task-stream.mjs `streamFigures`), `over_w3` the ratio of the medians of this
   * workload's own runs. Then, counting on, one task of none and one of w3N, streamed alike:
   * rows per progress event (B1's way: their difference ÷ w3N) and the whole task's.
   */
  async runAcross({ peers, sizes }) {
    const results = {};
    const open = [];
    for (const peer of peers) {
      try {
        if (await probeTaskStreams(peer)) open.push({ peer, t3: [], w3: [] });
        else
          results[peer.name] = { metrics: Object.fromEntries(t3.metrics.map(({ key }) => [key, null])), status: NO_TASK_STREAMS, raw: {} };
      } catch (error) {
        results[peer.name] = { error };
      }
    }
    const failed = new Map();
    for (let i = 0; i < sizes.w3Runs; i++) {
      for (const k of roundOrder(i, open.length)) {
        const entry = open[k];
        if (failed.has(entry.peer.name)) continue;
        try {
          const pair = [
            async () => entry.t3.push(await taskStreamRun(entry.peer, sizes.w3N)),
            async () => entry.w3.push(await progressRun(entry.peer.url, sizes)),
          ];
          if (i % 2 === 1) pair.reverse();
          for (const run of pair) await run();
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
        billed = await taskStreamBilling(entry.peer, sizes.w3N);
        if (billed === undefined) notes.push('no billing counters: rows not counted');
      } catch (error) {
        notes.push(`billing: ${error.message ?? error}`);
      }
      const of = (key) => median(entry.t3.map((run) => run[key]));
      const w3 = median(entry.w3.map((run) => run.eventsPerS));
      results[entry.peer.name] = {
        metrics: {
          events_per_s: of('eventsPerS'),
          over_w3: of('eventsPerS') / w3,
          first_event_ms: of('firstMs'),
          first_is_seq0: entry.t3.every((run) => run.firstSeq === 0) ? 1 : 0,
          create_ms: of('createMs'),
          stream_events_per_s: of('streamEventsPerS'),
          longest_gap_ms: of('longestGapMs'),
          rows_written_per_event: billed?.perEvent.billed.rowsWritten ?? null,
          rows_read_per_event: billed?.perEvent.billed.rowsRead ?? null,
          rows_written_task: billed?.whole.billed.rowsWritten ?? null,
          requests_task: billed?.whole.billed.requests ?? null,
        },
        status: notes.join('; ') || undefined,
        raw: {
          n: sizes.w3N,
          runs: entry.t3,
          w3_runs: entry.w3,
          w3_events_per_s: w3,
          w3_first_event_ms: median(entry.w3.map((run) => run.firstMs)),
          billing: billed ?? null,
        },
      };
    }
    return results;
  },
};

/**
 * One task of `ask` (it asks to go on: input_required), its `tasks/stream` opened at once and
 * read in the background; resolves once the stream has delivered the question. `answer()`
 * sends `tasks/update` with the answer and times what the stream delivers next: the ms from
 * the update sent to the first event after the question, and to the stream's result, checking
 * the whole timeline (working, input_required, working, one progress, completed).
 */
async function waitingTask(peer, maxMs) {
  const { taskId } = await createTask(peer, 'ask', {}, TASK_CLIENT);
  const stream = await modernTaskStream(peer.url, taskId, { capabilities: TASK_CLIENT, timeoutMs: CALL_TIMEOUT_MS, maxMs });
  const entry = { taskId, stream, ended: false };
  stream.done.then(() => {
    entry.ended = true;
  });
  try {
    if (!stream.ok) throw new Error(`tasks/stream: HTTP ${stream.status} ${JSON.stringify(stream.response)?.slice(0, 300)}`);
    const asked = await stream.waitFor(
      (event) => isTaskEvent(event) && event.message.params.payload?.status === 'input_required',
      TASK_EVENT_TIMEOUT_MS,
    );
    entry.askedSeq = asked.message.params.seq;
  } catch (error) {
    stream.close();
    throw error;
  }
  entry.answer = async () => {
    const t0 = now();
    const { status, message } = await modernRequest(
      peer.url,
      'tasks/update',
      { taskId, inputResponses: { go_on: { action: 'accept', content: { confirm: true } } } },
      { capabilities: TASK_CLIENT },
    );
    if (message?.result === undefined) throw new Error(`tasks/update: HTTP ${status} ${JSON.stringify(message)?.slice(0, 300)}`);
    const updateMs = now() - t0;
    const next = await stream.waitFor((event) => isTaskEvent(event) && event.message.params.seq > entry.askedSeq, TASK_EVENT_TIMEOUT_MS);
    const isAnswer = (event) => event.message !== undefined && !('method' in event.message);
    await stream.waitFor(isAnswer, TASK_EVENT_TIMEOUT_MS);
    if (stream.response?.result?.resultType !== 'complete')
      throw new Error(`tasks/stream after the answer: ended without its result: ${JSON.stringify(stream.response)?.slice(0, 300)}`);
    const problems = timelineProblems(taskEventsOf(stream.events), { taskId, progress: 1, terminal: 'completed' });
    if (problems.length > 0) throw new Error(`tasks/stream after the answer: ${problems.join('; ')}`);
    return {
      eventMs: next.t - t0,
      resultMs: stream.tResponse - t0,
      updateMs,
      next: next.message.params.payload?.status ?? next.message.params.type,
    };
  };
  return entry;
}

/** T4's pause between opening the warm tasks' streams and answering them. */
const T4_SETTLE_MS = 1_000;

export const t4 = {
  id: 'T4',
  title: 'idle tasks waiting for input, each with a tasks/stream open: task objects resident after the idle period, then an answer each',
  // An idle minute, as W7's: round 1 only.
  firstRoundOnly: true,
  metrics: [
    { key: 'resident_after_idle', label: 'T4 task objects resident after the idle period (streams open)', better: 'lower' },
    { key: 'streams_open_after_idle', label: 'T4 streams still open after the idle period', better: 'higher' },
    { key: 'event_after_idle_p50_ms', label: 'T4 tasks/update → next task event after idle p50 ms', better: 'lower' },
    { key: 'result_after_idle_p50_ms', label: 'T4 tasks/update → stream result after idle p50 ms', better: 'lower' },
    { key: 'event_warm_p50_ms', label: 'T4 tasks/update → next task event warm p50 ms', better: 'lower' },
  ],
  /**
   * W7 for tasks (`ours` only: the peer's `ask` tool and its count of constructed task objects,
   * GET /bench/instances `tasksConstructed`): t4Warm tasks of `ask` (and one unrecorded), each
   * streamed until it asks, answered a second later (warm, resident); then t4Tasks more, each with its stream held open and idle through
   * t4IdleMs (W7's minute); then each answered with `tasks/update`, one at a time: task objects
   * resident after the idle period (tasks − objects constructed anew by the answers), and the ms
   * from the update to the stream's next event and to its result.
   */
  async run({ peer, sizes }) {
    const none = (status) => ({ metrics: Object.fromEntries(t4.metrics.map(({ key }) => [key, null])), status, raw: {} });
    const tasksConstructed = async () => (await countsOf(peer))?.tasksConstructed;
    if ((await tasksConstructed()) === undefined)
      return none('no count of task objects (GET /bench/instances tasksConstructed: ours only)');
    const maxMs = sizes.t4IdleMs + 300_000;
    const entries = [];
    const opening = async (count) => {
      const opened = await inBatches(count, sizes.t4Batch, async () => {
        const entry = await waitingTask(peer, maxMs);
        entries.push(entry);
        return entry;
      });
      const refused = opened.find((result) => result.status === 'rejected');
      if (refused !== undefined) throw refused.reason;
      return opened.map((result) => result.value);
    };
    try {
      // One more than recorded: the first answer of the process's first `ask` tasks runs cold code.
      const [coldEntry, ...warmEntries] = await opening(sizes.t4Warm + 1);
      // Past the relay's bridge (200 ms, src/core/relay.ts BRIDGE_MS): each stream on its socket, as after the idle period.
      await sleep(T4_SETTLE_MS);
      const cold = await coldEntry.answer();
      const warm = [];
      for (const entry of warmEntries) warm.push(await entry.answer());
      const idle = await opening(sizes.t4Tasks);
      const beforeIdle = await tasksConstructed();
      await sleep(sizes.t4IdleMs);
      const afterIdle = await tasksConstructed();
      const openAfterIdle = idle.filter((entry) => !entry.ended).length;
      // One at a time, as W7's: concurrent answers on 2 cores would time the queue.
      const afterIdleAnswers = [];
      for (const entry of idle) afterIdleAnswers.push(await entry.answer());
      const woken = (await tasksConstructed()) - afterIdle;
      return {
        metrics: {
          resident_after_idle: residentAfterIdle(idle.length, woken),
          streams_open_after_idle: openAfterIdle,
          event_after_idle_p50_ms: median(afterIdleAnswers.map((a) => a.eventMs)),
          result_after_idle_p50_ms: median(afterIdleAnswers.map((a) => a.resultMs)),
          event_warm_p50_ms: median(warm.map((a) => a.eventMs)),
        },
        status:
          openAfterIdle < idle.length ? `${idle.length - openAfterIdle} of ${idle.length} streams ended during the idle period` : undefined,
        raw: {
          tasks: idle.length,
          idle_ms: sizes.t4IdleMs,
          constructed_during_idle: afterIdle - beforeIdle,
          woken_by_answer: woken,
          after_idle: afterIdleAnswers,
          warm,
          warm_unrecorded: cold,
          first_after_idle: afterIdleAnswers[0] ?? null,
        },
      };
    } finally {
      for (const { stream } of entries) stream.close();
    }
  },
};
