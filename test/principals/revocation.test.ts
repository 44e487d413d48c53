/**
 * AUTH=jwt: the operator revokes a principal (`POST /admin/principals/{id}/revoke`). The
 * issuer stops issuing its tokens; what it holds ends now (test/support/revocation-scenario.ts).
 * And the operator's other routes: listing, ending one session, ending one task, refusing
 * anyone without the token.
 */
import { describe, expect, it } from 'vitest';
import { errorOf, openSession } from '../support/mcp-http.ts';
import { admin, holdings, newPrincipal } from '../support/principals.ts';
import { runRevocationScenario } from '../support/revocation-scenario.ts';
import { modernRequest } from '../support/modern-http.ts';
import { message, SseReader, TIMED_OUT } from '../support/sse-reader.ts';
import { createTask, getTask, TASK_CLIENT, waitForStatus } from '../support/task-http.ts';

describe('revoking a principal (AUTH=jwt, the operator)', () => {
  it('ends her sessions, calls, tasks and listen streams; bob is unaffected', async () => {
    const alice = await newPrincipal('alice');
    const bob = await newPrincipal('bob');
    await runRevocationScenario({
      alice: alice.auth,
      bob: bob.auth,
      async revoke() {
        const response = await admin('POST', alice.id, '/revoke');
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ sessions: 1, tasks: 1, listens: 1, eventStreams: 0, webhooks: 0, grants: 0 });
      },
      aliceAfter: async () => alice.auth,
    });
    expect(await holdings(alice.id)).toMatchObject({ sessions: [] });
  });
});

describe('a listen naming tasks, when a grant its principal holds nothing under is revoked', () => {
  // AUTH=jwt: a principal's tokens have no grant (''), so its listens carry its own tag alone,
  // and revoking a grant it never had ends none of them (one grant's revocation ends that
  // grant's listens only: test/oauth/revocation.test.ts, where a listen watching a task of
  // another grant's ends with grant_revoked while the task goes on).
  it('ends nothing: the listen stays open, the tasks it watches go on', async () => {
    const alice = await newPrincipal('alice');
    const asking = await createTask('confirm_delete', { filename: 'kept.txt' }, alice.auth);
    await waitForStatus(asking, 'input_required', 10_000, alice.auth);
    const reader = new SseReader(
      await modernRequest('subscriptions/listen', { notifications: { taskIds: [asking] } }, TASK_CLIENT, alice.auth),
    );
    try {
      const [ack, now] = (await reader.take(2)).map(message) as { method: string; params: Record<string, any> }[];
      expect(ack!.params.notifications.taskIds).toEqual([asking]);
      expect(now!.params.status).toBe('input_required');
      const response = await admin('POST', alice.id, '/revoke?grant=another');
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ sessions: 0, tasks: 0, listens: 0, eventStreams: 0, webhooks: 0, grants: 0 });
      expect(await reader.next(300)).toBe(TIMED_OUT);
    } finally {
      await reader.cancel();
    }
    expect((await getTask(asking, alice.auth)).result.status).toBe('input_required');
  });
});

describe('a revocation naming an empty grant', () => {
  // Under grant '' sit the holdings of tokens without a grant (all of a JWT principal's), and a
  // grant's revocation writes no revoked_before mark: `?grant=` would end them all and leave
  // her old tokens free to open more.
  it('is refused 400 and ends nothing', async () => {
    const alice = await newPrincipal('alice');
    const session = await openSession('2025-11-25', {}, alice.auth);
    const response = await admin('POST', alice.id, '/revoke?grant=');
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain('names no grant');
    expect((await holdings(alice.id)).sessions).toHaveLength(1);
    expect(session.id).toBeTypeOf('string');
  });
});

describe("the operator's routes", () => {
  it('list, end one session (then 404) and end one task (then failed)', async () => {
    const alice = await newPrincipal('alice');
    const session = await openSession('2025-11-25', {}, alice.auth);
    const taskId = await createTask('slow_compute', { seconds: 60, label: 'op' }, alice.auth);
    const listed = await holdings(alice.id);
    expect(listed.sessions.map((s) => s.id)).toEqual([session.id]);
    expect(listed.tasks.map((t) => t.id)).toEqual([taskId]);
    expect(Date.parse(listed.tasks[0]!.expiresAt)).toBeGreaterThan(Date.now());

    expect((await admin('DELETE', alice.id, `/sessions/${session.id}`)).status).toBe(204);
    expect((await errorOf(await session.post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))).status).toBe(404);
    expect((await admin('DELETE', alice.id, `/sessions/${session.id}`)).status).toBe(404);
    expect((await holdings(alice.id)).sessions).toEqual([]);

    expect((await admin('DELETE', alice.id, `/tasks/${taskId}`)).status).toBe(204);
    expect((await getTask(taskId, alice.auth)).result).toMatchObject({ status: 'failed', error: { data: { reason: 'grant_revoked' } } });
  });

  it('another principal’s ids are not found through one principal', async () => {
    const alice = await newPrincipal('alice');
    const bob = await newPrincipal('bob');
    const bobs = await openSession('2025-11-25', {}, bob.auth);
    expect((await admin('DELETE', alice.id, `/sessions/${bobs.id}`)).status).toBe(404);
    expect((await bobs.post({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(200);
  });

  it('refuse a wrong or missing token with 401', async () => {
    const alice = await newPrincipal('alice');
    expect((await admin('GET', alice.id, '', 'wrong')).status).toBe(401);
    expect((await admin('POST', alice.id, '/revoke', '')).status).toBe(401);
  });
});
