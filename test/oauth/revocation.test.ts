/**
 * AUTH=oauth, end to end with the embedded authorization server: alice's grant is revoked —
 * by her client at the token endpoint (RFC 7009, her refresh token), or by the operator — and
 * what she holds ends (test/support/revocation-scenario.ts); bob's goes on. Her old token no
 * longer works; signed in again, she finds her session gone (404) and her task failed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PrincipalControl } from '../../src/principals/principal-control.ts';
import { fetchWorker, openSession } from '../support/mcp-http.ts';
import { modernRequest } from '../support/modern-http.ts';
import { admin } from '../support/principals.ts';
import { listening, rest, runRevocationScenario } from '../support/revocation-scenario.ts';
import { message, SseReader, TIMED_OUT } from '../support/sse-reader.ts';
import { createTask, getTask, TASK_CLIENT, TASKS } from '../support/task-http.ts';
import { freshAddress, send, signIn } from './oauth-flow.ts';

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const originalRevoke = PrincipalControl.prototype.revoke;
afterEach(() => {
  PrincipalControl.prototype.revoke = originalRevoke;
});
const user = (name: string) => `${name}-${crypto.randomUUID()}`;

/** Whether `token` still opens the endpoint (a 401 once its grant is revoked). */
const accepted = async (token: string) => {
  const headers = { Host: 'localhost', ...bearer(token), 'Mcp-Session-Id': 'x'.repeat(43) };
  return (await fetchWorker({ method: 'DELETE', headers })).status !== 401;
};

/** A POST of `form` to the token endpoint (revocation, refresh), from an address of its own. */
const tokenEndpoint = (form: Record<string, string>) =>
  send('/oauth/token', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
    address: freshAddress(),
  });

/** The scenario with alice and bob signed in, alice's grant revoked by `revoke`; her old token is refused after it. */
async function revokedBy(revoke: (alice: Awaited<ReturnType<typeof signIn>>, aliceName: string) => Promise<void>): Promise<void> {
  const aliceName = user('alice');
  const alice = await signIn(aliceName);
  const bob = await signIn(user('bob'));
  await runRevocationScenario({
    alice: bearer(alice.access_token),
    bob: bearer(bob.access_token),
    async revoke() {
      await revoke(alice, aliceName);
      expect(await accepted(alice.access_token)).toBe(false);
    },
    aliceAfter: async () => bearer((await signIn(aliceName)).access_token),
  });
  expect(await accepted(bob.access_token)).toBe(true);
}

describe('revoking an OAuth grant', () => {
  it('by the client, revoking its refresh token (RFC 7009), ends what the grant holds', () =>
    revokedBy(async (alice) => {
      const revoked = await tokenEndpoint({ token: alice.refresh_token, token_type_hint: 'refresh_token', client_id: alice.client_id });
      expect(revoked.status).toBe(200);
    }));

  it('by the operator, revoking the user at the authorization server as well', () =>
    revokedBy(async (_, aliceName) => {
      const response = await admin('POST', `oauth#${aliceName}`, '/revoke');
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ sessions: 1, tasks: 1, listens: 1, eventStreams: 0, webhooks: 0, grants: 1 });
    }));

  it('a revocation naming a grant that is not there, or with a wrong secret, ends nothing, whoever sends it', async () => {
    const alice = await signIn(user('alice'));
    const mallory = await signIn(user('mallory'));
    const [aliceUser, aliceGrant] = alice.access_token.split(':') as [string, string];
    const ended: string[] = [];
    PrincipalControl.prototype.revoke = function (this: PrincipalControl, principalId, grant) {
      ended.push(`${principalId} ${grant}`);
      return originalRevoke.call(this, principalId, grant);
    };
    const session = await openSession('2025-11-25', {}, bearer(alice.access_token));
    for (const token of [`${aliceUser}:made-up-grant:secret`, `${aliceUser}:${aliceGrant}:not-the-secret`]) {
      // The provider answers 200 to any revocation (RFC 7009 §2.2).
      expect((await tokenEndpoint({ token, client_id: mallory.client_id })).status).toBe(200);
    }
    expect(ended).toEqual([]);
    expect(await accepted(alice.access_token)).toBe(true);
    const listed = await session.post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, bearer(alice.access_token));
    expect(listed.status).toBe(200);
    await listed.body?.cancel();
  });

  it('revoking only an access token leaves the grant, and what it holds, as they were', async () => {
    const alice = await signIn(user('alice'));
    const session = await openSession('2025-11-25', {}, bearer(alice.access_token));
    const revoked = await tokenEndpoint({ token: alice.access_token, client_id: alice.client_id });
    expect(revoked.status).toBe(200);
    expect(await accepted(alice.access_token)).toBe(false);
    // The grant is whole: its refresh token gives a new access token, and the session is still hers.
    const refreshed = await tokenEndpoint({ grant_type: 'refresh_token', refresh_token: alice.refresh_token, client_id: alice.client_id });
    expect(refreshed.status).toBe(200);
    const { access_token } = (await refreshed.json()) as { access_token: string };
    const listed = await session.post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, bearer(access_token));
    expect(listed.status).toBe(200);
    await listed.body?.cancel();
  });
});

