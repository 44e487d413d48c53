/**
 * `tasks/stream` (SEP-2694, Resumable Task Event Streams, draft) against the Worker in workerd,
 * with the task objects' real storage: each test names the receiver requirement of the SEP it
 * checks. The fixture tool `chatter` sends, per step, a progress notification, a log line and
 * an event of its own (`com.example.step`), so a task of S steps that ends has 3S + 2 events:
 * seq 0 its creation, 3S between, its terminal status last.
 */
import { abortAllDurableObjects } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { answerOf, modernRequest, postModernRaw } from '../support/modern-http.ts';
import { ENDED, message, SseReader, TIMED_OUT, type ReadEvent } from '../support/sse-reader.ts';
import { createTask, getTask, TASK_CLIENT, TASKS, taskMethod, waitForStatus } from '../support/task-http.ts';

type Message = { jsonrpc: '2.0'; id?: unknown; method?: string; params?: any; result?: any; error?: any };
type Event = { seq: number; taskId: string; type: string; payload: Record<string, any>; _meta: Record<string, any> };

const RELATED = 'io.modelcontextprotocol/related-task';
const UNKNOWN_TASK = 'AAAAAAAAAAAAAAAAAAAAAA';

const stream = (
  taskId: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  capabilities: Record<string, unknown> = TASK_CLIENT,
) => modernRequest('tasks/stream', { taskId, ...extra }, capabilities, headers);

/** A stream read to its end: its events, the message that ended it, and its frames as sent. */
async function readAll(response: Response, ms = 10_000): Promise<{ events: Event[]; end: Message | undefined; frames: ReadEvent[] }> {
  expect(response.headers.get('Content-Type')).toMatch(/^text\/event-stream/);
  const reader = new SseReader(response);
  try {
    const frames = (await reader.all(ms)).filter((frame) => frame.data !== '');
    const messages = frames.map(message) as Message[];
    const events = messages.filter((m) => m.method === 'notifications/tasks/event').map((m) => m.params as Event);
    const end = messages.at(-1)?.method === undefined ? messages.at(-1) : undefined;
    return { events, end, frames };
  } finally {
    await reader.cancel();
  }
}

/** Reads `n` events of an open stream. */
async function take(reader: SseReader, n: number, ms = 10_000): Promise<Event[]> {
  return (await reader.take(n, ms)).map((frame) => (message(frame) as Message).params as Event);
}

const seqs = (events: readonly Event[]) => events.map((event) => event.seq);
const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

/** A chatter task of `steps` steps, ended. */
async function chattered(steps: number) {
  const taskId = await createTask('chatter', { steps, interval_ms: 0 });
  await waitForStatus(taskId, 'completed');
  return taskId;
}

