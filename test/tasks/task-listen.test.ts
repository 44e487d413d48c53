/**
 * notifications/tasks on a subscriptions/listen stream that names task ids: each task as it is
 * when the watch begins, then each change (and nothing that changed nothing), then the listen's
 * result once all have ended. A task whose instance dies is told as `task_interrupted`. Only
 * the principal's own tasks, and only for a client that declared the extension.
 */
import { abortAllDurableObjects } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { MAX_TASK_WATCHES } from '../../src/tasks/task-watches.ts';
import { answerOf, modernRequest } from '../support/modern-http.ts';
import { SseReader, message } from '../support/sse-reader.ts';
import { createTask, TASK_CLIENT, taskMethod, waitForStatus, waitForStatusMessage } from '../support/task-http.ts';

const listen = (taskIds: unknown, headers: Record<string, string> = {}, capabilities: Record<string, unknown> = TASK_CLIENT) =>
  modernRequest('subscriptions/listen', { notifications: { taskIds } }, capabilities, headers);

type Note = { method: string; params: Record<string, any> };

describe('a listen stream naming tasks', () => {
  it('hears each task now and at every change, nothing more, tagged with its subscription, and ends when all have', async () => {
    const asking = await createTask('confirm_delete', { filename: 'watched.txt' });
    await waitForStatus(asking, 'input_required');
    const finished = await createTask('slow_compute', { seconds: 0, label: 'done already' });
    await waitForStatus(finished, 'completed');
    const reader = new SseReader(await listen([asking, finished]));
    try {
      const [ack] = (await reader.take(1)).map(message) as Note[];
      expect(ack!.method).toBe('notifications/subscriptions/acknowledged');
      expect([...ack!.params.notifications.taskIds].sort()).toEqual([asking, finished].sort());
      const subscription = ack!.params._meta['io.modelcontextprotocol/subscriptionId'];

      const first = (await reader.take(2)).map(message) as Note[];
      const now = Object.fromEntries(first.map((note) => [note.params.taskId, note.params.status]));
      expect(now).toEqual({ [asking]: 'input_required', [finished]: 'completed' });
      for (const note of first) {
        expect(note.method).toBe('notifications/tasks');
        expect(note.params._meta['io.modelcontextprotocol/subscriptionId']).toBe(subscription);
      }

      // Answers that change nothing are not news.
      await answerOf(await taskMethod('tasks/update', asking, { inputResponses: { unknown: { action: 'accept', content: {} } } }));
      await answerOf(
        await taskMethod('tasks/update', asking, { inputResponses: { confirm_delete: { action: 'accept', content: { confirm: true } } } }),
      );
      const rest = (await reader.all(5000)).map(message) as (Note & { result?: unknown })[];
      const statuses = rest.filter((note) => note.method === 'notifications/tasks').map((note) => note.params.status);
      expect(statuses).toEqual(['working', 'completed']);
      expect(rest.at(-2)!.params.result.content[0].text).toBe('Deleted watched.txt');
      expect(rest.at(-1)).toEqual({ jsonrpc: '2.0', id: expect.anything(), result: { resultType: 'complete', _meta: expect.any(Object) } });
    } finally {
      await reader.cancel();
    }
  });

  it('a task is watched by at most MAX_TASK_WATCHES listens at once: the next one’s acknowledgement leaves it out', async () => {
    const asking = await createTask('confirm_delete', { filename: 'popular.txt' });
    await waitForStatus(asking, 'input_required');
    const honoured = async (reader: SseReader) => ((await reader.take(1)).map(message)[0] as Note).params.notifications.taskIds;
    const readers: SseReader[] = [];
    try {
      for (let i = 0; i < MAX_TASK_WATCHES; i++) {
        const reader = new SseReader(await listen([asking]));
        readers.push(reader);
        expect(await honoured(reader)).toEqual([asking]);
      }
      // From another client address: the first holds its share of the isolate's listens (32, as
      // many as the watches; edge/stream-shares.ts). Under AUTH=none the task is everyone's.
      const refused = new SseReader(await listen([asking], { 'CF-Connecting-IP': '198.51.100.9' }));
      readers.push(refused);
      expect(await honoured(refused)).toEqual([]);
    } finally {
      await Promise.all(readers.map((reader) => reader.cancel()));
    }
  });

  it('tells a task interrupted when its instance dies, by watching it again', async () => {
    const taskId = await createTask('slow_compute', { seconds: 30, label: 'doomed' });
    await waitForStatusMessage(taskId);
    const reader = new SseReader(await listen([taskId]));
    try {
      await reader.take(2); // the acknowledgement, the task working
      await abortAllDurableObjects();
      const notes = ((await reader.all(5000)).map(message) as Note[]).filter((note) => note.method === 'notifications/tasks');
      expect(notes.at(-1)!.params).toMatchObject({ status: 'failed', error: { data: { reason: 'task_interrupted' } } });
    } finally {
      await reader.cancel();
    }
  });

  it('a waiting task outlives more instance deaths than one run of re-watches: each new instance told it, so the count starts again', async () => {
    // Four deploys while a person takes their time: the listen must not end as if the task had.
    const taskId = await createTask('confirm_delete', { filename: 'patient.txt' });
    await waitForStatus(taskId, 'input_required');
    const reader = new SseReader(await listen([taskId]));
    try {
      await reader.take(2); // the acknowledgement, the task waiting
      for (let death = 1; death <= 4; death++) {
        await abortAllDurableObjects();
        const [told] = (await reader.take(1, 5_000)).map(message) as Note[];
        expect(told, `told again after death ${death}`).toMatchObject({
          method: 'notifications/tasks',
          params: { status: 'input_required' },
        });
      }
      await answerOf(
        await taskMethod('tasks/update', taskId, { inputResponses: { confirm_delete: { action: 'accept', content: { confirm: true } } } }),
      );
      const rest = (await reader.all(5000)).map(message) as (Note & { result?: unknown })[];
      expect(rest.filter((note) => note.method === 'notifications/tasks').map((note) => note.params.status)).toEqual([
        'working',
        'completed',
      ]);
      expect(rest.at(-1)).toMatchObject({ result: { resultType: 'complete' } });
    } finally {
      await reader.cancel();
    }
  });

  it('is refused with -32021 without the extension declared', async () => {
    const response = await listen(['AAAAAAAAAAAAAAAAAAAAAA'], {}, {});
    expect(response.status).toBe(400);
    expect((await answerOf(response)).error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
    });
  });
});
