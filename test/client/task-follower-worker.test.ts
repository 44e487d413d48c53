/**
 * followTask against the Worker itself (in workerd, with the task objects' storage): a task
 * followed to its end through a network that cuts streams wherever it likes, and through the
 * death of the task's instance — every event once, in order, then the task's final state.
 */
import { abortAllDurableObjects } from 'cloudflare:test';
import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { followTask, type TaskStreamEvent } from '../../src/client/index.ts';
import { URL_ } from '../support/mcp-http.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { createTask, waitForStatus } from '../support/task-http.ts';

const FAST = { initialDelayMs: 5, maxDelayMs: 20, factor: 1.5, maxAttempts: 20 };

/** The Worker, with SSE answers cut (the body errors) after a random number of bytes: the first `always`, then `rate` of them. */
function cuttingFetch(random: () => number, always: number, rate: number) {
  const cuts = { made: 0, streams: 0 };
  const fetch = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const response = await exports.default.fetch(new Request(input, init));
    if (!response.headers.get('Content-Type')?.startsWith('text/event-stream') || response.body === null) return response;
    cuts.streams++;
    if (cuts.streams > always && random() >= rate) return response;
    cuts.made++;
    let left = Math.floor(random() * 2_000);
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        if (value.length >= left) {
          controller.enqueue(value.slice(0, left));
          await reader.cancel();
          controller.error(new TypeError('network connection lost'));
          return;
        }
        left -= value.length;
        controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  return { fetch, cuts };
}

describe('followTask against the Worker', () => {
  it.each([1, 2, 3])(
    'follows a task through streams cut at random (seed %i): every event once, in order, then its result',
    async (seed) => {
      const taskId = await createTask('chatter', { steps: 15, interval_ms: 10 });
      const { fetch, cuts } = cuttingFetch(seededRandom(seed), 10, 0.3);
      const seen: TaskStreamEvent[] = [];
      const { task, lastSeq } = await followTask({ url: URL_, taskId, fetch, reconnect: FAST, onEvent: (event) => void seen.push(event) });
      expect(seen.map((event) => event.seq)).toEqual(Array.from({ length: 47 }, (_, seq) => seq));
      expect(lastSeq).toBe(46);
      expect(task.status).toBe('completed');
      expect(task.result).toEqual({ content: [{ type: 'text', text: 'chattered 15 steps' }] });
      expect(cuts.made).toBeGreaterThanOrEqual(10);
    },
  );

  it('follows a task whose instance dies to its interruption, after every stored event', async () => {
    const taskId = await createTask('chatter', { steps: 200, interval_ms: 20 });
    const seen: TaskStreamEvent[] = [];
    const { task } = await followTask({
      url: URL_,
      taskId,
      fetch: (input, init) => exports.default.fetch(new Request(input, init)),
      reconnect: FAST,
      onEvent: async (event) => {
        seen.push(event);
        if (event.seq === 12) await abortAllDurableObjects();
      },
    });
    expect(task).toMatchObject({ status: 'failed', error: { data: { reason: 'task_interrupted' } } });
    expect(seen.map((event) => event.seq)).toEqual(Array.from({ length: seen.length }, (_, seq) => seq));
    expect(seen.at(-1)!.payload).toMatchObject({ status: 'failed' });
    const steps = seen.filter((event) => event.type === 'com.example.step').map((event) => event.payload.step);
    expect(steps).toEqual(Array.from({ length: steps.length }, (_, i) => i + 1));
  });

  it('resumes from a kept cursor, and is refused, typed, a cursor past the last event', async () => {
    const taskId = await createTask('chatter', { steps: 2, interval_ms: 0 });
    await waitForStatus(taskId, 'completed');
    const fetch = (input: string | URL, init?: RequestInit) => exports.default.fetch(new Request(input, init));
    const seen: number[] = [];
    const { lastSeq } = await followTask({
      url: URL_,
      taskId,
      fetch,
      reconnect: FAST,
      after: 4,
      onEvent: (event) => void seen.push(event.seq),
    });
    expect(seen).toEqual([5, 6, 7]);
    expect(lastSeq).toBe(7);
    await expect(followTask({ url: URL_, taskId, fetch, reconnect: FAST, after: 9 })).rejects.toMatchObject({
      name: 'TaskRefusedError',
      code: -32602,
    });
  });
});