describe('revoking one of a user’s grants, while another of hers listens', () => {
  /** A listen stream of `token`'s, acknowledged. */
  async function listen(token: string, params: Record<string, unknown> = { notifications: { toolsListChanged: true } }, caps = {}) {
    const reader = new SseReader(await modernRequest('subscriptions/listen', params, caps, bearer(token)));
    const [ack] = await reader.take(1);
    expect(message(ack!).method).toBe('notifications/subscriptions/acknowledged');
    return reader;
  }

  /**
   * Alice signed in twice (two grants); each grant listens, and watches (a listen naming task
   * ids) the other grant's task. `revoke` revokes the first grant.
   */
  async function twoGrants(revoke: (first: Awaited<ReturnType<typeof signIn>>, name: string) => Promise<void>): Promise<void> {
    const name = user('alice');
    const first = await signIn(name);
    const second = await signIn(name);
    const firstTask = await createTask('slow_compute', { seconds: 60, label: 'first' }, bearer(first.access_token));
    const secondTask = await createTask('slow_compute', { seconds: 60, label: 'second' }, bearer(second.access_token));
    const watch = (token: string, task: string) => listen(token, { notifications: { taskIds: [task] } }, TASK_CLIENT);
    const revoked = [await listen(first.access_token), await watch(first.access_token, secondTask)];
    const kept = await listen(second.access_token);
    const watching = await watch(second.access_token, firstTask);
    const readers = [...revoked, kept, watching];
    try {
      // Each watch's current state, then every stream's bus socket open.
      for (const watcher of [revoked[1]!, watching])
        expect((await watcher.take(1)).map(message)[0]).toMatchObject({ method: 'notifications/tasks' });
      await listening(4);
      await revoke(first, name);
      // The revoked grant's listens, the one watching a task of the other grant too: each
      // ended with the error for its request, not a silent stop.
      for (const reader of revoked) expect((await rest(reader)).at(-1)).toMatchObject({ error: { data: { reason: 'grant_revoked' } } });
      // The other grant's: open; the one watching the revoked grant's task hears it fail, and
      // completes, unrevoked; its own task works on.
      expect(await kept.next(300)).toBe(TIMED_OUT);
      const told = (await rest(watching)) as { method?: string; params?: { status?: string }; error?: unknown }[];
      expect(told.filter((m) => m.error !== undefined)).toEqual([]);
      expect(told.find((m) => m.method === 'notifications/tasks')?.params?.status).toBe('failed');
      expect((await getTask(secondTask, bearer(second.access_token))).result.status).toBe('working');
      expect(await accepted(second.access_token)).toBe(true);
    } finally {
      await Promise.all(readers.map((reader) => reader.cancel()));
      await modernRequest('tasks/cancel', { taskId: secondTask }, TASKS, bearer(second.access_token));
    }
  }

  it('by its client (RFC 7009), ends that grant’s listen streams only', () =>
    twoGrants(async (first) => {
      const response = await tokenEndpoint({ token: first.refresh_token, token_type_hint: 'refresh_token', client_id: first.client_id });
      expect(response.status).toBe(200);
    }));

  it('by the operator (revoke?grant=), ends that grant’s listen streams only', () =>
    twoGrants(async (first, name) => {
      const grant = first.access_token.split(':')[1]!;
      const response = await admin('POST', `oauth#${name}`, `/revoke?grant=${encodeURIComponent(grant)}`);
      expect(response.status).toBe(200);
      // Its task, and its two listens (the plain one, the watch): none of the other grant's.
      expect(await response.json()).toEqual({ sessions: 0, tasks: 1, listens: 2, eventStreams: 0, webhooks: 0, grants: 1 });
    }));
});
