/**
 * A task event source (MCP Events; src/core/task-source.ts) belongs to its task's principal, as
 * the task does: "Servers MUST enforce the same authorization checks on event subscriptions as
 * on tasks/get". Another principal polling or streaming it — with its task id, with or without
 * the owner's initialCursor — is answered exactly as for a task that never existed, and reaches
 * no object that holds anything. In the auth project (AUTH=jwt): two principals by their tokens.
 */
import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { answerOf, modernRequest } from '../support/modern-http.ts';
import { TASK_CLIENT, taskObject, waitForStatus } from '../support/task-http.ts';
import { bearer, TEST_ISSUER } from '../support/tokens.ts';

const TYPE = 'mcp-edge-sessions.task';
const UNKNOWN_TASK = 'AAAAAAAAAAAAAAAAAAAAAA';
const BOTH = { ...TASK_CLIENT, extensions: { ...TASK_CLIENT.extensions, 'io.modelcontextprotocol/events': {} } };

const subscribe = async (
  method: 'events/poll' | 'events/stream',
  taskId: string,
  cursor: string | null,
  headers: Record<string, string>,
) => {
  const { id: _id, ...answer } = await answerOf(await modernRequest(method, { name: TYPE, arguments: { taskId }, cursor }, BOTH, headers));
  return answer;
};

describe("another principal's task event source", () => {
  it('is answered as an unknown task, by poll and by push, with or without the owner’s cursor', async () => {
    const alice = await bearer('alice');
    const mallory = await bearer('mallory');
    const created = await answerOf(
      await modernRequest('tools/call', { name: 'chatter', arguments: { steps: 1, interval_ms: 0 } }, BOTH, alice),
    );
    const { taskId, eventSource } = created.result as { taskId: string; eventSource: { initialCursor: string } };
    await waitForStatus(taskId, 'completed', 5000, alice);
    const unknown = await subscribe('events/poll', UNKNOWN_TASK, null, mallory);
    expect(unknown).toEqual({
      jsonrpc: '2.0',
      error: { code: -32023, message: expect.any(String), data: { kind: 'subscription', reason: 'unknown_task' } },
    });
    for (const method of ['events/poll', 'events/stream'] as const) {
      for (const cursor of [null, eventSource.initialCursor]) {
        expect(await subscribe(method, taskId, cursor, mallory)).toEqual(unknown);
      }
    }
    // Mallory's address for the task holds nothing: nothing was created by asking.
    const object = taskObject(taskId, `${TEST_ISSUER}#mallory`);
    const tables = await runInDurableObject(
      object,
      (_instance, state) =>
        state.storage.sql
          .exec<{ n: number }>(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'`)
          .one().n,
    );
    expect(tables).toBe(0);
    // Its owner reads it whole.
    const own = await subscribe('events/poll', taskId, eventSource.initialCursor, alice);
    expect(own.result.events.map((event: { data: { seq: number } }) => event.data.seq)).toEqual([0, 1, 2, 3, 4]);
  });
});
