import { describe, expect, it } from 'vitest';
import {
  afterAnswers,
  afterCancel,
  afterInterruption,
  afterOutcome,
  afterStatusMessage,
  declaresTasks,
  detailedTaskOnWire,
  isExpired,
  isWellFormedTaskId,
  MAX_KEPT_ANSWERS_BYTES,
  MAX_STATUS_MESSAGE_CHARS,
  newTask,
  newTaskId,
  TASK_ERRORS,
  taskOnWire,
  type RunOutcome,
  type TaskRecord,
  type TaskStatus,
} from '../../src/core/task.ts';

const T0 = Date.UTC(2026, 11, 1);
const base = newTask('AAAAAAAAAAAAAAAAAAAAAA', T0, 60_000, 1000);
const inStatus = (status: TaskStatus, extra: Partial<TaskRecord> = {}): TaskRecord => ({ ...base, status, ...extra });
const asking = inStatus('input_required', {
  inputRequests: { a: { method: 'elicitation/create' }, b: { method: 'elicitation/create' } },
  answers: {},
  requestState: 'state-1',
});

const OUTCOMES: Record<string, RunOutcome> = {
  result: { kind: 'result', result: { content: [] } },
  error: { kind: 'error', error: { code: -32603, message: 'boom' } },
  question: { kind: 'input_required', inputRequests: { q: {} }, requestState: 's' },
};

describe('a run outcome', () => {
  it.each<[string, TaskStatus, keyof typeof OUTCOMES, TaskStatus]>([
    ['completes a working task', 'working', 'result', 'completed'],
    ['fails a working task', 'working', 'error', 'failed'],
    ['asks through a working task', 'working', 'question', 'input_required'],
    ['leaves a cancelled task cancelled', 'cancelled', 'result', 'cancelled'],
    ['leaves a failed task failed', 'failed', 'result', 'failed'],
    ['leaves a completed task completed', 'completed', 'error', 'completed'],
    ['lands nowhere on a task waiting for input', 'input_required', 'result', 'input_required'],
  ])('%s', (_name, from, outcome, to) => {
    expect(afterOutcome(inStatus(from), OUTCOMES[outcome]!, T0 + 5).status).toBe(to);
  });

  it('fails a task whose round asks under a key an earlier round asked', () => {
    const asked = afterOutcome(base, OUTCOMES.question!, T0 + 1);
    const working = afterAnswers(asked, { q: 1 }, T0 + 2).task;
    const again = afterOutcome(working, { kind: 'input_required', inputRequests: { q: {}, r: {} }, requestState: null }, T0 + 3);
    expect(again).toMatchObject({ status: 'failed', error: TASK_ERRORS.reusedKey });
    const fresh = afterOutcome(working, { kind: 'input_required', inputRequests: { r: {} }, requestState: null }, T0 + 3);
    expect(fresh).toMatchObject({ status: 'input_required', askedKeys: ['q', 'r'] });
  });

  it('says why a task failed in its status message', () => {
    expect(afterOutcome(base, OUTCOMES.error!, T0 + 1).statusMessage).toBe('boom');
    expect(afterInterruption(base, T0 + 1).statusMessage).toBe(TASK_ERRORS.interrupted.message);
  });

  it('keeps the question and its state for the next round, and none of it on the wire', () => {
    const task = afterOutcome(base, OUTCOMES.question!, T0 + 5);
    expect(task).toMatchObject({ inputRequests: { q: {} }, answers: {}, requestState: 's', updatedAt: T0 + 5 });
    expect(detailedTaskOnWire(task)).not.toHaveProperty('requestState');
  });
});

describe('answers (tasks/update)', () => {
  it('keeps a partial answer and stays input_required, asking only what is open', () => {
    const { task, rerun } = afterAnswers(asking, { a: 1 }, T0 + 1);
    expect(rerun).toBeUndefined();
    expect(task).toMatchObject({ status: 'input_required', answers: { a: 1 } });
    expect(Object.keys(detailedTaskOnWire(task).inputRequests as object)).toEqual(['b']);
  });

  it('runs the next round with every answer and the state once all are in', () => {
    const first = afterAnswers(asking, { a: 1 }, T0 + 1).task;
    const { task, rerun } = afterAnswers(first, { b: 2, a: 'again' }, T0 + 2);
    expect(task).toMatchObject({ status: 'working', inputRequests: null, answers: null, requestState: null });
    expect(rerun).toEqual({ inputResponses: { a: 1, b: 2 }, requestState: 'state-1' });
  });

  const MAX = MAX_KEPT_ANSWERS_BYTES;
  it.each([
    // Kept as {"a":"…"}: 8 bytes and the answer's string as JSON.
    { name: 'ASCII, the bound exactly', kept: { a: 'x'.repeat(MAX - 8) }, bytes: MAX },
    { name: 'ASCII, a byte over', kept: { a: 'x'.repeat(MAX - 7) }, bytes: MAX + 1 },
    { name: '3-byte characters, the bound exactly', kept: { a: '字'.repeat((MAX - 8) / 3) }, bytes: MAX },
    {
      name: '3-byte characters, one over: a third of the bound in characters',
      kept: { a: '字'.repeat((MAX - 8) / 3 + 1) },
      bytes: MAX + 3,
    },
    { name: 'U+0001, 6 bytes each as stored, the bound exactly', kept: { a: '\u0001'.repeat((MAX - 8) / 6) }, bytes: MAX },
    { name: 'U+0001, one over', kept: { a: '\u0001'.repeat((MAX - 8) / 6 + 1) }, bytes: MAX + 6 },
  ])('keeps partial answers within 524,288 bytes of JSON as stored: $name ($bytes bytes)', ({ kept, bytes }) => {
    expect(new TextEncoder().encode(JSON.stringify(kept)).length).toBe(bytes);
    const decision = afterAnswers(asking, kept, T0 + 1);
    if (bytes > MAX) {
      expect(decision).toEqual({ task: asking, tooLarge: bytes });
    } else {
      expect(decision.tooLarge).toBeUndefined();
      expect(decision.task).toMatchObject({ status: 'input_required', answers: kept });
    }
  });

  it('does not bound answers that complete the round: they are not kept', () => {
    const large = 'x'.repeat(MAX_KEPT_ANSWERS_BYTES);
    const { task, rerun, tooLarge } = afterAnswers(asking, { a: large, b: large }, T0 + 1);
    expect(tooLarge).toBeUndefined();
    expect(task.answers).toBeNull();
    expect(rerun?.inputResponses).toEqual({ a: large, b: large });
  });

  it.each<[string, TaskRecord, Record<string, unknown>]>([
    ['ignores keys it did not ask', asking, { zzz: 1 }],
    ['ignores answers to a task not asking', inStatus('working'), { a: 1 }],
    ['ignores answers to a finished task', inStatus('completed'), { a: 1 }],
  ])('%s (the same task comes back)', (_name, task, responses) => {
    expect(afterAnswers(task, responses, T0 + 1).task).toBe(task);
  });
});

