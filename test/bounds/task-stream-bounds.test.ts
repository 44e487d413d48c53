/**
 * A task's timeline past TASK_MAX_EVENTS (8 in this project): the oldest events go, the stream
 * starts later, and a cursor before what is retained is answered events_gone with the earliest
 * seq still retained — "Receivers MUST NOT silently skip retained events after the requested cursor".
 */
import { describe, expect, it } from 'vitest';
import { answerOf, modernRequest } from '../support/modern-http.ts';
import { message, SseReader } from '../support/sse-reader.ts';
import { createTask, TASK_CLIENT, waitForStatus } from '../support/task-http.ts';

const stream = (taskId: string, extra: Record<string, unknown> = {}) => modernRequest('tasks/stream', { taskId, ...extra }, TASK_CLIENT);

async function streamedSeqs(response: Response): Promise<number[]> {
  const reader = new SseReader(response);
  try {
    const messages = (await reader.all()).map(message) as { method?: string; params?: { seq: number }; result?: unknown }[];
    expect(messages.at(-1)?.result).toEqual({ resultType: 'complete' });
    return messages.filter((m) => m.method === 'notifications/tasks/event').map((m) => m.params!.seq);
  } finally {
    await reader.cancel();
  }
}

describe('a timeline past TASK_MAX_EVENTS', () => {
  // chatter 5: 15 events between its creation (seq 0) and its end (seq 16); the 8 newest are kept.
  const pruned = async () => {
    const taskId = await createTask('chatter', { steps: 5, interval_ms: 0 });
    await waitForStatus(taskId, 'completed');
    return taskId;
  };

  it('starts at the earliest retained event when after is omitted', async () => {
    const taskId = await pruned();
    expect(await streamedSeqs(await stream(taskId))).toEqual([8, 9, 10, 11, 12, 13, 14, 15, 16]);
  });

  it.each([0, 3, 6])('answers after %i with events_gone and the earliest retained seq', async (after) => {
    const taskId = await pruned();
    const response = await stream(taskId, { after });
    // "Once a receiver drops an event needed to resume a stream, it MUST return events_gone."
    expect(await answerOf(response)).toEqual({
      jsonrpc: '2.0',
      id: expect.any(Number),
      error: { code: -32010, message: 'Task events are no longer available', data: { reason: 'events_gone', taskId, earliestSeq: 8 } },
    });
  });

  it('resumes from the earliest retained event with after = earliestSeq - 1, as the SEP tells clients to', async () => {
    const taskId = await pruned();
    expect(await streamedSeqs(await stream(taskId, { after: 7 }))).toEqual([8, 9, 10, 11, 12, 13, 14, 15, 16]);
  });

  it('still ends at once after its terminal event', async () => {
    const taskId = await pruned();
    expect((await answerOf(await stream(taskId, { after: 16 }))).result).toMatchObject({ resultType: 'complete' });
  });
});
