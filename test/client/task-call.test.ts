/**
 * callToolAsTask with the official SDK client (`@modelcontextprotocol/client`, 2026-07-28,
 * declaring the Tasks extension) against the Worker in workerd: the call the SDK's own callTool
 * cannot read, followed to its result through cut streams; the inline answers; each end of a
 * task as its typed error; and the one tools/call, never re-sent, whatever breaks.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { abortAllDurableObjects } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import {
  callToolAsTask,
  TaskCancelledError,
  TaskFailedError,
  TaskInterruptedError,
  ToolCallLostError,
  readTaskEvent,
  type DetailedTask,
  type FetchLike,
  type TaskStreamEvent,
} from '../../src/client/index.ts';
import { URL_ } from '../support/mcp-http.ts';
import { getTask, taskMethod } from '../support/task-http.ts';
import { faultyFetch, type Cut, type SeenRequest } from './faults.ts';

const FAST = { initialDelayMs: 5, maxDelayMs: 20, factor: 1.5, maxAttempts: 20 };
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

type Negotiation = 'legacy' | { pin: '2026-07-28' };

/** The official client as a user constructs it to be served tasks: the extension declared, 2026-07-28. */
async function connect(
  fetch: FetchLike,
  { capabilities = TASKS as Record<string, object>, mode = { pin: '2026-07-28' } as Negotiation } = {},
) {
  const client = new Client({ name: 'task-call-test', version: '1.0.0' }, { capabilities, versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL(URL_), { fetch }));
  return client;
}

const text = (result: { content?: readonly unknown[] }) => (result.content as { text: string }[])[0]!.text;
const rpcs = (fetch: ReturnType<typeof faultyFetch>) => fetch.log.map((entry) => entry.rpc);
const toolCalls = (fetch: ReturnType<typeof faultyFetch>) => rpcs(fetch).filter((rpc) => rpc === 'tools/call').length;
const seqs = (events: TaskStreamEvent[]) => events.map((event) => event.seq);
const from0 = (events: TaskStreamEvent[]) => Array.from({ length: events.length }, (_, seq) => seq);

