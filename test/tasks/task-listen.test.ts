/**
 * notifications/tasks on a subscriptions/listen stream that names task ids: the task as it is
 * when the watch begins, then each change, then the listen's result once it has ended. Only
 * for the principal's own tasks, and only for a client that declared the extension.
 */
import { describe, expect, it } from 'vitest';
import { answerOf, modernRequest } from '../support/modern-http.ts';
import { SseReader, message } from '../support/sse-reader.ts';
import { as, createTask, TASK_CLIENT, taskMethod } from '../support/task-http.ts';

const listen = (taskIds: unknown, headers: Record<string, string> = {}, capabilities: Record<string, unknown> = TASK_CLIENT) =>
  modernRequest('subscriptions/listen', { notifications: { taskIds } }, capabilities, headers);

describe('a listen stream naming tasks', () => {
  it('hears each task now and at every change, tagged with its subscription, and ends when they have', async () => {
    const taskId = await createTask('confirm_delete', { filename: 'watched.txt' });
    const response = await listen([taskId]);
    expect(response.headers.get('Content-Type')).toContain('text/event-stream');
    const reader = new SseReader(response);
    try {
      const [ack] = (await reader.take(1)).map(message);
      expect(ack).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { notifications: { taskIds: [taskId] } } });
      const subscription = (ack!.params as { _meta: Record<string, unknown> })._meta['io.modelcontextprotocol/subscriptionId'];

      const statuses: string[] = [];
      for (;;) {
        const [note] = (await reader.take(1)).map(message) as { method: string; params: Record<string, any> }[];
        expect(note!.method).toBe('notifications/tasks');
        expect(note!.params).toMatchObject({ taskId, _meta: { 'io.modelcontextprotocol/subscriptionId': subscription } });
        if (statuses.at(-1) !== note!.params.status) statuses.push(note!.params.status);
        if (note!.params.status === 'input_required') {
          expect(Object.keys(note!.params.inputRequests)).toEqual(['confirm_delete']);
          await answerOf(
            await taskMethod('tasks/update', taskId, {
              inputResponses: { confirm_delete: { action: 'accept', content: { confirm: true } } },
            }),
          );
        }
        if (note!.params.status === 'completed') {
          expect(note!.params.result.content[0].text).toBe('Deleted watched.txt');
          break;
        }
      }
      expect(statuses).toEqual(['working', 'input_required', 'working', 'completed'].slice(statuses[0] === 'working' ? 0 : 1));
      const rest = (await reader.all(5000)).map(message);
      expect(rest).toEqual([{ jsonrpc: '2.0', id: expect.anything(), result: { resultType: 'complete', _meta: expect.any(Object) } }]);
    } finally {
      await reader.cancel();
    }
  });

  it("acknowledges none of another principal's tasks, as none of the unknown ones, and ends at once", async () => {
    const mine = await createTask('slow_compute', { seconds: 5, label: 'private' }, as('alice'));
    const reader = new SseReader(await listen([mine, 'AAAAAAAAAAAAAAAAAAAAAA', 'gate-test'], as('mallory')));
    try {
      const events = (await reader.all(5000)).map(message);
      expect(events[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { notifications: { taskIds: [] } } });
      expect(events.slice(1).map((event) => Object.keys(event).includes('result'))).toEqual([true]);
    } finally {
      await reader.cancel();
      await taskMethod('tasks/cancel', mine, {}, as('alice'));
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
