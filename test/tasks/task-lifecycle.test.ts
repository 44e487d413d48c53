/**
 * The Tasks extension end to end through the Worker, in workerd with real storage: creation
 * for declaring clients only, polling, results and errors inlined, MRTR inside a task with
 * partial answers, cooperative cancellation, and the refusals the extension prescribes.
 */
import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { answerOf, modernRequest } from '../support/modern-http.ts';
import { callTool, openSession } from '../support/mcp-http.ts';
import { SseReader, message } from '../support/sse-reader.ts';
import {
  callDeclared,
  createTask,
  getTask,
  taskMethod,
  taskObject,
  TASKS,
  waitForStatus,
  waitForStatusMessage,
} from '../support/task-http.ts';

/** A declared `tools/call` of `tool` that carries the answer to its MRTR question for a name. */
const callWithName = async (tool: string, name: string) =>
  answerOf(
    await modernRequest(
      'tools/call',
      { name: tool, arguments: {}, inputResponses: { user_name: { action: 'accept', content: { name } } } },
      { ...TASKS, elicitation: { form: {} } },
    ),
  );

describe('creating a task', () => {
  it('answers a declaring client with a task that tasks/get reads at once', async () => {
    const answer = await callDeclared('slow_compute', { seconds: 1, label: 'now' });
    expect(answer.result).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 3_600_000, pollIntervalMs: 1000 });
    expect(answer.result.taskId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(Date.parse(answer.result.createdAt)).not.toBeNaN();
    const read = await getTask(answer.result.taskId);
    expect(read.result).toMatchObject({ resultType: 'complete', taskId: answer.result.taskId, status: 'working' });
  });

  it('runs the same tool inline for a client that did not declare the extension', async () => {
    const answer = await answerOf(await modernRequest('tools/call', { name: 'slow_compute', arguments: { seconds: 0, label: 'inline' } }));
    expect(answer.result.resultType).toBe('complete');
    expect(answer.result.content[0].text).toBe('Computed inline in 0 s');
  });

  it('refuses a tool that runs only as a task with -32021 naming the extension, when it is not declared', async () => {
    const response = await modernRequest('tools/call', { name: 'failing_job', arguments: {} });
    expect(response.status).toBe(400);
    const answer = await answerOf(response);
    expect(answer.error.code).toBe(-32021);
    expect(answer.error.data).toEqual({ requiredCapabilities: TASKS });
  });

  it.each([
    { name: 'ASCII', label: 'x'.repeat(1_100_000) },
    // 400,000 characters, 1,200,000 bytes: under the bound counted in characters, over it in bytes.
    { name: 'non-ASCII', label: '字'.repeat(400_000) },
  ])(
    'does not make a task of a call too large to store with it (over 1,048,576 bytes of JSON, $name): isError, nothing created',
    async ({ label }) => {
      const answer = await callDeclared('slow_compute', { seconds: 0, label });
      expect(answer.result).toMatchObject({ resultType: 'complete', isError: true });
      expect(answer.result.content).toEqual([{ type: 'text', text: 'The call is too large to run as a task' }]);
      expect(answer.result.taskId).toBeUndefined();
    },
  );

  it('never makes a task of a tool that does not ask for one', async () => {
    const answer = await callDeclared('greet', { name: 'Ada' });
    expect(answer.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'Hello, Ada!' }] });
  });

  it('is runTask inline in a session: progress on the stream, result on the call', async () => {
    const session = await openSession();
    const call = await session.post(callTool(7, 'slow_compute', { seconds: 1, label: 'session' }, { progressToken: 'p' }));
    const reader = new SseReader(call);
    try {
      const events = (await reader.all(5000)).filter((event) => event.data !== '').map(message);
      expect(events.map((event) => event.method ?? 'result')).toEqual(['notifications/progress', 'result']);
      expect((events[1] as { result: { content: { text: string }[] } }).result.content[0]!.text).toBe('Computed session in 1 s');
    } finally {
      await reader.cancel();
    }
  });
});