describe('the events of a task stream', () => {
  it('start at seq 0 and go up by exactly 1, in order, each a notifications/tasks/event with related-task metadata naming its task', async () => {
    const taskId = await createTask('chatter', { steps: 3, interval_ms: 5 });
    const response = await stream(taskId);
    const { events, end } = await readAll(response);
    // "The first event in a task stream MUST use seq: 0, and each subsequent event ... MUST increment by exactly 1."
    expect(seqs(events)).toEqual(range(0, 10));
    for (const event of events) {
      expect(event.taskId).toBe(taskId);
      // "Receivers MUST include io.modelcontextprotocol/related-task ... The metadata task ID MUST match params.taskId."
      expect(event._meta[RELATED]).toEqual({ taskId });
      // "Event payloads MUST be JSON objects."
      expect(typeof event.payload === 'object' && event.payload !== null && !Array.isArray(event.payload)).toBe(true);
      // "Implementations MUST NOT emit unprefixed event types": ours and the tool's are namespaced.
      expect(event.type).toMatch(/^(mcp-edge-sessions|com\.example)\.[a-z]+$/);
    }
    // In the order the tool sent them: per step its progress, its log line, its own event.
    expect(events.map((event) => event.type)).toEqual([
      'mcp-edge-sessions.status',
      ...[1, 2, 3].flatMap(() => ['mcp-edge-sessions.progress', 'mcp-edge-sessions.log', 'com.example.step']),
      'mcp-edge-sessions.status',
    ]);
    expect(events[0]!.payload).toEqual({ status: 'working' });
    expect(events.slice(1, 4).map((event) => event.payload)).toEqual([
      { progress: 1, total: 3, message: 'step 1 of 3' },
      { level: 'info', data: 'log 1' },
      { step: 1 },
    ]);
    // The result stays canonical in tasks/get: the terminal event points there.
    expect(events.at(-1)!.payload).toMatchObject({ status: 'completed', result: 'tasks/get' });
    // "When the receiver closes the stream normally, it returns an empty result."
    expect(end).toEqual({ jsonrpc: '2.0', id: expect.any(Number), result: { resultType: 'complete' } });
  });

  it('replay what was stored after the cursor, then continue live to the end', async () => {
    const taskId = await createTask('chatter', { steps: 12, interval_ms: 40 });
    const early = new SseReader(await stream(taskId));
    let seen: Event[];
    try {
      seen = await take(early, 7); // the task is still working: steps 1 and 2 are stored
    } finally {
      await early.cancel();
    }
    expect((await getTask(taskId)).result.status).toBe('working');
    const { events, end } = await readAll(await stream(taskId, { after: 3 }));
    // "Deliver retained events with seq greater than the supplied value, then continue with live events."
    expect(seqs(events)).toEqual(range(4, 37));
    expect(events.slice(0, 3)).toEqual(seen.slice(4, 7));
    expect(events.at(-1)!.payload.status).toBe('completed');
    expect(end?.result).toEqual({ resultType: 'complete' });
  });

  it('start at the earliest retained event when after is omitted: seq 0, the task’s creation', async () => {
    const taskId = await chattered(2);
    const { events } = await readAll(await stream(taskId));
    // "If after is omitted, the receiver MUST start at the earliest event it still retains."
    expect(seqs(events)).toEqual(range(0, 7));
  });

  it('are byte for byte the same frames from every cursor of an ended task', async () => {
    const taskId = await chattered(3);
    const whole = (await readAll(await stream(taskId))).frames.map((frame) => frame.raw);
    expect(whole).toHaveLength(12); // 11 events and the result
    for (let after = 0; after <= 9; after++) {
      const { frames, end } = await readAll(await stream(taskId, { after }));
      const raw = frames.map((frame) => frame.raw);
      // Every event after the cursor, as first sent; then the result, to this request's id.
      expect(raw.slice(0, -1)).toEqual(whole.slice(after + 1, -1));
      expect(end?.result).toEqual({ resultType: 'complete' });
    }
  });

  it('resume gap-free after a cut at every event boundary of a live task, each event once', async () => {
    const taskId = await createTask('chatter', { steps: 6, interval_ms: 30 });
    const got: Event[] = [];
    // One event per connection, then the client leaves: 20 connections, the task running meanwhile.
    for (let cut = 0; cut < 40 && got.at(-1)?.payload.status !== 'completed'; cut++) {
      const after = got.at(-1)?.seq;
      const response = await stream(taskId, after === undefined ? {} : { after });
      if (!response.headers.get('Content-Type')?.startsWith('text/event-stream')) break;
      const reader = new SseReader(response);
      try {
        got.push(...(await take(reader, 1)));
      } finally {
        await reader.cancel();
      }
    }
    expect(seqs(got)).toEqual(range(0, 19));
    expect(got.at(-1)!.payload.status).toBe('completed');
    // Nothing after the terminal event: the empty result at once.
    expect(await answerOf(await stream(taskId, { after: 19 }))).toMatchObject({ result: { resultType: 'complete' } });
  });

  it('stand in for a payload over TASK_MAX_EVENT_BYTES with an omitted event, so nothing is missing silently', async () => {
    const taskId = await createTask('chatter', { steps: 1, interval_ms: 0, payload_chars: 70_000 });
    await waitForStatus(taskId, 'completed');
    const { events } = await readAll(await stream(taskId));
    expect(seqs(events)).toEqual(range(0, 4));
    expect(events[3]).toMatchObject({
      type: 'mcp-edge-sessions.omitted',
      payload: { type: 'com.example.step', reason: 'too_large', maxBytes: 65_536 },
    });
    expect(events[3]!.payload.bytes).toBeGreaterThan(70_000);
  });
});

