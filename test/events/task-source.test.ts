/**
 * Tasks as MCP Events event sources (experimental-ext-triggers-events, task event sources
 * proposal; src/core/task-source.ts) against the Worker in workerd: a task created by a call that
 * declared MCP Events names `mcp-edge-sessions.task` in its CreateTaskResult, and polling or
 * streaming it reads the same timeline `tasks/stream` serves — every event once, in order, as
 * `data` — until the task's terminal status, after which the subscription answers NotFound
 * `task_ended`. The fixture tool `chatter` sends per step a progress, a log line and an event of
 * its own; with `ask` it waits in input_required after that many steps.
 */
import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { answerOf, modernRequest } from '../support/modern-http.ts';
import { ENDED, message, SseReader, TIMED_OUT } from '../support/sse-reader.ts';
import { TASK_CLIENT, taskMethod, taskObject, waitForStatus } from '../support/task-http.ts';

const TYPE = 'mcp-edge-sessions.task';
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
const UNKNOWN_TASK = 'AAAAAAAAAAAAAAAAAAAAAA';
const HEARTBEAT = 'notifications/events/heartbeat';
/** A client that declared both extensions (and answers the fixtures' questions). */
const BOTH = { ...TASK_CLIENT, extensions: { ...TASK_CLIENT.extensions, 'io.modelcontextprotocol/events': {} } };

type Occurrence = { eventId: string; name: string; timestamp: string; data: { seq: number; taskId: string; type: string; payload: any } };
type Message = { jsonrpc: '2.0'; id?: unknown; method?: string; params?: any; result?: any; error?: any };

async function call(name: string, args: Record<string, unknown>, capabilities: Record<string, unknown> = BOTH) {
  const answer = await answerOf(await modernRequest('tools/call', { name, arguments: args }, capabilities));
  if (answer.result?.resultType !== 'task') throw new Error(`expected a task, got ${JSON.stringify(answer).slice(0, 500)}`);
  return answer.result as { taskId: string; eventSource?: { name: string; input: { taskId: string }; initialCursor: string } };
}

const poll = async (taskId: string, cursor: string | null, extra: Record<string, unknown> = {}) =>
  answerOf(await modernRequest('events/poll', { name: TYPE, arguments: { taskId }, cursor, ...extra }, BOTH));

const stream = (taskId: string, cursor: string | null) =>
  modernRequest('events/stream', { name: TYPE, arguments: { taskId }, cursor }, BOTH);

/** Every occurrence from `cursor` by polls of `maxEvents`, and the cursor after the last. */
async function pollAll(taskId: string, cursor: string, maxEvents: number) {
  const events: Occurrence[] = [];
  for (let polls = 0; polls < 100; polls++) {
    const { result, error } = await poll(taskId, cursor, { maxEvents });
    if (error !== undefined) throw new Error(JSON.stringify(error));
    expect(result).toMatchObject({ resultType: 'complete', truncated: false });
    expect(result.events.length).toBeLessThanOrEqual(maxEvents);
    events.push(...result.events);
    cursor = result.cursor;
    if (!result.hasMore) return { events, cursor };
  }
  throw new Error('the polls never ended');
}

/** The task's timeline as tasks/stream sends it: each event's params without `_meta`. */
async function timeline(taskId: string) {
  const reader = new SseReader(await modernRequest('tasks/stream', { taskId }, TASK_CLIENT));
  try {
    const messages = (await reader.all(10_000)).filter((frame) => frame.data !== '').map(message) as Message[];
    return messages.filter((m) => m.method === 'notifications/tasks/event').map(({ params: { _meta, ...event } }) => event);
  } finally {
    await reader.cancel();
  }
}

const ended = (status: string) => ({
  code: -32023,
  message: expect.any(String),
  data: { kind: 'subscription', reason: 'task_ended', status },
});