describe('a running task', () => {
  it('completes with its result inlined, and its progress was its status message', async () => {
    const taskId = await createTask('slow_compute', { seconds: 2, label: 'two' });
    await expect.poll(async () => (await getTask(taskId)).result.statusMessage, { timeout: 5000, interval: 50 }).toBe('1 of 2 seconds');
    const done = await waitForStatus(taskId, 'completed');
    expect(done.result).toEqual({ content: [{ type: 'text', text: 'Computed two in 2 s' }] });
    expect(done).not.toHaveProperty('error');
  });

  it('ends completed with isError for a tool error, and failed with the error for a JSON-RPC error', async () => {
    const toolError = await waitForStatus(await createTask('failing_job', {}), 'completed');
    expect(toolError.result.isError).toBe(true);
    const protocolError = await waitForStatus(await createTask('protocol_error_job', {}), 'failed');
    expect(protocolError.error).toEqual({ code: -32603, message: 'The job hit an internal error' });
    expect(protocolError).not.toHaveProperty('result');
  });

  it('is cancelled at once; the tool is told through its signal, and a second cancel is the same ack', async () => {
    const seen = async () => Number((await callDeclared('aborts_seen', {})).result.content[0].text);
    const before = await seen();
    const taskId = await createTask('slow_compute', { seconds: 60, label: 'cancelled' });
    await waitForStatusMessage(taskId);
    const ack = await answerOf(await taskMethod('tasks/cancel', taskId));
    expect(ack.result).toEqual({ resultType: 'complete', _meta: expect.any(Object) });
    expect((await getTask(taskId)).result.status).toBe('cancelled');
    await expect.poll(seen, { timeout: 5000 }).toBe(before + 1);
    await expect.poll(() => runInDurableObject(taskObject(taskId), (instance) => instance.running), { timeout: 5000 }).toBe(false);
    expect((await answerOf(await taskMethod('tasks/cancel', taskId))).result).toEqual(ack.result);
    expect((await getTask(taskId)).result.status).toBe('cancelled');
  });

  it('is served while a tool that never awaits I/O is busy sending notifications, and ends its timeline there', async () => {
    // 100,000 steps of chatter with no pause between them: 300,000 notifications in a loop that
    // awaits nothing but its own notify. The object takes the cancel at one of the round's
    // pauses (notification-tap.ts); without them, the loop would run to its end first and the
    // task would complete, its cancel coming too late.
    const steps = 100_000;
    const taskId = await createTask('chatter', { steps, interval_ms: 0 });
    // tasks/get is served mid-loop too: it reads the line the tool last reported.
    const line = await waitForStatusMessage(taskId);
    expect(Number(/^(?:log|step) (\d+)/.exec(line)?.[1])).toBeLessThan(steps);
    await answerOf(await taskMethod('tasks/cancel', taskId));
    expect((await getTask(taskId)).result.status).toBe('cancelled');
    const finalSeq = await runInDurableObject(taskObject(taskId), (_instance, state) =>
      JSON.parse(String(state.storage.sql.exec(`SELECT final_seq FROM task`).one().final_seq)),
    );
    expect(finalSeq).toBeGreaterThan(1);
    expect(finalSeq).toBeLessThan(3 * steps + 1);
    await expect.poll(() => runInDurableObject(taskObject(taskId), (instance) => instance.running), { timeout: 10_000 }).toBe(false);
    expect((await getTask(taskId)).result.status).toBe('cancelled');
  });
});