describe('the end of a task stream', () => {
  it('is the empty result at once, as JSON with no event, for an ended task with nothing after the cursor', async () => {
    const taskId = await chattered(1);
    const response = await stream(taskId, { after: 4 });
    // "... the receiver MUST return TaskStreamResult immediately with no event notifications."
    expect(response.headers.get('Content-Type')).toMatch(/^application\/json/);
    const answer = await answerOf(response);
    expect(answer.result).toMatchObject({ resultType: 'complete' });
    expect(answer.error).toBeUndefined();
  });

  it('comes right after the terminal status event of a task that ends while streamed', async () => {
    const taskId = await createTask('chatter', { steps: 3, interval_ms: 30 });
    const { events, end } = await readAll(await stream(taskId));
    expect(events.at(-1)).toMatchObject({ seq: 10, type: 'mcp-edge-sessions.status', payload: { status: 'completed' } });
    expect(end?.result).toEqual({ resultType: 'complete' });
  });

  it('stays open while the task waits for input, then goes on after the answer; the stream and tasks/get agree throughout', async () => {
    const taskId = await createTask('chatter', { steps: 4, interval_ms: 0, ask: 2 });
    const reader = new SseReader(await stream(taskId));
    try {
      const asked = await take(reader, 8);
      expect(asked.at(-1)).toMatchObject({ seq: 7, type: 'mcp-edge-sessions.status', payload: { status: 'input_required' } });
      // "A receiver that emits both ... SHOULD ensure status event entries are consistent with ... tasks/get."
      const waiting = (await getTask(taskId)).result;
      expect(waiting.status).toBe('input_required');
      expect(asked.at(-1)!.payload.inputRequests).toEqual(waiting.inputRequests);
      expect(await reader.next(300)).toBe(TIMED_OUT); // waiting: nothing, and the stream stays open
      await answerOf(
        await taskMethod('tasks/update', taskId, { inputResponses: { go_on: { action: 'accept', content: { confirm: true } } } }),
      );
      const rest = await take(reader, 8);
      expect(seqs(rest)).toEqual(range(8, 15));
      expect(rest[0]!.payload).toMatchObject({ status: 'working' });
      expect(
        rest
          .slice(1)
          .filter((event) => event.type === 'com.example.step')
          .map((event) => event.payload.step),
      ).toEqual([3, 4]);
      expect(rest.at(-1)!.payload).toMatchObject({ status: 'completed', result: 'tasks/get' });
      const done = (await getTask(taskId)).result;
      expect(done.status).toBe('completed');
      expect(done.result.content[0].text).toBe('chattered 4 steps');
      const end = await reader.next();
      expect(end !== ENDED && end !== TIMED_OUT && message(end)).toMatchObject({ result: { resultType: 'complete' } });
    } finally {
      await reader.cancel();
    }
  });

  it('of a cancelled task is its cancelled status event', async () => {
    const taskId = await createTask('chatter', { steps: 100, interval_ms: 50 });
    const reader = new SseReader(await stream(taskId));
    try {
      await take(reader, 4);
      await answerOf(await taskMethod('tasks/cancel', taskId));
      const rest = (await reader.all()).map(message) as Message[];
      const events = rest.filter((m) => m.method !== undefined).map((m) => m.params as Event);
      expect(events.at(-1)).toMatchObject({ type: 'mcp-edge-sessions.status', payload: { status: 'cancelled' } });
      expect(seqs(events)).toEqual(range(4, 3 + events.length));
      expect(rest.at(-1)?.result).toEqual({ resultType: 'complete' });
      expect((await getTask(taskId)).result.status).toBe('cancelled');
    } finally {
      await reader.cancel();
    }
  });
});

