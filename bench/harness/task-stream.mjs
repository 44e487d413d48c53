// What a `tasks/stream` answer (SEP-2694, draft) says, for T3 and T4: the task's events out of
// the SSE events the client read, checked against the timeline a task must have, and T3's
// figures from their receive times. Pure functions, no I/O (tested in task-stream.test.mjs).

/** The server's own event types (src/core/task-events.ts: under its vendor prefix). */
export const TASK_EVENT_TYPE = { status: 'mcp-edge-sessions.status', progress: 'mcp-edge-sessions.progress' };

/**
 * The task's events among the SSE events read (each with `message`, `t`): the params of every
 * `notifications/tasks/event` ({ seq, taskId, type, payload }), each with its receive time `t`.
 */
export function taskEventsOf(events) {
  const out = [];
  for (const event of events) {
    const message = event.message;
    if (message?.method !== 'notifications/tasks/event' || 'id' in message) continue;
    out.push({ ...message.params, t: event.t });
  }
  return out;
}

const statusOf = (event) => (event?.type === TASK_EVENT_TYPE.status ? event.payload?.status : undefined);

/**
 * What is wrong with a stream's task events read from its first event (no `after`), as a list
 * of sentences (empty: nothing). Expected: seq 0, 1, 2, … each once and in order, all of
 * `taskId`; the first the task's `working` status (its creation); the `progress` events numbered
 * 1…progress in order; with `terminal`, the last event that status and nothing after it.
 * `fromSeq` is the seq the stream starts at (0 without a cursor).
 */
export function timelineProblems(taskEvents, { taskId, progress, terminal, fromSeq = 0 }) {
  const problems = [];
  if (taskEvents.length === 0) return ['no task event arrived'];
  taskEvents.forEach((event, i) => {
    if (event.seq !== fromSeq + i && problems.length < 5) problems.push(`event ${i} has seq ${event.seq}, expected ${fromSeq + i}`);
  });
  const foreign = taskEvents.filter((event) => event.taskId !== taskId).length;
  if (foreign > 0) problems.push(`${foreign} events of another task`);
  if (fromSeq === 0 && statusOf(taskEvents[0]) !== 'working')
    problems.push(`the first event is not the working status: ${JSON.stringify(taskEvents[0]).slice(0, 200)}`);
  if (progress !== undefined) {
    const numbers = taskEvents.filter((event) => event.type === TASK_EVENT_TYPE.progress).map((event) => event.payload?.progress);
    if (numbers.length !== progress) problems.push(`${numbers.length} of ${progress} progress events arrived`);
    const misplaced = numbers.findIndex((number, i) => number !== i + 1);
    if (misplaced !== -1 && numbers.length === progress) problems.push(`progress event ${misplaced + 1} carries ${numbers[misplaced]}`);
  }
  if (terminal !== undefined) {
    const last = taskEvents.at(-1);
    if (statusOf(last) !== terminal) problems.push(`the last event is not the ${terminal} status: ${JSON.stringify(last).slice(0, 200)}`);
    const early = taskEvents.slice(0, -1).findIndex((event) => statusOf(event) === terminal);
    if (early !== -1) problems.push(`the ${terminal} status arrived at event ${early}, before the last`);
  }
  return problems;
}

/** The longest wait between two consecutive events: { ms, at (index of the later one) }, or { ms: 0, at: null }. */
export function longestGap(taskEvents) {
  let gap = { ms: 0, at: null };
  for (let i = 1; i < taskEvents.length; i++) {
    const ms = taskEvents[i].t - taskEvents[i - 1].t;
    if (ms > gap.ms) gap = { ms, at: i };
  }
  return gap;
}

/**
 * T3's figures of one run, on W3's definitions (workloads/shared.mjs `progressRun`): progress events ÷
 * (the call sent → the last progress event received), the call being the `tools/call` that
 * creates the task (`tCall`); and the first event's latency, from sending `tasks/stream`
 * (`tStream`) to the first `notifications/tasks/event` — with its seq (0: the task's creation,
 * which exists from the start). Also the stream's own rate (from `tStream`), the result's time
 * and the longest wait between two events. `tResponse`: when the stream's result arrived.
 */
export function streamFigures(taskEvents, { tCall, tStream, tResponse }) {
  const progress = taskEvents.filter((event) => event.type === TASK_EVENT_TYPE.progress);
  if (progress.length === 0 || taskEvents.length === 0) throw new Error('no progress event to time');
  const lastMs = progress.at(-1).t - tCall;
  const gap = longestGap(taskEvents);
  return {
    eventsPerS: progress.length / (lastMs / 1000),
    streamEventsPerS: progress.length / ((progress.at(-1).t - tStream) / 1000),
    firstMs: taskEvents[0].t - tStream,
    firstSeq: taskEvents[0].seq,
    firstProgressMs: progress[0].t - tCall,
    lastMs,
    resultMs: tResponse === undefined ? null : tResponse - tCall,
    events: taskEvents.length,
    progress: progress.length,
    longestGapMs: gap.ms,
    longestGapAt: gap.at,
  };
}

/**
 * W7's count, for task objects: of `count` objects each touched once after the idle period, how
 * many were still resident — those the touch did not construct anew (`woken` = constructions
 * counted over the touches). Never below 0 (an object constructed twice is not resident twice).
 */
export const residentAfterIdle = (count, woken) => Math.max(0, count - woken);
