import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/session/migrations.ts';
import { SessionStore } from '../../src/session/session-store.ts';
import { SessionStreams } from '../../src/session/session-streams.ts';
import { EventLog } from '../../src/session/event-log.ts';
const OLD = `SELECT e.stream AS stream, e.seq AS seq, length(CAST(e.message AS BLOB)) AS size
           FROM events e JOIN streams s ON s.stream = e.stream
          ORDER BY s.state = 'open', e.stream, e.seq
          LIMIT ?`;
if (true) (EventLog.prototype as any).pruneOldest = function (count: number) {
  const sql = (this as any).sql as SqlStorage;
  const victims = sql.exec<{ stream: number; seq: number; size: number }>(OLD, count).toArray();
  let bytes = 0;
  for (const { stream, seq, size } of victims) { sql.exec(`DELETE FROM events WHERE stream = ? AND seq = ?`, stream, seq); bytes += size; }
  return { events: victims.length, bytes };
};

describe('review: one large answer at the byte bound', () => {
  it('prunes one small event per full-table query', async () => {
    const N = 10_000;
    const stub = env.MCP_SESSION.get(env.MCP_SESSION.idFromName(`bytes-${crypto.randomUUID()}`));
    const mk = (storage: DurableObjectStorage) =>
      new SessionStreams(storage, new SessionStore(storage.sql), {
        heartbeatMs: 0, connectionBufferBytes: 1 << 20, retryMs: 0, maxConnectionAgeMs: 0,
        maxSessionEvents: 100_000, maxSessionBytes: N * 500 + 1000, onStreamEnded: () => undefined,
      });
    const streamIds = await runInDurableObject(stub, (_i, state) => {
      const sql = state.storage.sql;
      state.storage.transactionSync(() => {
        migrate(sql);
        new SessionStore(sql).create('2025-11-25', {}, 0);
      });
      const streams = mk(state.storage);
      const bg = streams.openRequestStream(1, ['"bg"']).stream;
      const call = streams.openRequestStream(1, ['"call"']).stream;
      sql.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${N})
                INSERT INTO events (stream, seq, message) SELECT ${bg}, i, printf('%0500d', i) FROM n`);
      return { bg, call };
    });
    const t0 = Date.now();
    const after = await runInDurableObject(stub, (_i, state) => {
      const streams = mk(state.storage);
      const answer = JSON.stringify({ jsonrpc: '2.0', id: 'call', result: { t: 'x'.repeat(2 * 1024 * 1024) } });
      streams.emit(streamIds.call, answer, '"call"');
      return state.storage.sql.exec(`SELECT count(*) AS n FROM events`).one().n;
    });
    const ms = Date.now() - t0;
    console.log(`one 2 MiB answer: ${ms} ms, events left ${after} of ${N}`);
    expect(ms).toBeLessThan(1000);
  }, 600_000);
});
