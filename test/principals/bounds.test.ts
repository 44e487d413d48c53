/**
 * MAX_SESSIONS_PER_PRINCIPAL = 3 and MAX_TASKS_PER_PRINCIPAL = 2 (the `principals` project):
 * the next creation is refused with its typed error, another principal is not, and concurrent
 * creations never exceed the limit.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
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
  it('is told how long the session lives at least, and does not change who the session’s running calls run for', async () => {
    const alice = await newPrincipal('alice');
    const session = await openSession('2025-11-25', {}, alice.auth);
    const call = session.post(callTool('later', 'whoami_later', { ms: 400 }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // What the registry sends when alice is at her bound (principals/principal-holdings.ts): no principal.
    const stub = env.MCP_SESSION.get(env.MCP_SESSION.idFromName(objectName({ id: alice.id }, session.id)));
    const probedAt = Date.now();
    const probe = await stub.fetch(new Request(`https://session.internal${OBJECT_ROUTES.probe}`));
    expect(probe.status).toBe(200);
    // How long it lives at least: a TTL (the project's default, an hour) after its last activity, just now.
    const { liveUntil } = (await probe.json()) as { liveUntil: number };
    expect(liveUntil).toBeGreaterThan(probedAt + 3_600_000 - 5_000);
    expect(liveUntil).toBeLessThanOrEqual(Date.now() + 3_600_000);
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
    const holdingsOf = new PrincipalHoldings(
      env.MCP_PRINCIPALS,
      failing as never,
      alice.id,
      {},
      {
        maxSessionsPerPrincipal: 3,
        maxTasksPerPrincipal: 2,
      },
    );
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

describe('a principal at its bound whose oldest sessions are live', () => {
  // More sessions than one batch of probes (32): live ones among the oldest must not hide the
  // younger ones that expired. The registry is the real one; the sessions' objects are
  // stood in for, so that 40 sessions need no 40 handshakes and which are gone is the test's.
  const LIMIT = 40;
  const HOUR = 3_600_000;

  /** Session objects stood in for: those in `gone` answer a probe 404; the others, as a live one does. */
  function standIns(principal: string, gone: Set<string>) {
    const probes = new Map<string, number>();
    // An object's name is its principal's id and the session's (objectName); the stand-in keeps it as its id.
    const sessions = {
      idFromName: (name: string) => name,
      get: (name: string) => ({
        fetch: async () => {
          const session = (JSON.parse(name) as [string, string])[1];
          probes.set(session, (probes.get(session) ?? 0) + 1);
          // As the session object answers (session-object.ts): live at least until a TTL after its last activity.
          return gone.has(session) ? new Response(null, { status: 404 }) : Response.json({ liveUntil: Date.now() + HOUR });
        },
      }),
    };
    const limits = { maxSessionsPerPrincipal: LIMIT, maxTasksPerPrincipal: 2 };
    return { probes, holdings: () => new PrincipalHoldings(env.MCP_PRINCIPALS, sessions as never, principal, {}, limits) };
  }

  it('is served when only younger sessions expired: every expired session frees its place before a refusal', async () => {
    const alice = await newPrincipal('alice');
    const gone = new Set<string>();
    const { probes, holdings: holdingsOf } = standIns(alice.id, gone);
    const ids = Array.from({ length: LIMIT }, (_, i) => `s${String(i).padStart(2, '0')}`);
    for (const id of ids) {
      await holdingsOf().admitSession(id);
      await scheduler.wait(2); // one creation time each: oldest first is the order of ids
    }
    // The 32 oldest live, the 8 youngest expired idle (their objects answer 404 now).
    for (const id of ids.slice(32)) gone.add(id);
    // Whatever a registry draws to pick what it asks, the worst draw (the 32 oldest) included.
    const draw = crypto.getRandomValues.bind(crypto) as (array: ArrayBufferView) => ArrayBufferView;
    const worst = vi.spyOn(crypto, 'getRandomValues').mockImplementation(((array: ArrayBufferView) => {
      if (array instanceof Uint32Array && array.length === 1) return array.fill(0);
      return draw(array);
    }) as typeof crypto.getRandomValues);
    try {
      await holdingsOf().admitSession('next');
    } finally {
      worst.mockRestore();
    }
    const held = (await holdings(alice.id)).sessions.map((s) => s.id);
    expect(held).toEqual([...ids.slice(0, 32), 'next']);

    // At the bound again, with every session live: refused. The 32 probed live a moment ago
    // told how long they live at least, and are not asked again; only the 8 never asked are.
    const younger = ['next', ...Array.from({ length: 7 }, (_, i) => `more${i}`)];
    for (const id of younger.slice(1)) await holdingsOf().admitSession(id);
    await expect(holdingsOf().admitSession('another')).rejects.toMatchObject({ status: 429, data: { reason: 'session_limit' } });
    expect(Object.fromEntries(probes)).toEqual(Object.fromEntries([...ids.slice(0, LIMIT), ...younger].map((id) => [id, 1])));
    expect((await holdings(alice.id)).sessions).toHaveLength(LIMIT);
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
