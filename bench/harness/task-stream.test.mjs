// node --test bench/harness/*.test.mjs  — reading a tasks/stream answer (T3, T4); no timing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { longestGap, residentAfterIdle, streamFigures, TASK_EVENT_TYPE, taskEventsOf, timelineProblems } from './task-stream.mjs';

const TASK = 'task-1';
const status = (seq, value, t) => ({ seq, taskId: TASK, type: TASK_EVENT_TYPE.status, payload: { status: value }, t });
const progress = (seq, number, t) => ({ seq, taskId: TASK, type: TASK_EVENT_TYPE.progress, payload: { progress: number, total: 3 }, t });
/** A whole timeline of n progress events, the k-th received at `times[k]` (creation at times[0]). */
const timeline = (n, times = Array.from({ length: n + 2 }, (_, i) => 10 + i)) => [
  status(0, 'working', times[0]),
  ...Array.from({ length: n }, (_, i) => progress(i + 1, i + 1, times[i + 1])),
  status(n + 1, 'completed', times[n + 1]),
];
/** The SSE events a client reads for `events`, with the stream's answer last. */
const sse = (events) => [
  { id: '', hasData: false, message: undefined, t: 1 },
  ...events.map(({ t, ...params }) => ({ hasData: true, message: { jsonrpc: '2.0', method: 'notifications/tasks/event', params }, t })),
  { hasData: true, message: { jsonrpc: '2.0', id: 7, result: { resultType: 'complete' } }, t: 99 },
];

test('taskEventsOf keeps the task events, each with its receive time, and nothing else', () => {
  const events = timeline(2);
  const other = { hasData: true, message: { jsonrpc: '2.0', method: 'notifications/message', params: {} }, t: 5 };
  assert.deepEqual(taskEventsOf([other, ...sse(events)]), events);
  // A request with the method's name is not a notification.
  assert.deepEqual(taskEventsOf([{ message: { jsonrpc: '2.0', id: 1, method: 'notifications/tasks/event', params: {} }, t: 1 }]), []);
});

test('timelineProblems: a whole timeline has none', () => {
  assert.deepEqual(timelineProblems(timeline(3), { taskId: TASK, progress: 3, terminal: 'completed' }), []);
  assert.deepEqual(timelineProblems(timeline(0), { taskId: TASK, progress: 0, terminal: 'completed' }), []);
  // T4's: working, the question, working again, one step, completed.
  const asked = [
    status(0, 'working', 1),
    status(1, 'input_required', 2),
    status(2, 'working', 3),
    progress(3, 1, 4),
    status(4, 'completed', 5),
  ];
  assert.deepEqual(timelineProblems(asked, { taskId: TASK, progress: 1, terminal: 'completed' }), []);
});

test('timelineProblems names what is wrong', () => {
  const cases = [
    { events: [], expect: /no task event/ },
    { events: timeline(3).filter((e) => e.seq !== 2), expect: /event 2 has seq 3, expected 2/ },
    { events: [...timeline(3).slice(0, 2), ...timeline(3).slice(1)], expect: /event 2 has seq 1/ },
    { events: timeline(3).slice(1), expect: /seq 1, expected 0/ },
    { events: timeline(3).map((e) => (e.seq === 2 ? { ...e, taskId: 'other' } : e)), expect: /1 events of another task/ },
    {
      events: timeline(3).map((e) => (e.seq === 0 ? status(0, 'input_required', e.t) : e)),
      expect: /first event is not the working status/,
    },
    { events: timeline(2), expect: /2 of 3 progress events arrived/ },
    { events: timeline(3).map((e) => (e.seq === 2 ? progress(2, 3, e.t) : e)), expect: /progress event 2 carries 3/ },
    { events: timeline(3).slice(0, -1), expect: /last event is not the completed status/ },
    {
      events: [status(0, 'working', 1), status(1, 'completed', 2), progress(2, 1, 3), status(3, 'completed', 4)],
      progress: 1,
      expect: /completed status arrived at event 1, before the last/,
    },
  ];
  for (const { events, progress: n = 3, expect } of cases) {
    const problems = timelineProblems(events, { taskId: TASK, progress: n, terminal: 'completed' });
    assert.ok(
      problems.some((p) => expect.test(p)),
      `${expect}: ${JSON.stringify(problems)}`,
    );
  }
});

test('timelineProblems from a cursor: the first seq expected is fromSeq, and no creation event', () => {
  const rest = timeline(3).slice(2);
  assert.deepEqual(timelineProblems(rest, { taskId: TASK, terminal: 'completed', fromSeq: 2 }), []);
  assert.match(timelineProblems(rest, { taskId: TASK, terminal: 'completed', fromSeq: 1 })[0], /seq 2, expected 1/);
});

test("streamFigures: W3's events/s from the call, the first event from the stream, the longest wait", () => {
  // Call sent at 0, stream sent at 5, creation read at 10, progress at 11, 12, 20 (8 ms wait), completed at 21.
  const events = timeline(3, [10, 11, 12, 20, 21]);
  const figures = streamFigures(events, { tCall: 0, tStream: 5, tResponse: 22 });
  assert.equal(figures.eventsPerS, 3 / (20 / 1000));
  assert.equal(figures.streamEventsPerS, 3 / (15 / 1000));
  assert.equal(figures.firstMs, 5);
  assert.equal(figures.firstSeq, 0);
  assert.equal(figures.firstProgressMs, 11);
  assert.equal(figures.lastMs, 20);
  assert.equal(figures.resultMs, 22);
  assert.equal(figures.events, 5);
  assert.equal(figures.progress, 3);
  assert.equal(figures.longestGapMs, 8);
  assert.equal(figures.longestGapAt, 3);
  // A stream that starts later (a cursor) has another first seq.
  assert.equal(streamFigures(events.slice(2), { tCall: 0, tStream: 5 }).firstSeq, 2);
  assert.equal(streamFigures(events, { tCall: 0, tStream: 5 }).resultMs, null);
  assert.throws(() => streamFigures(timeline(0), { tCall: 0, tStream: 0 }), /no progress event/);
});

test('longestGap of one event or none is 0', () => {
  assert.deepEqual(longestGap([]), { ms: 0, at: null });
  assert.deepEqual(longestGap([status(0, 'working', 3)]), { ms: 0, at: null });
});

test('residentAfterIdle: the objects an answer did not construct anew', () => {
  assert.equal(residentAfterIdle(50, 50), 0);
  assert.equal(residentAfterIdle(50, 0), 50);
  assert.equal(residentAfterIdle(50, 48), 2);
  assert.equal(residentAfterIdle(50, 51), 0);
});
