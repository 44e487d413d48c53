/**
 * A session stored by the previous version of the schema (version 2: AUTOINCREMENT streams, an
 * index of requests by stream, schema_migrations) keeps working once this version's code
 * serves it: the first instance upgrades it in one transaction — when it revives the session,
 * or when its alarm is the first thing it runs — and everything it stored keeps its meaning.
 */
import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { idKey } from '../../src/core/jsonrpc.ts';
import { SESSION_SCHEMA } from '../../src/session/schema.ts';
import { LEGACY, V3, writeLegacySession, writeV3Session } from '../support/legacy-session.ts';
import { callTool, errorOf, messages, openSession, type Session } from '../support/mcp-http.ts';
import { SseReader } from '../support/sse-reader.ts';

/** A session id whose object holds the legacy session (the id is real, so the Worker routes to it). */
async function legacySession(): Promise<{ session: Session; stub: () => DurableObjectStub }> {
  const session = await openSession();
  // A stub does not outlive abortAllDurableObjects(): one per use.
  const stub = () => env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id));
  await runInDurableObject(stub(), (_instance, state) => writeLegacySession(state.storage));
  await abortAllDurableObjects();
  return { session, stub };
}

const schemaOf = (stub: DurableObjectStub) =>
  runInDurableObject(stub, (_instance, state) => {
    const sql = state.storage.sql;
    return {
      version: sql.exec<{ v: number }>(`SELECT schema_version AS v FROM session`).one().v,
      objects: sql
        .exec<{ name: string }>(
          `SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND substr(name, 1, 4) != '_cf_' ORDER BY name`,
        )
        .toArray()
        .map((row) => row.name),
      keys: sql.exec<{ stream: number; keys: string | null }>(`SELECT stream, request_keys AS keys FROM streams ORDER BY stream`).toArray(),
    };
  });

describe('a session stored by schema version 2', () => {
  it('is upgraded by the instance that revives it: tables, version, request ids per stream', async () => {
    const { session, stub } = await legacySession();
    expect((await session.post({ jsonrpc: '2.0', id: 'ping-1', method: 'ping' })).status).toBe(200);
    expect(await schemaOf(stub())).toEqual({
      version: SESSION_SCHEMA.version,
      // schema_migrations and requests_by_stream are gone; event_parts stays, as it was there.
      objects: ['event_parts', 'events', 'requests', 'session', 'streams'],
      keys: [
        { stream: 1, keys: JSON.stringify([idKey(LEGACY.initializeId)]) },
        { stream: 2, keys: JSON.stringify([idKey(LEGACY.finishedId)]) },
        { stream: 3, keys: JSON.stringify([idKey(LEGACY.runningId)]) },
        { stream: 4, keys: null },
        { stream: 5, keys: null },
        { stream: 6, keys: JSON.stringify([idKey('ping-1')]) },
      ],
    });
  });

  it('keeps its streams: the call left running is interrupted in a new epoch, the finished one replays, numbering goes on', async () => {
    const { session } = await legacySession();
    const call = await session.post(callTool('after', 'tally', { key: 'k' }));
    // The revival found stream 3 open: its handler is gone, so the epoch advanced.
    expect(call.headers.get('Mcp-Session-Epoch')).toBe('2');
    expect(call.headers.get('Mcp-Stream-Id')).toBe('6');
    expect(messages(await new SseReader(call).all())).toEqual([
      { jsonrpc: '2.0', id: 'after', result: { content: [{ type: 'text', text: '1' }] } },
    ]);

    const interrupted = await new SseReader(await session.get('1-3-1')).all();
    expect(messages(interrupted)).toEqual([
      {
        jsonrpc: '2.0',
        id: LEGACY.runningId,
        error: expect.objectContaining({ code: -32603, data: { reason: 'request_interrupted', epoch: 2 } }),
      },
    ]);
    const finished = await new SseReader(await session.get('1-2-0')).all();
    expect(messages(finished)).toEqual([{ jsonrpc: '2.0', id: LEGACY.finishedId, result: { content: [{ type: 'text', text: '1' }] } }]);
    // The final event of the finished stream is a valid point with nothing after it.
    const atEnd = await session.get('1-2-1');
    expect(atEnd.headers.get('Mcp-Stream-Resumed')).toBe('false');
    await atEnd.body?.cancel();
    // The superseded standalone stream is still told apart from an unknown one.
    expect(await errorOf(await session.get('1-4-0'))).toMatchObject({ status: 409, reason: 'stream_superseded' });
  });

  it('still refuses its request ids, initialize’s among them, with the cursor of the stream that answered', async () => {
    const { session } = await legacySession();
    for (const [id, cursor] of [
      [LEGACY.finishedId, '1-2-0'],
      [LEGACY.initializeId, '1-1-0'],
    ] as const) {
      expect(await errorOf(await session.post({ jsonrpc: '2.0', id, method: 'ping' }))).toMatchObject({
        status: 409,
        reason: 'duplicate_request_id',
        body: { error: { data: { cursor } } },
      });
    }
  });

  it('is upgraded when its alarm is the first thing a new instance runs, and the alarm arms the next one', async () => {
    const { session, stub } = await legacySession();
    expect(await runDurableObjectAlarm(stub())).toBe(true);
    const after = await runInDurableObject(stub(), async (_instance, state) => ({
      version: state.storage.sql.exec<{ v: number }>(`SELECT schema_version AS v FROM session`).one().v,
      alarm: await state.storage.getAlarm(),
    }));
    expect(after.version).toBe(SESSION_SCHEMA.version);
    expect(after.alarm).not.toBeNull();
    expect(messages(await session.call('ping', {}))).toHaveLength(1);
  });
});

