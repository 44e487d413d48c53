/**
 * With an 8 KB connection buffer (vitest.config.ts): a replay longer than the buffer fills the
 * object's first answer, and the object then waits for acknowledgements, which only the relay
 * socket carries. Its first answer says so (Mcp-Internal-Relay-Full), and the Worker opens the
 * socket at once instead of after the bridge (edge/sse-relay.ts); the client gets every event.
 * Observed at RelayEndpoint.answer, in the object's isolate.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { INTERNAL_HEADERS } from '../../src/core/wire.ts';
import { RelayEndpoint } from '../../src/session/relay-endpoint.ts';
import { modernRequest } from '../support/modern-http.ts';
import { message, SseReader } from '../support/sse-reader.ts';
import { createTask, TASK_CLIENT, waitForStatus } from '../support/task-http.ts';

const originalAnswer = RelayEndpoint.prototype.answer;
afterEach(() => {
  RelayEndpoint.prototype.answer = originalAnswer;
});

/** Records, for each first answer, whether it said the object waits for the socket. */
function recordFirstAnswers(): boolean[] {
  const full: boolean[] = [];
  RelayEndpoint.prototype.answer = async function (this: RelayEndpoint, connection, headers) {
    const response = await originalAnswer.call(this, connection, headers);
    full.push(response.headers.get(INTERNAL_HEADERS.relayFull) === '1');
    return response;
  };
  return full;
}

describe('a task stream replayed through an 8 KB buffer', () => {
  it.each([
    { name: 'longer than the buffer', payload_chars: 2_000, full: true },
    { name: 'within it', payload_chars: 0, full: false },
  ])('$name: its first answer says full = $full, and the client gets every event', async ({ payload_chars, full }) => {
    const taskId = await createTask('chatter', { steps: 6, interval_ms: 0, payload_chars });
    await waitForStatus(taskId, 'completed');
    const answers = recordFirstAnswers();
    const reader = new SseReader(await modernRequest('tasks/stream', { taskId }, TASK_CLIENT));
    try {
      const seqs = (await reader.all())
        .map(message)
        .filter((m) => m.method === 'notifications/tasks/event')
        .map((m) => (m.params as { seq: number }).seq);
      expect(seqs).toEqual(Array.from({ length: 20 }, (_, seq) => seq));
    } finally {
      await reader.cancel();
    }
    expect(answers).toEqual([full]);
  });
});
