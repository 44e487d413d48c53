/**
 * What happens to a task, as SEP-2694 events (src/core/task-events.ts): every type under our
 * prefix, payloads JSON objects, the result never copied into the timeline, never requestState,
 * tool-emitted types namespaced and never ours, and the notification carrying the related task.
 */
import { describe, expect, it } from 'vitest';
import {
  boundedEvent,
  encodeEventNotification,
  eventNotification,
  notificationEvent,
  statusEvent,
  TASK_EVENT_TYPES,
  toolEventProblem,
} from '../../src/core/task-events.ts';
import { afterCancel, afterOutcome, afterStatusMessage, newTask, type TaskRecord } from '../../src/core/task.ts';
import { TASK_EVENT_PREFIX } from '../../src/core/task-stream.ts';

const working = newTask('t', 1_000, 60_000, 1_000);
const asking = afterOutcome(
  working,
  { kind: 'input_required', inputRequests: { name: { method: 'elicitation/create' } }, requestState: 'sealed' },
  2_000,
);

describe('statusEvent', () => {
  it.each<{ name: string; task: TaskRecord; payload: Record<string, unknown> }>([
    { name: 'working', task: working, payload: { status: 'working' } },
    {
      name: 'working, with its status line',
      task: afterStatusMessage(working, '2/5', 1_500),
      payload: { status: 'working', statusMessage: '2/5' },
    },
    {
      name: 'input_required: its questions, never its requestState',
      task: asking,
      payload: { status: 'input_required', inputRequests: { name: { method: 'elicitation/create' } } },
    },
    {
      name: 'completed: where the result is, not the result',
      task: afterOutcome(working, { kind: 'result', result: { content: [{ type: 'text', text: 'secret' }] } }, 3_000),
      payload: { status: 'completed', result: 'tasks/get' },
    },
    {
      name: 'failed: why',
      task: afterOutcome(working, { kind: 'error', error: { code: -32603, message: 'boom' } }, 3_000),
      payload: { status: 'failed', statusMessage: 'boom', error: { code: -32603, message: 'boom' } },
    },
    { name: 'cancelled', task: afterCancel(working, 3_000), payload: { status: 'cancelled' } },
  ])('$name', ({ task, payload }) => {
    expect(statusEvent(task)).toEqual({ type: TASK_EVENT_TYPES.status, payload });
    expect(JSON.stringify(statusEvent(task))).not.toContain('sealed');
  });
});

describe('notificationEvent', () => {
  it.each([
    {
      name: 'progress, without the round’s token',
      method: 'notifications/progress',
      params: { progressToken: 'task', progress: 2, total: 5, message: 'two' },
      event: { type: TASK_EVENT_TYPES.progress, payload: { progress: 2, total: 5, message: 'two' } },
    },
    {
      name: 'a log message',
      method: 'notifications/message',
      params: { level: 'info', logger: 'tool', data: { step: 1 }, _meta: { x: 1 } },
      event: { type: TASK_EVENT_TYPES.log, payload: { level: 'info', logger: 'tool', data: { step: 1 } } },
    },
    { name: 'progress without a number', method: 'notifications/progress', params: { progressToken: 'task' }, event: undefined },
    { name: 'anything else', method: 'notifications/resources/updated', params: { uri: 'x' }, event: undefined },
  ])('$name', ({ method, params, event }) => {
    expect(notificationEvent(method, params)).toEqual(event);
  });
});

describe('toolEventProblem', () => {
  it.each([
    ['com.example.review.comment', { text: 'hi' }],
    ['io.acme.partial', {}],
    ['acme.step_1', { n: 1 }],
  ])('accepts %s', (type, payload) => {
    expect(toolEventProblem(type, payload)).toBeUndefined();
  });

  it.each([
    ['content', {}, 'an event type is a namespaced name, as com.example.review.comment'],
    ['', {}, 'an event type is a namespaced name, as com.example.review.comment'],
    ['com..x', {}, 'an event type is a namespaced name, as com.example.review.comment'],
    ['com.example.', {}, 'an event type is a namespaced name, as com.example.review.comment'],
    [7, {}, 'an event type is a namespaced name, as com.example.review.comment'],
    [`${TASK_EVENT_PREFIX}status`, {}, `the ${TASK_EVENT_PREFIX} types are this server's own`],
    ['com.example.x', [], 'an event payload is a JSON object'],
    ['com.example.x', null, 'an event payload is a JSON object'],
    ['com.example.x', 'text', 'an event payload is a JSON object'],
  ])('refuses %j with %j', (type, payload, problem) => {
    expect(toolEventProblem(type, payload)).toBe(problem);
  });
});

it('every type of ours is under our prefix', () => {
  for (const type of Object.values(TASK_EVENT_TYPES)) expect(type.startsWith(TASK_EVENT_PREFIX)).toBe(true);
});

it('the notification carries the related task, the same id as its params', () => {
  expect(eventNotification('t1', { seq: 3, type: TASK_EVENT_TYPES.log, payload: { level: 'info', data: 'x' } })).toEqual({
    jsonrpc: '2.0',
    method: 'notifications/tasks/event',
    params: {
      seq: 3,
      taskId: 't1',
      type: TASK_EVENT_TYPES.log,
      payload: { level: 'info', data: 'x' },
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't1' } },
    },
  });
});

it.each<[string, string, string, Record<string, unknown>]>([
  ['a plain event', 't1', TASK_EVENT_TYPES.progress, { progress: 1, total: 2 }],
  ['an empty payload', 'k3Jd9xQ2bT5nW8pL1vR4sA', 'com.example.step', {}],
  [
    'text that JSON escapes',
    'id "quoted" \\ \u2028',
    'com.example.x',
    { text: 'line\nnext "q" \u0000 ✓ 🚀', nested: { a: [1, null, true] } },
  ],
  ['non-ASCII in the id, the type and the payload', 'tâche-字', 'com.exemple.étape', { note: 'é字🚀' }],
  [
    'lone surrogates, which JSON escapes to ASCII: counted escaped, not as the raw units',
    'id-\ud800',
    'com.example.\udc00',
    { text: 'a\ud83d b' },
  ],
])(
  'the notification encoded from the stored payload is the bytes JSON.stringify gives, and its UTF-8 size (%s)',
  (_name, taskId, type, payload) => {
    const seq = 41;
    const payloadJson = JSON.stringify(payload);
    const expected = JSON.stringify(eventNotification(taskId, { seq, type, payload }));
    expect(encodeEventNotification(taskId, { seq, type, payloadJson })).toEqual({
      text: expected,
      bytes: new TextEncoder().encode(expected).length,
    });
  },
);

describe('an event over TASK_MAX_EVENT_BYTES', () => {
  const payload = { text: 'é'.repeat(10) }; // 31 bytes of JSON in UTF-8, 21 characters
  const bytes = new TextEncoder().encode(JSON.stringify(payload)).length;

  it('at the bound (counted in UTF-8 bytes) is stored as is', () => {
    expect(boundedEvent({ type: 'com.example.x', payload }, bytes)).toEqual({
      type: 'com.example.x',
      payloadJson: JSON.stringify(payload),
    });
  });

  it('a byte over it is an omitted note: its type and size', () => {
    const bounded = boundedEvent({ type: 'com.example.x', payload }, bytes - 1);
    expect(bounded.type).toBe(TASK_EVENT_TYPES.omitted);
    expect(JSON.parse(bounded.payloadJson)).toEqual({ type: 'com.example.x', reason: 'too_large', bytes: 31, maxBytes: 30 });
  });
});