describe('a session stored by schema version 3', () => {
  async function v3Session(): Promise<{ session: Session; stub: () => DurableObjectStub }> {
    const session = await openSession();
    const stub = () => env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id));
    await runInDurableObject(stub(), (_instance, state) => writeV3Session(state.storage));
    await abortAllDurableObjects();
    return { session, stub };
  }

  it('keeps its events in the one-integer key (each as it was) and counts its requests on from every stream row', async () => {
    const { session, stub } = await v3Session();
    expect(messages(await session.call('ping', {}, 'after'))).toEqual([{ jsonrpc: '2.0', id: 'after', result: {} }]);
    const stored = await runInDurableObject(stub(), (_instance, state) => {
      const sql = state.storage.sql;
      return {
        version: sql.exec<{ v: number }>(`SELECT schema_version AS v FROM session`).one().v,
        events: sql.exec(`SELECT stream, seq, ends_stream, length(message) AS length FROM events ORDER BY event`).toArray(),
        // initialize, 'long', the GET stream, then 'after'.
        counted: sql.exec<{ n: number }>(`SELECT session_requests AS n FROM streams ORDER BY stream DESC LIMIT 1`).one().n,
        withoutRowid: sql.exec<{ sql: string }>(`SELECT sql FROM sqlite_master WHERE name = 'events'`).one().sql.includes('WITHOUT ROWID'),
      };
    });
    expect(stored).toMatchObject({
      version: SESSION_SCHEMA.version,
      events: [
        { stream: 1, seq: 1, ends_stream: 1 },
        { stream: 2, seq: 1, ends_stream: 1 },
        { stream: 4, seq: 1, ends_stream: 1 },
      ],
      counted: 4,
      withoutRowid: false,
    });
    // The finished call replays from its cursor; its id is still refused, with that cursor.
    const replay = await new SseReader(await session.get('1-2-0')).all();
    expect(messages(replay)).toEqual([{ jsonrpc: '2.0', id: V3.finishedId, result: { content: [{ type: 'text', text: V3.answerText }] } }]);
    expect(await errorOf(await session.post({ jsonrpc: '2.0', id: V3.finishedId, method: 'ping' }))).toMatchObject({
      status: 409,
      reason: 'duplicate_request_id',
      body: { error: { data: { cursor: '1-2-0' } } },
    });
  });
});
