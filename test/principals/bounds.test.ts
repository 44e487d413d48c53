/**
 * MAX_SESSIONS_PER_PRINCIPAL = 3 and MAX_TASKS_PER_PRINCIPAL = 2 (the `principals` project):
 * the next creation is refused with its typed error, another principal is not, and concurrent
 * creations never exceed the limit.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { OBJECT_ROUTES } from '../../src/core/wire.ts';
import { callTool, errorOf, initializeRequest, messages, openSession, postRaw } from '../support/mcp-http.ts';
import { SseReader } from '../support/sse-reader.ts';
import { TASK_CLIENT } from '../support/task-http.ts';
import { answerOf, modernRequest } from '../support/modern-http.ts';
import { eventually, holdings, newPrincipal } from '../support/principals.ts';
import { objectName } from '../../src/auth/principal.ts';
import { PrincipalHoldings } from '../../src/principals/principal-holdings.ts';

const initialize = (auth: Record<string, string>) => postRaw(initializeRequest('2025-11-25'), auth);
const taskCall = (auth: Record<string, string>) =>
  modernRequest('tools/call', { name: 'slow_compute', arguments: { seconds: 30, label: 'x' } }, TASK_CLIENT, auth);

describe('the registry asking whether a session is still there (a probe)', () => {
  it('does not change who the session’s running calls run for', async () => {
    const alice = await newPrincipal('alice');
    const session = await openSession('2025-11-25', {}, alice.auth);
    const call = session.post(callTool('later', 'whoami_later', { ms: 400 }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // What the registry sends when alice is at her bound (principals/principal-holdings.ts): no principal.
    const stub = env.MCP_SESSION.get(env.MCP_SESSION.idFromName(objectName({ id: alice.id }, session.id)));
    expect((await stub.fetch(new Request(`https://session.internal${OBJECT_ROUTES.probe}`))).status).toBe(204);
    const answer = messages(await new SseReader(await call).all()).at(-1) as { result: { content: [{ text: string }] } };
    expect(JSON.parse(answer.result.content[0].text)).toMatchObject({ id: alice.id });
  });
});

describe('a probe the session object fails to answer', () => {
  it('counts the session as still held: its principal is refused at the bound, not let past it', async () => {
    const alice = await newPrincipal('alice');
    for (let i = 0; i < 3; i++) await openSession('2025-11-25', {}, alice.auth);
    // The same registry, with session objects that answer every probe 500 (a storage error).
    const failing = {
      idFromName: (name: string) => env.MCP_SESSION.idFromName(name),
      get: () => ({ fetch: async () => new Response(null, { status: 500 }) }),
    };
    const holdingsOf = new PrincipalHoldings(env.MCP_PRINCIPALS, failing as never, alice.id, '', {
      maxSessionsPerPrincipal: 3,
      maxTasksPerPrincipal: 2,
    });
    await expect(holdingsOf.admitSession('another')).rejects.toMatchObject({ status: 429, data: { reason: 'session_limit' } });
    expect((await holdings(alice.id)).sessions).toHaveLength(3);
  });
});

describe('sessions per principal', () => {
  it('refuses the fourth live session with session_limit, and serves another principal', async () => {
    const alice = await newPrincipal('alice');
    for (let i = 0; i < 3; i++) await openSession('2025-11-25', {}, alice.auth);
    const refused = await initialize(alice.auth);
    const error = await errorOf(refused);
    expect(error.status).toBe(429);
    expect(error.reason).toBe('session_limit');
    expect(error.body.error.data.limit).toBe(3);
    expect(error.body.error.message).toContain('DELETE');
    expect(refused.headers.get('Mcp-Session-Id')).toBeNull();

    const bob = await newPrincipal('bob');
    const bobs = await openSession('2025-11-25', {}, bob.auth);
    expect(bobs.id).toMatch(/./);
    expect((await holdings(alice.id)).sessions).toHaveLength(3);
    expect((await holdings(bob.id)).sessions.map((s) => s.id)).toEqual([bobs.id]);
  });

  it('frees a place when a session is deleted', async () => {
    const alice = await newPrincipal('alice');
    const sessions = [];
    for (let i = 0; i < 3; i++) sessions.push(await openSession('2025-11-25', {}, alice.auth));
    expect((await sessions[0]!.delete()).status).toBe(204);
    await eventually(async () => (await holdings(alice.id)).sessions.length === 2);
    const fourth = await initialize(alice.auth);
    expect(fourth.status).toBe(200);
    await fourth.body?.cancel();
  });

  it('finds by probing a session that ended without telling the registry (idle expiry), and admits in its place', async () => {
    const alice = await newPrincipal('alice');
    const sessions = [];
    for (let i = 0; i < 3; i++) sessions.push(await openSession('2025-11-25', {}, alice.auth));
    // Deleted at its object directly, as the idle expiry does: the registry still counts it.
    const stub = env.MCP_SESSION.get(env.MCP_SESSION.idFromName(objectName({ id: alice.id }, sessions[1]!.id)));
    await stub.fetch(new Request('https://session.internal/session', { method: 'DELETE', headers: { 'Mcp-Session-Id': sessions[1]!.id } }));
    expect((await holdings(alice.id)).sessions).toHaveLength(3);

    const fourth = await initialize(alice.auth);
    expect(fourth.status).toBe(200);
    const created = fourth.headers.get('Mcp-Session-Id');
    await fourth.body?.cancel();
    const held = (await holdings(alice.id)).sessions.map((s) => s.id);
    expect(held).toHaveLength(3);
    expect(held).not.toContain(sessions[1]!.id);
    expect(held).toContain(created);
  });

  it('never exceeds the limit when creations race', async () => {
    const alice = await newPrincipal('alice');
    const answers = await Promise.all(Array.from({ length: 12 }, () => initialize(alice.auth)));
    const statuses = answers.map((a) => a.status).sort();
    await Promise.all(answers.map((a) => a.body?.cancel()));
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(9);
    expect((await holdings(alice.id)).sessions).toHaveLength(3);
  });
});

describe('tasks per principal', () => {
  it('refuses the third unexpired task with task_limit and Retry-After, and serves another principal', async () => {
    const alice = await newPrincipal('alice');
    for (let i = 0; i < 2; i++) expect((await answerOf(await taskCall(alice.auth))).result.resultType).toBe('task');
    const refused = await taskCall(alice.auth);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('Retry-After'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    const body = (await refused.json()) as { id: unknown; error: { data: { reason: string; limit: number } } };
    expect(body.error.data).toMatchObject({ reason: 'task_limit', limit: 2 });
    expect(body.id).not.toBeNull();

    const bob = await newPrincipal('bob');
    expect((await answerOf(await taskCall(bob.auth))).result.resultType).toBe('task');
  });

  it('never exceeds the limit when creations race', async () => {
    const alice = await newPrincipal('alice');
    const answers = await Promise.all(Array.from({ length: 8 }, () => taskCall(alice.auth)));
    const statuses = answers.map((a) => a.status);
    await Promise.all(answers.map((a) => a.body?.cancel()));
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 429)).toHaveLength(6);
    expect((await holdings(alice.id)).tasks).toHaveLength(2);
  });
});