describe('a task event source', () => {
  it('is named in the CreateTaskResult only when the call declared MCP Events', async () => {
    const declared = await call('chatter', { steps: 1, interval_ms: 0 });
    expect(declared.eventSource).toEqual({ name: TYPE, input: { taskId: declared.taskId }, initialCursor: expect.any(String) });
    // "Servers MUST NOT include eventSource in CreateTaskResult unless the server and client have declared the Events capability."
    const undeclared = await call('chatter', { steps: 1, interval_ms: 0 }, TASK_CLIENT);
    expect(undeclared).not.toHaveProperty('eventSource');
  });

  it('is a type events/list lists, its input the task id', async () => {
    const { result } = await answerOf(await modernRequest('events/list', {}, BOTH));
    // "The named event type MUST be resolvable via events/list."
    const type = result.events.find((event: { name: string }) => event.name === TYPE);
    expect(type).toMatchObject({
      delivery: ['poll', 'push'],
      inputSchema: { type: 'object', properties: { taskId: { type: 'string' } }, required: ['taskId'] },
      payloadSchema: { type: 'object', required: ['seq', 'taskId', 'type', 'payload'] },
    });
    expect(result.events.map((event: { name: string }) => event.name)).toEqual([
      'demo.note',
      'demo.other',
      'demo.tiny',
      'demo.polled',
      'demo.watched',
      'demo.upstream',
      TYPE,
    ]);
  });

  it('replays by poll from initialCursor every timeline event in order, as tasks/stream sends it; the next poll is told the task ended', async () => {
    const { taskId, eventSource } = await call('chatter', { steps: 3, interval_ms: 0 });
    await waitForStatus(taskId, 'completed');
    const expected = await timeline(taskId);
    expect(expected).toHaveLength(11);
    // "The client passes this as the subscription cursor to replay events emitted before it subscribed."
    const { events, cursor } = await pollAll(taskId, eventSource!.initialCursor, 4);
    expect(events.map((event) => event.data)).toEqual(expected);
    for (const event of events) {
      // "Events delivered through a task event source MUST conform to the EventOccurrence schema."
      expect(event).toEqual({
        eventId: `${taskId}-${event.data.seq}`,
        name: TYPE,
        timestamp: expect.any(String),
        data: expect.any(Object),
      });
      expect(new Date(event.timestamp).toISOString()).toBe(event.timestamp);
    }
    // Replaying again gives the same occurrences (ids, times and data): one stored timeline.
    expect((await pollAll(taskId, eventSource!.initialCursor, 100)).events).toEqual(events);
    // "The server MUST terminate the event stream when the task reaches a terminal status": the poll after the last event.
    expect((await poll(taskId, cursor)).error).toEqual(ended('completed'));
    // From now, on an ended task: the same end.
    expect((await poll(taskId, null)).error).toEqual(ended('completed'));
    // A stream from there is refused at once, no stream opened.
    const refused = await stream(taskId, cursor);
    expect(refused.headers.get('Content-Type')).not.toContain('text/event-stream');
    expect((await answerOf(refused)).error).toEqual(ended('completed'));
  });

  it('streams from initialCursor what was stored, then live events, and ends at the terminal status', async () => {
    const { taskId, eventSource } = await call('chatter', { steps: 4, interval_ms: 0, ask: 2 });
    await waitForStatus(taskId, 'input_required');
    const response = await stream(taskId, eventSource!.initialCursor);
    expect(response.headers.get('Content-Type')).toContain('text/event-stream');
    const reader = new SseReader(response);
    const messages: Message[] = [];
    try {
      const next = async () => {
        for (;;) {
          const frame = await reader.next(10_000);
          if (frame === ENDED || frame === TIMED_OUT)
            throw new Error(`stream ${String(frame)} after ${JSON.stringify(messages).slice(-500)}`);
          const got = message(frame) as Message;
          messages.push(got);
          // The fixture's heartbeat is 1 s: one may come between any two events.
          if (got.method !== HEARTBEAT) return got;
        }
      };
      expect(await next()).toMatchObject({
        method: 'notifications/events/active',
        params: { cursor: expect.any(String), truncated: false },
      });
      // What the task stored before the stream opened: up to its question.
      for (let event = await next(); ; event = await next()) {
        expect(event.method).toBe('notifications/events/event');
        if (event.params.data.payload.status === 'input_required') break;
      }
      const answered = await taskMethod('tasks/update', taskId, {
        inputResponses: { go_on: { action: 'accept', content: { confirm: true } } },
      });
      expect((await answerOf(answered)).error).toBeUndefined();
      // Then live, to the terminal status.
      for (let event = await next(); event.params.data?.payload.status !== 'completed'; event = await next()) {
        expect(event.method).toBe('notifications/events/event');
      }
      // The end: terminated with the same error a poll gets, then the stream's result, then the stream closes.
      expect(await next()).toMatchObject({ method: 'notifications/events/terminated', params: { error: ended('completed') } });
      expect(await next()).toMatchObject({ id: expect.anything(), result: { resultType: 'complete' } });
      expect(await reader.next(5_000)).toBe(ENDED);
    } finally {
      await reader.cancel();
    }
    const events = messages.filter((m) => m.method === 'notifications/events/event').map((m) => m.params);
    expect(events.map(({ data }) => data)).toEqual(await timeline(taskId));
    // "Every notifications/events/* message carries the JSON-RPC id of the parent events/stream request."
    const id = messages.at(-1)!.id;
    for (const m of messages) expect((m.params ?? m.result)._meta[SUBSCRIPTION_ID]).toBe(id);
    // Each event's cursor continues right after it: from the last, the subscription has ended.
    const middle = events[3]!;
    const after = await poll(taskId, middle.cursor, { maxEvents: 1 });
    expect(after.result.events[0].data.seq).toBe(middle.data.seq + 1);
    expect((await poll(taskId, events.at(-1)!.cursor)).error).toEqual(ended('completed'));
  });

  it('pushes each event live as the task stores it, over one socket its object holds, and a cancel ends the stream', async () => {
    // Works for an hour, a progress each second: nothing ends it but the cancel.
    const { taskId, eventSource } = await call('slow_compute', { seconds: 3600, label: 'long' });
    const reader = new SseReader(await stream(taskId, eventSource!.initialCursor));
    const sockets = () => runInDurableObject(taskObject(taskId), (_object, state) => state.getWebSockets('task-source').length);
    try {
      // The fixture's heartbeat is 1 s: one may come between any two events.
      const frames = async (n: number) => {
        const got: Message[] = [];
        while (got.length < n)
          got.push(...((await reader.take(1, 10_000)).map(message) as Message[]).filter((m) => m.method !== HEARTBEAT));
        return got;
      };
      const [active, created, progress] = await frames(3);
      expect(active!.method).toBe('notifications/events/active');
      expect(created!.params.data).toMatchObject({ seq: 0, type: 'mcp-edge-sessions.status', payload: { status: 'working' } });
      // Stored after the stream opened, and heard while the task works: live.
      expect(progress!.params.data).toMatchObject({ seq: 1, type: 'mcp-edge-sessions.progress', payload: { progress: 1, total: 3600 } });
      expect((await answerOf(await taskMethod('tasks/get', taskId))).result.status).toBe('working');
      // The stream's feed is a socket the task's object holds (hibernatable), not a loop asking it.
      expect(await sockets()).toBe(1);
      await taskMethod('tasks/cancel', taskId);
      // "The server SHOULD terminate the event stream after the task transitions to a terminal status."
      const rest = ((await reader.all(10_000)).map(message) as Message[]).filter((m) => m.method !== HEARTBEAT);
      expect(rest.at(-3)!.params.data.payload.status).toBe('cancelled');
      expect(rest.at(-2)).toMatchObject({ method: 'notifications/events/terminated', params: { error: ended('cancelled') } });
      expect(rest.at(-1)).toMatchObject({ result: { resultType: 'complete' } });
    } finally {
      await reader.cancel();
    }
    expect(await sockets()).toBe(0);
  });

  it('refuses a cursor of another task as one of another log, and answers an unknown task NotFound', async () => {
    const mine = await call('chatter', { steps: 1, interval_ms: 0 });
    const other = await call('chatter', { steps: 1, interval_ms: 0 });
    const foreign = await poll(mine.taskId, other.eventSource!.initialCursor);
    expect(foreign.error).toMatchObject({ code: -32602, data: { reason: 'cursor_other_log' } });
    const streamed = await answerOf(await stream(mine.taskId, other.eventSource!.initialCursor));
    expect(streamed.error).toMatchObject({ code: -32602, data: { reason: 'cursor_other_log' } });
    const unknown = { code: -32023, message: expect.any(String), data: { kind: 'subscription', reason: 'unknown_task' } };
    expect((await poll(UNKNOWN_TASK, null)).error).toEqual(unknown);
    expect((await answerOf(await stream(UNKNOWN_TASK, null))).error).toEqual(unknown);
    // "The provided input MUST be valid according to the event type's inputSchema": one that is not is refused.
    const missing = await answerOf(await modernRequest('events/poll', { name: TYPE, arguments: {}, cursor: null }, BOTH));
    expect(missing.error).toMatchObject({ code: -32602, data: { reason: 'invalid_arguments' } });
  });

  it('skips nothing silently: maxAgeMs that skips nothing is a continuation', async () => {
    const { taskId, eventSource } = await call('chatter', { steps: 1, interval_ms: 0 });
    await waitForStatus(taskId, 'completed');
    const { result } = await poll(taskId, eventSource!.initialCursor, { maxAgeMs: 3_600_000 });
    expect(result).toMatchObject({ truncated: false, hasMore: false });
    expect(result.events.map((event: Occurrence) => event.data.seq)).toEqual([0, 1, 2, 3, 4]);
  });
});
