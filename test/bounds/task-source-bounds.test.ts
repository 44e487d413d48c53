/**
 * A task event source (MCP Events; src/core/task-source.ts) over a timeline past TASK_MAX_EVENTS
 * (8 in this project): its initialCursor is behind what is retained, so a poll or a stream from
 * it starts at the earliest retained event with `truncated: true` and a fresh cursor — "never a
 * silent skip", the same events `tasks/stream` serves (task-stream-bounds.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { answerOf, modernRequest } from '../support/modern-http.ts';
import { message, SseReader } from '../support/sse-reader.ts';
import { TASK_CLIENT, waitForStatus } from '../support/task-http.ts';

const TYPE = 'mcp-edge-sessions.task';
const BOTH = { ...TASK_CLIENT, extensions: { ...TASK_CLIENT.extensions, 'io.modelcontextprotocol/events': {} } };

describe('a task event source past TASK_MAX_EVENTS', () => {
  it('answers its initialCursor truncated, from the earliest retained event, by poll and by push', async () => {
    // chatter 5: seq 0 to 16; the 8 newest stored events are kept, so the timeline starts at 8.
    const created = await answerOf(await modernRequest('tools/call', { name: 'chatter', arguments: { steps: 5, interval_ms: 0 } }, BOTH));
    const { taskId, eventSource } = created.result as { taskId: string; eventSource: { initialCursor: string } };
    await waitForStatus(taskId, 'completed');
    const args = { name: TYPE, arguments: { taskId }, cursor: eventSource.initialCursor };
    const { result } = await answerOf(await modernRequest('events/poll', args, BOTH));
    // "If the floor advances past the cursor" / retention: truncated on the first response, with the fresh cursor.
    expect(result).toMatchObject({ truncated: true, hasMore: false, cursor: expect.any(String) });
    expect(result.events.map((event: { data: { seq: number } }) => event.data.seq)).toEqual([8, 9, 10, 11, 12, 13, 14, 15, 16]);
    const reader = new SseReader(await modernRequest('events/stream', args, BOTH));
    try {
      const messages = (await reader.all(10_000)).map(message) as { method?: string; params?: any }[];
      expect(messages[0]).toMatchObject({ method: 'notifications/events/active', params: { truncated: true } });
      const seqs = messages.filter((m) => m.method === 'notifications/events/event').map((m) => m.params.data.seq);
      expect(seqs).toEqual([8, 9, 10, 11, 12, 13, 14, 15, 16]);
      expect(messages.at(-2)).toMatchObject({ method: 'notifications/events/terminated', params: { error: { code: -32023 } } });
    } finally {
      await reader.cancel();
    }
  });
});