describe('cancelling a task stream', () => {
  it('stops delivery, not the task: it runs to its end, and a later stream resumes where the client left', async () => {
    const taskId = await createTask('chatter', { steps: 5, interval_ms: 40 });
    const reader = new SseReader(await stream(taskId));
    let seen: Event[];
    try {
      seen = await take(reader, 3);
    } finally {
      // Over HTTP, a stream is cancelled by closing its response.
      await reader.cancel();
    }
    // "Cancellation stops event delivery but does not cancel the underlying task."
    const done = await waitForStatus(taskId, 'completed');
    expect(done.result.content[0].text).toBe('chattered 5 steps');
    const { events } = await readAll(await stream(taskId, { after: seen.at(-1)!.seq }));
    expect(seqs(events)).toEqual(range(3, 16));
  });
});

describe('several streams of one task', () => {
  it('each receive every event: over HTTP every POST is a connection of its own', async () => {
    const taskId = await createTask('chatter', { steps: 4, interval_ms: 30 });
    const [a, b] = await Promise.all([stream(taskId), stream(taskId)]);
    const [first, second] = await Promise.all([readAll(a!), readAll(b!)]);
    expect(seqs(first.events)).toEqual(range(0, 13));
    expect(second.events).toEqual(first.events);
  });

  it('are refused in one POST: a 2026-07-28 request carries one message, so one connection never has two', async () => {
    const taskId = await chattered(1);
    const response = await postStream(JSON.stringify([streamRequest(1, taskId), streamRequest(2, taskId)]), taskId);
    expect(response.status).toBe(400);
    expect(await response.text()).not.toContain('notifications/tasks/event');
  });
});

/** A tasks/stream request as a client writes it. */
const streamRequest = (id: number, taskId: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tasks/stream',
  params: {
    taskId,
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': TASKS,
      'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' },
    },
  },
});

/** POSTs `body` with the 2026-07-28 routing headers, and `Mcp-Name` only when given. */
const postStream = (body: string, name?: string) =>
  postModernRaw(body, { 'Mcp-Method': 'tasks/stream', ...(name !== undefined && { 'Mcp-Name': name }) });

describe('tasks/stream refuses', () => {
  it.each<[string, unknown]>([
    ['a negative after', -1],
    ['a fractional after', 1.5],
    ['an after in a string', '3'],
    ['a null after', null],
    ['an after beyond the last event', 6],
    ['an unsafe integer', 2 ** 53],
  ])('%s with -32602, as JSON', async (_name, after) => {
    const taskId = await chattered(1); // seq 0 … 4
    const response = await stream(taskId, { after });
    // "Receivers MUST return -32602 (Invalid params) if after is negative, not an integer, or otherwise not a valid sequence number value."
    const answer = await answerOf(response);
    expect(answer.error.code).toBe(-32602);
    expect(answer.result).toBeUndefined();
  });

  it('a cursor that is the last event of a working task, by waiting for the next: it is valid', async () => {
    const taskId = await createTask('chatter', { steps: 2, interval_ms: 100 });
    const { events } = await readAll(await stream(taskId, { after: 0 }));
    expect(seqs(events)).toEqual(range(1, 7));
  });

  it('an unknown task exactly as tasks/get does', async () => {
    const streamed = await answerOf(await stream(UNKNOWN_TASK));
    const got = await answerOf(await taskMethod('tasks/get', UNKNOWN_TASK));
    expect({ ...streamed, id: 0 }).toEqual({ ...got, id: 0 });
    expect(streamed.error.code).toBe(-32602);
  });

  it('a client that did not declare the extension with -32021', async () => {
    const taskId = await chattered(1);
    const answer = await answerOf(await stream(taskId, {}, {}, {}));
    expect(answer.error.code).toBe(-32021);
  });

  it.each([
    ['plain', UNKNOWN_TASK],
    ['in the base64 form', `=?base64?${btoa('xyz')}?=`],
  ])(
    'an Mcp-Name (%s) that is not the task id with 400 and -32020, byte for byte as the SDK refuses it for tasks/get',
    async (_form, header) => {
      const taskId = await chattered(1);
      const streamed = await stream(taskId, {}, { 'Mcp-Name': header });
      const got = await taskMethod('tasks/get', taskId, {}, { 'Mcp-Name': header });
      expect([streamed.status, got.status]).toEqual([400, 400]);
      const [a, b] = [await answerOf(streamed), await answerOf(got)];
      expect({ ...a, id: 0 }).toEqual({ ...b, id: 0 });
      expect(a.error.code).toBe(-32020);
    },
  );

  it.each<[string, (taskId: string) => string | undefined]>([
    ['in the base64 form', (taskId) => `=?base64?${btoa(taskId)}?=`],
    ['absent (a client that sends it only for the methods its SDK knows)', () => undefined],
  ])('nothing for an Mcp-Name %s', async (_name, header) => {
    const taskId = await chattered(1);
    const { events } = await readAll(await postStream(JSON.stringify(streamRequest(1, taskId)), header(taskId)));
    expect(seqs(events)).toEqual(range(0, 4));
  });
});