describe('cancel, interruption and status lines', () => {
  it.each<[TaskStatus, TaskStatus]>([
    ['working', 'cancelled'],
    ['input_required', 'cancelled'],
    ['completed', 'completed'],
    ['failed', 'failed'],
    ['cancelled', 'cancelled'],
  ])('cancel: %s → %s', (from, to) => {
    expect(afterCancel(inStatus(from), T0 + 1).status).toBe(to);
  });

  it.each<[TaskStatus, TaskStatus]>([
    ['working', 'failed'],
    ['input_required', 'input_required'],
    ['completed', 'completed'],
    ['cancelled', 'cancelled'],
  ])('a lost instance: %s → %s', (from, to) => {
    const task = afterInterruption(inStatus(from), T0 + 1);
    expect(task.status).toBe(to);
    if (from === 'working') expect(task.error).toEqual(TASK_ERRORS.interrupted);
  });

  it('takes a status line only while working, and only when it says something new', () => {
    const working = afterStatusMessage(base, '1/3', T0 + 1);
    expect(working).toMatchObject({ statusMessage: '1/3', updatedAt: T0 + 1 });
    expect(afterStatusMessage(working, '1/3', T0 + 2)).toBe(working);
    const done = inStatus('completed');
    expect(afterStatusMessage(done, 'late', T0 + 2)).toBe(done);
  });

  it('cuts a status line longer than MAX_STATUS_MESSAGE_CHARS', () => {
    const line = afterStatusMessage(base, 'x'.repeat(5000), T0 + 1).statusMessage!;
    expect(line).toHaveLength(MAX_STATUS_MESSAGE_CHARS);
    expect(line.endsWith('…')).toBe(true);
  });
});

describe('wire forms', () => {
  it('writes a Task with ISO times, the TTL and the poll interval, and nothing optional that is unset', () => {
    expect(taskOnWire(base)).toEqual({
      taskId: base.taskId,
      status: 'working',
      createdAt: '2026-12-01T00:00:00.000Z',
      lastUpdatedAt: '2026-12-01T00:00:00.000Z',
      ttlMs: 60_000,
      pollIntervalMs: 1000,
    });
  });

  it.each<[string, TaskRecord, string | undefined]>([
    ['inlines the result of a completed task', inStatus('completed', { result: { content: [] } }), 'result'],
    ['inlines the error of a failed task', inStatus('failed', { error: TASK_ERRORS.noAnswer }), 'error'],
    ['inlines the questions of a task asking', asking, 'inputRequests'],
    ['inlines nothing for a working task', base, undefined],
  ])('%s', (_name, task, field) => {
    const wire = detailedTaskOnWire(task);
    for (const key of ['result', 'error', 'inputRequests']) expect(Object.hasOwn(wire, key)).toBe(key === field);
  });

  it('expires at createdAt + ttlMs', () => {
    expect(isExpired(base, T0 + 59_999)).toBe(false);
    expect(isExpired(base, T0 + 60_000)).toBe(true);
  });
});

describe('the declaration and the id', () => {
  const meta = (capabilities: unknown) => ({ _meta: { 'io.modelcontextprotocol/clientCapabilities': capabilities } });
  it.each<[string, unknown, boolean]>([
    ['declared', meta({ extensions: { 'io.modelcontextprotocol/tasks': {} } }), true],
    ['another extension only', meta({ extensions: { 'example/other': {} } }), false],
    ['a non-object declaration', meta({ extensions: { 'io.modelcontextprotocol/tasks': true } }), false],
    ['the 2025 tasks capability', meta({ tasks: {} }), false],
    ['no capabilities', { _meta: {} }, false],
    ['no params', undefined, false],
  ])('%s → %s', (_name, params, declared) => {
    expect(declaresTasks(params)).toBe(declared);
  });

  it('issues ids of 128 random bits that only it could have issued', () => {
    const ids = new Set(Array.from({ length: 1000 }, newTaskId));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(isWellFormedTaskId(id)).toBe(true);
    for (const id of ['', 'AAAAAAAAAAAAAAAAAAAAAB', 'AAAAAAAAAAAAAAAAAAAAA', 'AAAAAAAAAAAAAAAAAAAAA=A', 'gate-test']) {
      expect(isWellFormedTaskId(id)).toBe(false);
    }
  });
});