describe('a task that asks for input', () => {
  it('shows the open questions, keeps partial answers, and runs the next round once all are in', async () => {
    const taskId = await createTask('multi_input', {});
    const asked = await waitForStatus(taskId, 'input_required');
    expect(Object.keys(asked.inputRequests).sort()).toEqual(['first', 'second']);
    expect(asked).not.toHaveProperty('requestState');

    const ignored = await answerOf(
      await taskMethod('tasks/update', taskId, { inputResponses: { unknown: { action: 'accept', content: {} } } }),
    );
    expect(ignored.result.resultType).toBe('complete');
    const accept = (name: string) => ({ action: 'accept', content: { name } });
    await answerOf(await taskMethod('tasks/update', taskId, { inputResponses: { first: accept('Ada') } }));
    const partial = (await getTask(taskId)).result;
    expect(partial.status).toBe('input_required');
    expect(Object.keys(partial.inputRequests)).toEqual(['second']);

    await answerOf(await taskMethod('tasks/update', taskId, { inputResponses: { second: accept('Grace'), first: accept('ignored') } }));
    const done = await waitForStatus(taskId, 'completed');
    expect(done.result.content[0].text).toBe('Got Ada and Grace');
  });

  it('keeps partial answers within 524,288 bytes of JSON as stored (they share the task row with its call): over it, -32602 and nothing kept', async () => {
    const taskId = await createTask('multi_input', {});
    await waitForStatus(taskId, 'input_required');
    const accept = (name: string) => ({ action: 'accept', content: { name } });
    // 180,000 characters, 540,000 bytes: under the bound counted in characters, over it in bytes.
    const large = '字'.repeat(180_000);
    const refused = await answerOf(await taskMethod('tasks/update', taskId, { inputResponses: { first: accept(large) } }));
    expect(refused.error).toMatchObject({ code: -32602 });
    expect(refused.error.message).toMatch(/^The answers kept with the task would take 540,\d{3} bytes of JSON, at most 524,288: /);
    expect(Object.keys((await getTask(taskId)).result.inputRequests).sort()).toEqual(['first', 'second']);
    // Answers that complete the task are not kept (the next round has them): not bounded here.
    await answerOf(await taskMethod('tasks/update', taskId, { inputResponses: { first: accept(large), second: accept('Grace') } }));
    const done = await waitForStatus(taskId, 'completed');
    expect(done.result.content[0].text).toBe(`Got ${large} and Grace`);
  });

  it('asks before becoming a task when the tool asks first (MRTR), and the task gets the answer', async () => {
    const asked = await callDeclared('test_tool_with_task', {});
    expect(asked.result.resultType).toBe('input_required');
    const answered = await callWithName('test_tool_with_task', 'Alice');
    expect(answered.result).toMatchObject({ resultType: 'task', status: 'working' });
    expect((await waitForStatus(answered.result.taskId, 'completed')).result.content[0].text).toBe('Hello, Alice!');
  });

  it('asks before the task and inside it: the round after tasks/update still has the answer given before the task', async () => {
    const answered = await callWithName('greet_then_confirm', 'Alice');
    expect(answered.result).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = answered.result.taskId;
    const waiting = await waitForStatus(taskId, 'input_required');
    expect(Object.keys(waiting.inputRequests)).toEqual(['go_ahead']);
    await answerOf(
      await taskMethod('tasks/update', taskId, { inputResponses: { go_ahead: { action: 'accept', content: { confirm: true } } } }),
    );
    const done = await waitForStatus(taskId, 'completed');
    expect(done.result.content[0].text).toBe('Hello, Alice!');
  });
});

describe('the task methods', () => {
  it('refuse a client that did not declare the extension with -32021, whether or not the task exists', async () => {
    const taskId = await createTask('slow_compute', { seconds: 0, label: 'exists' });
    for (const id of [taskId, 'AAAAAAAAAAAAAAAAAAAAAA']) {
      for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel'] as const) {
        const response = await taskMethod(method, id, {}, {}, {});
        expect(response.status).toBe(400);
        expect((await answerOf(response)).error).toMatchObject({ code: -32021, data: { requiredCapabilities: TASKS } });
      }
    }
  });

  it('answer an unknown or malformed task id with -32602', async () => {
    for (const taskId of ['AAAAAAAAAAAAAAAAAAAAAA', 'not-a-task-id']) {
      const answer = await getTask(taskId);
      expect(answer.error).toEqual({ code: -32602, message: 'Failed to retrieve task: Task not found' });
    }
  });

  it('answer tasks/result and tasks/list with -32601: the extension removed them', async () => {
    for (const method of ['tasks/result', 'tasks/list']) {
      const response = await modernRequest(method, { taskId: 'AAAAAAAAAAAAAAAAAAAAAA' }, TASKS);
      expect(response.status).toBe(404);
      expect((await answerOf(response)).error.code).toBe(-32601);
    }
  });
});
