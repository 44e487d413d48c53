/**
 * Bounded and expiring sessions, with the project's tight settings:
 * SESSION_TTL_MS=1000, MAX_SESSION_EVENTS=50, MAX_SESSION_REQUESTS=20, MAX_RUNNING_CALLS=3.
 * Alarms are run on demand with runDurableObjectAlarm.
 */
import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { errorOf, messages, openSession, callTool, toolCall, type Session } from '../support/mcp-http.ts';
import { SseReader } from '../support/sse-reader.ts';

const stubOf = (session: Session) => env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const streamOf = (id: string) => id.split('-')[1];

describe('ended streams', () => {
  it('keep their events for the session’s life: after the alarm ran, a cursor into one still replays it', async () => {
    const session = await openSession();
    const events = await session.call('tools/call', toolCall('countdown', { from: 3, interval_ms: 0 }, { progressToken: 1 }));
    const stream = streamOf(events[0]!.id!);

    await runDurableObjectAlarm(stubOf(session)); // within the TTL: nothing expires, nothing is pruned

    const replay = await new SseReader(await session.get(`${session.epoch}-${stream}-1`)).all();
    expect(replay.map((e) => e.id)).toEqual([
      `${session.epoch}-${stream}-1`,
      `${session.epoch}-${stream}-2`,
      `${session.epoch}-${stream}-3`,
      `${session.epoch}-${stream}-4`,
    ]);
    expect(messages(replay).at(-1)).toMatchObject({ result: { content: [{ text: 'liftoff after 3' }] } });
  });

  it('the final event of a finished stream is a valid point: no replay, a new standalone stream', async () => {
    const session = await openSession();
    const events = await session.call('tools/call', toolCall('tally', { key: 'r' }));
    await runDurableObjectAlarm(stubOf(session));
    const response = await session.get(events.at(-1)!.id!);
    expect(response.status).toBe(200);
    expect(response.headers.get('Mcp-Stream-Resumed')).toBe('false');
    await response.body?.cancel();
  });

  it('a superseded standalone stream still answers stream_superseded', async () => {
    const session = await openSession();
    const first = await session.get();
    const [priming] = await new SseReader(first).take(1);
    await (await session.get()).body?.cancel();
    await runDurableObjectAlarm(stubOf(session));
    expect(await errorOf(await session.get(priming!.id))).toMatchObject({ status: 409, reason: 'stream_superseded' });
  });
});

