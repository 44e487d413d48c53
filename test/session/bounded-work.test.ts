/**
 * What an instance reads when it wakes is bounded whatever the session's length: the alarm
 * reads the session row and its newest stream, a revival the streams opened since the oldest
 * call then running (streams.open_floor) — never every stream or event of the calls the
 * session made. Counted with the SQL cursors' own rowsRead and rowsWritten, the figures
 * Cloudflare bills, for a session of 10 calls and one of 10,000, in a fresh instance each time
 * (the worst case: nothing cached).
 */
import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, it } from 'vitest';
import { SessionStore } from '../../src/session/session-store.ts';
import { SessionStreams } from '../../src/session/session-streams.ts';
import { messages, openSession, type Session } from '../support/mcp-http.ts';
import { streamOptions } from '../support/session-fixture.ts';

type Counts = { rowsRead: number; rowsWritten: number; statements: number };

/** A session that made `calls` echo calls, stored as the session stores them, and its object aborted since. */
async function sessionOf(calls: number): Promise<{ session: Session; stub: () => DurableObjectStub }> {
  const session = await openSession();
  const stub = () => env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id));
  await runInDurableObject(stub(), (_instance, state) => {
    const streams = new SessionStreams(state.storage, new SessionStore(state.storage.sql), streamOptions());
    for (let i = 0; i < calls; i++) {
      const key = JSON.stringify(`call-${i}`);
      const { stream } = streams.openRequestStream(1, [key]);
      streams.emit(stream, JSON.stringify({ jsonrpc: '2.0', id: `call-${i}`, result: { content: [] } }), key);
    }
  });
  await abortAllDurableObjects();
  return { session, stub };
}

/** Counts the SQL rows the fresh instance's statements read and write from now on (each cursor once consumed). */
async function counting(stub: DurableObjectStub): Promise<Counts> {
  const counts: Counts = { rowsRead: 0, rowsWritten: 0, statements: 0 };
  await runInDurableObject(stub, (_instance, state) => {
    const sql = state.storage.sql;
    const exec = sql.exec.bind(sql);
    sql.exec = ((query: string, ...bindings: unknown[]) => {
      const cursor = exec(query, ...bindings);
      counts.statements++;
      // rowsRead grows as the caller reads the cursor: taken once it has.
      queueMicrotask(() => {
        counts.rowsRead += cursor.rowsRead;
        counts.rowsWritten += cursor.rowsWritten;
      });
      return cursor;
    }) as SqlStorage['exec'];
  });
  return counts;
}

it('the alarm reads and writes the same rows for a session of 10,000 calls as for one of 10', async () => {
  const alarmOf = async (calls: number) => {
    const { stub } = await sessionOf(calls);
    const counts = await counting(stub());
    expect(await runDurableObjectAlarm(stub())).toBe(true);
    // Not expired (the TTL is an hour): it only arms the next alarm.
    expect(await runInDurableObject(stub(), (_instance, state) => state.storage.getAlarm())).not.toBeNull();
    return { ...counts };
  };
  const short = await alarmOf(10);
  const long = await alarmOf(10_000);
  expect(long).toEqual(short);
  expect(short.rowsWritten).toBe(0);
  // sqlite_master (the schema's version), the session row, its newest stream: 13 seen.
  expect(short.rowsRead).toBeGreaterThan(0);
  expect(short.rowsRead).toBeLessThan(40);
}, 60_000);

it('a revival reads the same rows for a session of 10,000 calls as for one of 10', async () => {
  const revivalOf = async (calls: number) => {
    const { session, stub } = await sessionOf(calls);
    const counts = await counting(stub());
    expect(messages(await session.call('ping', {}, 'after-wake'))).toHaveLength(1); // the revival, then a call: 3 rows
    return { ...counts };
  };
  const short = await revivalOf(10);
  const long = await revivalOf(10_000);
  expect(long).toEqual(short);
  expect(short.rowsWritten).toBe(3);
  expect(short.rowsRead).toBeLessThan(60);
}, 60_000);
