/**
 * With an 8 KB connection buffer (vitest.config.ts): a replay longer than the buffer fills the
 * object's first answer, and the object then waits for acknowledgements, which only the relay
 * socket carries. Its first answer says so (Mcp-Internal-Relay-Now), and the Worker opens the
 * socket at once instead of after the bridge (edge/sse-relay.ts); the client gets every event.
 * A live task's stream within the buffer starts on the bridge, as a session's does, and moves
 * to the socket after it. Observed at RelayEndpoint.answer, in the object's isolate.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { INTERNAL_HEADERS } from '../../src/core/wire.ts';
import { RelayEndpoint } from '../../src/session/relay-endpoint.ts';
import { RelaySink } from '../../src/session/relay-sink.ts';
import { utf8Length } from '../../src/core/utf8.ts';
import { modernRequest } from '../support/modern-http.ts';
import { message, SseReader } from '../support/sse-reader.ts';
import { createTask, TASK_CLIENT, waitForStatus } from '../support/task-http.ts';

const originalAnswer = RelayEndpoint.prototype.answer;
const originalFirstAnswer = RelaySink.prototype.firstAnswer;
afterEach(() => {
  RelayEndpoint.prototype.answer = originalAnswer;
  RelaySink.prototype.firstAnswer = originalFirstAnswer;
});

/** Records, for each first answer, the UTF-8 bytes the connection had written into it, unacknowledged. */
function recordFirstAnswerBytes(): number[] {
  const bytes: number[] = [];
  RelaySink.prototype.firstAnswer = function (this: RelaySink, whole) {
    bytes.push(this.unacknowledged);
    return originalFirstAnswer.call(this, whole);
  };
  return bytes;
}

/** Records, for each first answer, whether it asked for the socket at once. */
function recordFirstAnswers(): boolean[] {
  const now: boolean[] = [];
  RelayEndpoint.prototype.answer = async function (this: RelayEndpoint, ...args) {
    const response = await originalAnswer.apply(this, args);
    now.push(response.headers.get(INTERNAL_HEADERS.relayNow) === '1');
    return response;
  };
  return now;
}

const seqsOf = (events: Awaited<ReturnType<SseReader['all']>>) =>
  events
    .map(message)
    .filter((m) => m.method === 'notifications/tasks/event')
    .map((m) => (m.params as { seq: number }).seq);

describe('a task stream through an 8 KB buffer', () => {
  it.each([
    { name: 'longer than the buffer', payload_chars: 2_000, full: true },
    { name: 'within it', payload_chars: 0, full: false },
  ])('$name: its first answer asks for the socket at once = $full, and the client gets every event', async ({ payload_chars, full }) => {
    const taskId = await createTask('chatter', { steps: 6, interval_ms: 0, payload_chars });
    await waitForStatus(taskId, 'completed');
    const answers = recordFirstAnswers();
    const reader = new SseReader(await modernRequest('tasks/stream', { taskId }, TASK_CLIENT));
    try {
      expect(seqsOf(await reader.all())).toEqual(Array.from({ length: 20 }, (_, seq) => seq));
    } finally {
      await reader.cancel();
    }
    expect(answers).toEqual([full]);
  });

  it('a live task within the buffer: its first answer rides the bridge, and the stream follows the task past it to its end', async () => {
    // Three steps 300 ms apart: working past the bridge, each event far within the buffer.
    const taskId = await createTask('chatter', { steps: 3, interval_ms: 300 });
    const answers = recordFirstAnswers();
    const reader = new SseReader(await modernRequest('tasks/stream', { taskId }, TASK_CLIENT));
    try {
      // seq 0 the creation, three events a step, the terminal status last.
      expect(seqsOf(await reader.all())).toEqual(Array.from({ length: 11 }, (_, seq) => seq));
    } finally {
      await reader.cancel();
    }
    expect(answers).toEqual([false]);
  });

  it('a live task that writes more than the buffer on the bridge and goes on past it: the client gets every event, in order', async () => {
    // Sixteen steps 20 ms apart, each with a 2,000-character event: ~17 KB within BRIDGE_MS
    // (200 ms), as much again on the socket.
    const taskId = await createTask('chatter', { steps: 16, interval_ms: 20, payload_chars: 2_000 });
    const reader = new SseReader(await modernRequest('tasks/stream', { taskId }, TASK_CLIENT));
    try {
      // seq 0 the creation, three events a step, the terminal status last.
      expect(seqsOf(await reader.all())).toEqual(Array.from({ length: 50 }, (_, seq) => seq));
    } finally {
      await reader.cancel();
    }
  });

  it('counts a replay in UTF-8 bytes of its frames: a first answer of non-ASCII events holds the buffer and at most one event more', async () => {
    // Each step's own event carries 1,000 × 字: 3,000 UTF-8 bytes in 1,000 UTF-16 units.
    const taskId = await createTask('chatter', { steps: 6, interval_ms: 0, payload_chars: 1_000, payload_char: '字' });
    await waitForStatus(taskId, 'completed');
    const written = recordFirstAnswerBytes();
    const reader = new SseReader(await modernRequest('tasks/stream', { taskId }, TASK_CLIENT));
    let frames: number[];
    try {
      const events = await reader.all();
      expect(seqsOf(events)).toEqual(Array.from({ length: 20 }, (_, seq) => seq));
      frames = events.map((event) => utf8Length(`data: ${event.data}\n\n`));
    } finally {
      await reader.cancel();
    }
    expect(written).toHaveLength(1);
    // Counted in UTF-16 units of the data, it took 19,396 bytes: 2.4 times the 8 KB buffer.
    expect(written[0]).toBeGreaterThan(8_192 - Math.max(...frames));
    expect(written[0]).toBeLessThanOrEqual(8_192 + Math.max(...frames));
  });
});