describe('per-session bounds', () => {
  it('beyond MAX_SESSION_EVENTS the oldest events are pruned; early cursors get 410, late ones resume', async () => {
    const session = await openSession();
    const response = await session.post(callTool('big', 'countdown', { from: 120, interval_ms: 5 }, { progressToken: 1 }));
    const stream = response.headers.get('Mcp-Stream-Id');
    const live = new SseReader(response);
    try {
      const seen = await live.take(81); // priming + 80 progress: the call is still running
      expect(seen.at(-1)!.id).toBe(`${session.epoch}-${stream}-80`);
      const stored = await runInDurableObject(
        stubOf(session),
        (_i, state) => state.storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM events`).one().n,
      );
      expect(stored).toBeLessThanOrEqual(50);

      expect(await errorOf(await session.get(`${session.epoch}-${stream}-1`))).toMatchObject({ status: 410, reason: 'events_pruned' });
      // A recent cursor resumes (and fences the first connection) with nothing missing.
      const resumed = new SseReader(await session.get(`${session.epoch}-${stream}-78`));
      const rest = await resumed.all();
      const seqs = rest.map((e) => Number(e.id!.split('-')[2]));
      expect(seqs).toEqual(Array.from({ length: 121 - 78 + 1 }, (_, i) => 78 + i));
      expect(messages(rest).at(-1)).toMatchObject({ id: 'big', result: { content: [{ text: 'liftoff after 120' }] } });
    } finally {
      await live.cancel();
    }
  });
});

describe('a new session’s stored events', () => {
  it('are counted from none: exactly MAX_SESSION_EVENTS are kept before the first is pruned, the initialize answer', async () => {
    const session = await openSession(); // its answer: the session's first event
    const stored = () =>
      runInDurableObject(stubOf(session), (_i, state) =>
        state.storage.sql.exec<{ stream: number; n: number }>(`SELECT min(stream) AS stream, count(*) AS n FROM events`).one(),
      );
    // 48 progress events and the answer: 50 with the initialize answer.
    await session.call('tools/call', toolCall('countdown', { from: 48, interval_ms: 0 }, { progressToken: 1 }));
    expect(await stored()).toEqual({ stream: 1, n: 50 });
    await session.call('tools/call', toolCall('tally', { key: 'one more' }));
    expect(await stored()).toEqual({ stream: 2, n: 50 });
  });
});

describe('requests a session keeps', () => {
  it('past MAX_SESSION_REQUESTS a request (or a GET stream) is refused 409 session_full; a re-sent id is still recognised', async () => {
    const session = await openSession(); // initialize is the session's first request
    for (let id = 2; id <= 20; id++) expect(messages(await session.call('ping', {}, id))).toEqual([{ jsonrpc: '2.0', id, result: {} }]);

    expect(await errorOf(await session.post({ jsonrpc: '2.0', id: 21, method: 'ping' }))).toMatchObject({
      status: 409,
      reason: 'session_full',
      body: { id: 21, error: { data: { limit: 20 } } },
    });
    expect(await errorOf(await session.get())).toMatchObject({ status: 409, reason: 'session_full' });
    // What the session holds stays whole: a re-sent id gets its cursor, notifications still go through.
    expect(await errorOf(await session.post({ jsonrpc: '2.0', id: 7, method: 'ping' }))).toMatchObject({
      status: 409,
      reason: 'duplicate_request_id',
    });
    expect((await session.post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } })).status).toBe(202);
    const stored = await runInDurableObject(stubOf(session), (_i, state) => ({
      requests: state.storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM requests`).one().n,
      counted: state.storage.sql.exec<{ n: number }>(`SELECT max(session_requests) AS n FROM streams`).one().n,
    }));
    expect(stored).toEqual({ requests: 19, counted: 20 });
  });

  it('a new instance counts on from what the newest stream recorded', async () => {
    const session = await openSession();
    for (let id = 2; id <= 19; id++) await session.call('ping', {}, id);
    await abortAllDurableObjects();
    expect(messages(await session.call('ping', {}, 20))).toHaveLength(1);
    expect(await errorOf(await session.post({ jsonrpc: '2.0', id: 21, method: 'ping' }))).toMatchObject({
      status: 409,
      reason: 'session_full',
    });
  });

  it('past MAX_RUNNING_CALLS a call is refused 429 too_many_running_calls until one ends', async () => {
    const session = await openSession();
    const running = await Promise.all(
      [1, 2, 3].map(async (id) => new SseReader(await session.post(callTool(`run-${id}`, 'countdown', { from: 2, interval_ms: 300 })))),
    );
    try {
      expect(await errorOf(await session.post(callTool('fourth', 'countdown', { from: 1, interval_ms: 0 })))).toMatchObject({
        status: 429,
        reason: 'too_many_running_calls',
        body: { id: 'fourth', error: { data: { limit: 3 } } },
      });
      await running[0]!.all();
      expect(messages(await session.call('tools/call', toolCall('countdown', { from: 1, interval_ms: 0 }), 'fourth')).at(-1)).toMatchObject(
        {
          id: 'fourth',
          result: { content: [{ text: 'liftoff after 1' }] },
        },
      );
    } finally {
      await Promise.all(running.map((reader) => reader.cancel()));
    }
  });

  it('a 2025-03-26 batch counts as the calls it carries: past MAX_RUNNING_CALLS in calls, the next is refused', async () => {
    const session = await openSession('2025-03-26');
    const batch = (prefix: string, n: number, from: number) =>
      Array.from({ length: n }, (_, i) => callTool(`${prefix}-${i}`, 'countdown', { from, interval_ms: 300 }));
    // Two calls in one batch (~3 s), then one on its own (~0.3 s): the 3 the session may run.
    const running = [new SseReader(await session.post(batch('pair', 2, 10))), new SseReader(await session.post(batch('one', 1, 1)))];
    try {
      expect(await errorOf(await session.post(callTool('fourth', 'countdown', { from: 1, interval_ms: 0 })))).toMatchObject({
        status: 429,
        reason: 'too_many_running_calls',
      });
      // Once the single call has ended, the pair still runs: a batch of two would go past it, one call would not.
      await running[1]!.all();
      expect(await errorOf(await session.post(batch('too-many', 2, 1)))).toMatchObject({ status: 429, reason: 'too_many_running_calls' });
      const last = await session.call('tools/call', toolCall('countdown', { from: 1, interval_ms: 0 }), 'third');
      expect(messages(last).at(-1)).toMatchObject({ id: 'third', result: { content: [{ text: 'liftoff after 1' }] } });
    } finally {
      await Promise.all(running.map((reader) => reader.cancel()));
    }
  });
});

describe('idle expiry', () => {
  it('an idle session expires on its alarm: 404 afterwards, all storage gone, never re-created', async () => {
    const session = await openSession();
    await sleep(1_100);
    await runDurableObjectAlarm(stubOf(session));

    expect(await errorOf(await session.post({ jsonrpc: '2.0', id: 1, method: 'ping' }))).toMatchObject({ status: 404, code: -32001 });
    expect(await errorOf(await session.get())).toMatchObject({ status: 404 });
    const tables = await runInDurableObject(stubOf(session), (_i, state) =>
      state.storage.sql.exec(`SELECT name FROM sqlite_master WHERE type = 'table'`).toArray(),
    );
    expect(tables).toEqual([]);
  });

  it('a session used within its TTL does not expire', async () => {
    const session = await openSession();
    await sleep(600);
    await session.call('ping', {});
    await sleep(600);
    await runDurableObjectAlarm(stubOf(session));
    expect(messages(await session.call('ping', {}))).toHaveLength(1);
  });

  it('a session with a client attached does not expire while it listens', async () => {
    const session = await openSession();
    const reader = new SseReader(await session.get());
    try {
      await reader.take(1);
      await sleep(1_100);
      await runDurableObjectAlarm(stubOf(session));
      expect(messages(await session.call('ping', {}))).toHaveLength(1);
    } finally {
      await reader.cancel();
    }
  });

  it('a session with a call still running does not expire, even with no client attached', async () => {
    const session = await openSession();
    const response = await session.post(callTool('run', 'countdown', { from: 40, interval_ms: 40 }));
    const first = new SseReader(response);
    const [priming] = await first.take(1).finally(() => first.cancel());
    await sleep(1_100);
    await runDurableObjectAlarm(stubOf(session));
    // Still running (40 × 40 ms): the stream is open, so the result arrives on the resumed connection.
    expect(messages(await new SseReader(await session.get(priming!.id)).all())).toEqual([
      { jsonrpc: '2.0', id: 'run', result: { content: [{ type: 'text', text: 'liftoff after 40' }] } },
    ]);
  });
});
