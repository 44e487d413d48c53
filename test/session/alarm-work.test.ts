/**
 * The alarm's work is bounded whatever the session's length: it reads the session row and its
 * newest stream, never the streams or events of its calls (nothing is pruned per stream any
 * more: an idle session is dropped whole). Counted with the SQL cursors' own rowsRead and
 * rowsWritten, the figures Cloudflare bills, for a session of 10 calls and one of 10,000, each
 * alarm run by a fresh instance (the worst case: nothing cached).
 */
import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, it } from 'vitest';
import { SessionStore } from '../../src/session/session-store.ts';
import { SessionStreams } from '../../src/session/session-streams.ts';
import { openSession } from '../support/mcp-http.ts';
import { streamOptions } from '../support/session-fixture.ts';

/** SQL rows the object's statements read and write from now on, summed as each cursor is consumed. */
const counted = { rowsRead: 0, rowsWritten: 0, statements: 0 };

async function alarmWork(calls: number): Promise<typeof counted & { alarm: number | null }> {
  const session = await openSession();
  const stub = () => env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id));
  // `calls` echo calls as the session stores them: a stream, its request id, its final answer.
  await runInDurableObject(stub(), (_instance, state) => {
    const streams = new SessionStreams(state.storage, new SessionStore(state.storage.sql), streamOptions());
    for (let i = 0; i < calls; i++) {
      const key = JSON.stringify(`call-${i}`);
      const { stream } = streams.openRequestStream(1, [key]);
      streams.emit(stream, JSON.stringify({ jsonrpc: '2.0', id: `call-${i}`, result: { content: [] } }), key);
    }
  });
  await abortAllDurableObjects();
  await runInDurableObject(stub(), (_instance, state) => {
    const sql = state.storage.sql;
    const exec = sql.exec.bind(sql);
    Object.assign(counted, { rowsRead: 0, rowsWritten: 0, statements: 0 });
    sql.exec = ((query: string, ...bindings: unknown[]) => {
      const cursor = exec(query, ...bindings);
      counted.statements++;
      // Read the counters once the caller has consumed the cursor (rowsRead grows as it is read).
      queueMicrotask(() => {
        counted.rowsRead += cursor.rowsRead;
        counted.rowsWritten += cursor.rowsWritten;
      });
      return cursor;
    }) as SqlStorage['exec'];
  });
  expect(await runDurableObjectAlarm(stub())).toBe(true);
  const alarm = await runInDurableObject(stub(), (_instance, state) => state.storage.getAlarm());
  return { ...counted, alarm };
}

it('reads and writes the same rows for a session of 10,000 calls as for one of 10', async () => {
  const short = await alarmWork(10);
  const long = await alarmWork(10_000);
  // Not expired (the TTL is an hour): it only arms the next alarm, and writes no SQL row.
  expect(short.alarm).not.toBeNull();
  expect(long.alarm).not.toBeNull();
  expect(long).toMatchObject({ rowsRead: short.rowsRead, rowsWritten: 0, statements: short.statements });
  expect(short.rowsRead).toBeGreaterThan(0); // the counters do count
  // sqlite_master (the schema's version), the session row, its newest stream: 18 seen.
  expect(short.rowsRead).toBeLessThan(40);
}, 60_000);