describe('a task whose instance dies while streamed', () => {
  it('ends, on resume, with every stored event and then its interruption: never a silent end, never a re-run', async () => {
    const taskId = await createTask('chatter', { steps: 200, interval_ms: 30 });
    const reader = new SseReader(await stream(taskId));
    let seen: Event[];
    try {
      seen = await take(reader, 10);
      await abortAllDurableObjects();
      // The object is gone: the stream ends without its result (the client resumes).
      const rest: ReadEvent[] = [];
      for (let n = 0; n < 1000; n++) {
        const next = await reader.next(5_000);
        if (next === ENDED || next === TIMED_OUT) break;
        rest.push(next);
      }
      const messages = rest.map(message) as Message[];
      expect(messages.some((m) => m.result !== undefined)).toBe(false);
      seen.push(...messages.filter((m) => m.method !== undefined).map((m) => m.params as Event));
    } finally {
      await reader.cancel();
    }
    const last = seen.at(-1)!.seq;
    const { events, end } = await readAll(await stream(taskId, { after: last }));
    const all = [...seen, ...events];
    expect(seqs(all)).toEqual(range(0, all.length - 1));
    const final = all.at(-1)!;
    expect(final.payload).toMatchObject({ status: 'failed', error: { data: { reason: 'task_interrupted' } } });
    // Nothing from a handler re-created with default state: the steps only go up.
    const steps = all.filter((event) => event.type === 'com.example.step').map((event) => event.payload.step);
    expect(steps).toEqual(range(1, steps.length));
    expect(end?.result).toEqual({ resultType: 'complete' });
    expect((await getTask(taskId)).result).toMatchObject({ status: 'failed', error: final.payload.error });
  });
});

describe('server/discover', () => {
  it('advertises the eventStreams sub-capability of the Tasks extension', async () => {
    const answer = await answerOf(await modernRequest('server/discover', {}, TASK_CLIENT));
    expect(answer.result.capabilities.extensions['io.modelcontextprotocol/tasks']).toEqual({ eventStreams: {} });
  });
});

describe('the streams open on one task', () => {
  it('are at most 32: the next is refused with too_many_task_streams until one closes', async () => {
    const taskId = await createTask('confirm_delete', { filename: 'crowded.txt' });
    await waitForStatus(taskId, 'input_required');
    const readers = await Promise.all(Array.from({ length: 32 }, async () => new SseReader(await stream(taskId))));
    try {
      for (const reader of readers)
        expect((await take(reader, 2)).map((event) => event.payload.status)).toEqual(['working', 'input_required']);
      const refused = await answerOf(await stream(taskId));
      expect(refused.error).toMatchObject({ code: -32000, data: { reason: 'too_many_task_streams', limit: 32 } });
      await readers.pop()!.cancel();
      // The Worker closes the relay socket as its client leaves; the object frees the slot then.
      let again: Response | undefined;
      for (let attempt = 0; attempt < 50; attempt++) {
        const response = await stream(taskId);
        if (response.headers.get('Content-Type')?.startsWith('text/event-stream')) {
          again = response;
          break;
        }
        await response.text();
        await scheduler.wait(20);
      }
      expect(again).toBeDefined();
      readers.push(new SseReader(again!));
    } finally {
      await Promise.all(readers.map((reader) => reader.cancel()));
    }
  });
});