describe('callToolAsTask with the official client', () => {
  it("is the call the SDK's own callTool refuses: the SDK loses the task, callToolAsTask follows it to its result", async () => {
    const fetch = faultyFetch();
    const client = await connect(fetch);
    // The reproduction: the server answers a task; the SDK throws, without its id.
    const refused = await client.callTool({ name: 'chatter', arguments: { steps: 2, interval_ms: 0 } }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'UNSUPPORTED_RESULT_TYPE', message: "Unsupported result type 'task' for tools/call" });
    expect(JSON.stringify(refused)).not.toMatch(/taskId/);

    const created: DetailedTask[] = [];
    const events: TaskStreamEvent[] = [];
    const { result, task, lastSeq } = await callToolAsTask(
      client,
      { name: 'chatter', arguments: { steps: 3, interval_ms: 0 } },
      { url: URL_, fetch, reconnect: FAST, onTask: (task) => void created.push(task), onEvent: (event) => void events.push(event) },
    );
    expect(text(result)).toBe('chattered 3 steps');
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ status: 'working' });
    expect(task).toMatchObject({ taskId: created[0]!.taskId, status: 'completed' });
    // Per step a progress, a log line and an event of its own, between working and completed.
    expect(seqs(events)).toEqual(from0(events));
    expect(events).toHaveLength(11);
    expect(lastSeq).toBe(10);
    expect(toolCalls(fetch)).toBe(2);

    // The Client's transport now hands a plain callTool the task, not the SDK's bare refusal.
    const named = await client.callTool({ name: 'chatter', arguments: { steps: 1, interval_ms: 0 } }).catch((error: unknown) => error);
    expect(named).toMatchObject({ code: -32603, data: { reason: 'task_answer', task: { status: 'working' } } });
    expect((named as { data: { task: { taskId: unknown } } }).data.task.taskId).toEqual(expect.any(String));
    await client.close();
  });

  it('answers inline when the server makes no task: a tool that never is one, a client without the extension, a 2025 session', async () => {
    const fetch = faultyFetch();
    const declaring = await connect(fetch);
    const greeted = await callToolAsTask(declaring, { name: 'greet', arguments: { name: 'Ada' } }, { url: URL_, fetch });
    expect(greeted).toEqual({
      result: expect.objectContaining({ content: [{ type: 'text', text: 'Hello, Ada!' }] }),
      task: undefined,
      lastSeq: undefined,
    });
    await declaring.close();

    const args = { seconds: 0, label: 'inline' };
    for (const client of [await connect(fetch, { capabilities: {} }), await connect(fetch, { mode: 'legacy' })]) {
      const onTask = () => expect.fail('no task was made');
      const { result, task } = await callToolAsTask(client, { name: 'slow_compute', arguments: args }, { url: URL_, fetch, onTask });
      expect(text(result)).toBe('Computed inline in 0 s');
      expect(task).toBeUndefined();
      await client.close();
    }
    expect(rpcs(fetch).filter((rpc) => rpc?.startsWith('tasks/'))).toEqual([]);
  });

  it('returns a tool error result as a completed task, and rejects a failed task with TaskFailedError', async () => {
    const fetch = faultyFetch();
    const client = await connect(fetch);
    const failedJob = await callToolAsTask(client, { name: 'failing_job' }, { url: URL_, fetch, reconnect: FAST });
    expect(failedJob.task?.status).toBe('completed');
    expect(failedJob.result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'The job failed: the input was rejected' }] });

    const error = await callToolAsTask(client, { name: 'protocol_error_job' }, { url: URL_, fetch, reconnect: FAST }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error).not.toBeInstanceOf(TaskInterruptedError);
    expect(error).toMatchObject({
      name: 'TaskFailedError',
      error: { code: -32603, message: 'The job hit an internal error' },
      reason: undefined,
    });
    expect((error as TaskFailedError).task.status).toBe('failed');
    await client.close();
  });

  it('rejects a task cancelled while it runs with TaskCancelledError', async () => {
    const fetch = faultyFetch();
    const client = await connect(fetch);
    const error = await callToolAsTask(
      client,
      { name: 'slow_compute', arguments: { seconds: 60, label: 'never' } },
      // Another request of the principal cancels it once it exists.
      { url: URL_, fetch, reconnect: FAST, onTask: async (task) => void (await taskMethod('tasks/cancel', task.taskId)) },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskCancelledError);
    expect(error).toMatchObject({ name: 'TaskCancelledError', task: { status: 'cancelled' } });
    await client.close();
  });

  it('rejects a task whose instance dies with TaskInterruptedError, after every event it stored', async () => {
    const fetch = faultyFetch();
    const client = await connect(fetch);
    const events: TaskStreamEvent[] = [];
    const error = await callToolAsTask(
      client,
      { name: 'chatter', arguments: { steps: 200, interval_ms: 20 } },
      {
        url: URL_,
        fetch,
        reconnect: FAST,
        onEvent: async (event) => {
          events.push(event);
          if (event.seq === 6) await abortAllDurableObjects();
        },
      },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskInterruptedError);
    expect(error).toBeInstanceOf(TaskFailedError);
    expect(error).toMatchObject({ reason: 'task_interrupted', error: { code: -32603 }, lastSeq: events.at(-1)!.seq });
    expect(seqs(events)).toEqual(from0(events));
    expect(toolCalls(fetch)).toBe(1);
    await client.close();
  });

  it('resumes task streams cut mid-follow: every event once, in order, the result, and one tools/call', async () => {
    const streams = (request: SeenRequest) => request.rpc === 'tasks/stream';
    const fetch = faultyFetch(streams, [300, 700, { at: 450, how: 'close' }, 900]);
    const client = await connect(fetch);
    const events: TaskStreamEvent[] = [];
    const { result, lastSeq } = await callToolAsTask(
      client,
      { name: 'chatter', arguments: { steps: 12, interval_ms: 5 } },
      { url: URL_, fetch, reconnect: FAST, onEvent: (event) => void events.push(event) },
    );
    expect(text(result)).toBe('chattered 12 steps');
    expect(seqs(events)).toEqual(Array.from({ length: 38 }, (_, seq) => seq));
    expect(lastSeq).toBe(37);
    const cut = fetch.log.filter((entry) => entry.cut !== undefined);
    expect(cut.map((entry) => entry.rpc)).toEqual(['tasks/stream', 'tasks/stream', 'tasks/stream', 'tasks/stream']);
    expect(rpcs(fetch).filter((rpc) => rpc === 'tasks/stream').length).toBeGreaterThanOrEqual(5);
    expect(toolCalls(fetch)).toBe(1);
    await client.close();
  });

  it.each<[string, Cut]>([
    ['dropped before its answer', { at: 0, how: 'drop' }],
    ['cut inside its answer', { at: 20, how: 'error' }],
    ['closed inside its answer', { at: 20, how: 'close' }],
  ])('rejects a tools/call %s with ToolCallLostError, and sends it once', async (_, cut) => {
    // What the server answered, read before the cut: the task it made, whose id the client never gets.
    const answers: string[] = [];
    const keep = {
      response: async (response: Response) => {
        answers.push(await response.clone().text());
        return response;
      },
    };
    const fetch = faultyFetch((request) => request.rpc === 'tools/call', [cut], keep);
    const client = await connect(fetch);
    client.onerror = () => undefined; // the SDK's transport reports the break there too
    const onTask = () => expect.fail('the answer never arrived');
    const error = await callToolAsTask(
      client,
      { name: 'slow_compute', arguments: { seconds: 0, label: 'lost' } },
      { url: URL_, fetch, reconnect: FAST, onTask },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolCallLostError);
    expect(error).toMatchObject({ toolName: 'slow_compute', cause: expect.anything() });
    // Nothing asks again, and nothing follows what has no id.
    expect(rpcs(fetch)).toEqual(['server/discover', 'tools/call']);
    const made = JSON.parse(answers[1]!) as { result: { resultType: string; taskId: string } };
    expect(made.result.resultType).toBe('task');
    expect((await getTask(made.result.taskId)).result).toMatchObject({ taskId: made.result.taskId });
    await client.close();
  });

  it('follows a task through its question: the status event asks, tasks/update answers, the follow goes on to the result', async () => {
    const fetch = faultyFetch();
    // A tool may ask only a client that declares what it asks with (an elicitation form).
    const client = await connect(fetch, { capabilities: { ...TASKS, elicitation: { form: {} } } });
    const asked: unknown[] = [];
    const { result } = await callToolAsTask(
      client,
      { name: 'chatter', arguments: { steps: 3, interval_ms: 0, ask: 1 } },
      {
        url: URL_,
        fetch,
        reconnect: FAST,
        onEvent: async (event) => {
          const known = readTaskEvent(event);
          if (known?.kind !== 'status' || known.status !== 'input_required') return;
          asked.push(...Object.keys(known.inputRequests ?? {}));
          const go_on = { action: 'accept', content: { confirm: true } };
          await taskMethod('tasks/update', event.taskId, { inputResponses: { go_on } });
        },
      },
    );
    expect(asked).toEqual(['go_on']);
    expect(text(result)).toBe('chattered 3 steps');
    expect(toolCalls(fetch)).toBe(1);
    await client.close();
  });

  it('passes a refusal through as the SDK gives it: nothing ran, nothing is lost', async () => {
    const fetch = faultyFetch();
    const client = await connect(fetch);
    const error = await callToolAsTask(client, { name: 'no_such_tool' }, { url: URL_, fetch }).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(ToolCallLostError);
    expect(error).toMatchObject({ code: expect.any(Number) });
    await client.close();
  });

  it('refuses options the follow would refuse before the call, so no task is made that cannot be followed', async () => {
    const fetch = faultyFetch();
    const client = await connect(fetch);
    const call = { name: 'slow_compute', arguments: { seconds: 0, label: 'x' } };
    await expect(callToolAsTask(client, call, { url: 'not a url', fetch })).rejects.toThrow(TypeError);
    await expect(callToolAsTask(client, call, { url: URL_, fetch, idleTimeoutMs: -1 })).rejects.toThrow(RangeError);
    expect(rpcs(fetch)).toEqual(['server/discover']);
    await client.close();
  });
});
