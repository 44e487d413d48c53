import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/session/migrations.ts';
import { SessionStore } from '../../src/session/session-store.ts';
import { EventLog } from '../../src/session/event-log.ts';

const OLD = `SELECT e.stream AS stream, e.seq AS seq, length(CAST(e.message AS BLOB)) AS size
           FROM events e JOIN streams s ON s.stream = e.stream
          ORDER BY s.state = 'open', e.stream, e.seq
          LIMIT ?`;
const NEW = `SELECT e.stream AS stream, e.seq AS seq,
                octet_length(e.message) +
                  coalesce((SELECT sum(octet_length(p.chunk)) FROM event_parts p WHERE p.stream = e.stream AND p.seq = e.seq), 0) AS size
           FROM events e
           JOIN streams s ON s.stream = e.stream
           JOIN (SELECT stream, max(seq) AS newest FROM events GROUP BY stream) h ON h.stream = e.stream
          WHERE NOT (e.stream = ? AND e.seq = ?)
          ORDER BY s.state = 'open', CASE WHEN s.state = 'open' THEN e.seq - h.newest ELSE 0 END, e.stream, e.seq
          LIMIT ?`;

describe('review: pruneOldest cost', () => {
  it('per call, 100k events in 20 open streams', async () => {
    const stub = env.MCP_SESSION.get(env.MCP_SESSION.idFromName(`perf-${crypto.randomUUID()}`));
    await runInDurableObject(stub, (_i, state) => {
      const sql = state.storage.sql;
      state.storage.transactionSync(() => {
        migrate(sql);
        new SessionStore(sql).create('2025-11-25', {}, 0);
        const log = new EventLog(state.storage);
        for (let s = 0; s < 20; s++) log.openStream('request', 1);
        sql.exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 99999)
                  INSERT INTO events (stream, seq, message) SELECT 1 + i % 20, 1 + i / 20, printf('%0500d', i) FROM n`);
      });
      return sql.exec(`SELECT count(*) AS n FROM events`).one().n;
    });
    const time = async (q: string, args: unknown[], reps: number) => {
      const t0 = Date.now();
      await runInDurableObject(stub, (_i, state) => {
        for (let r = 0; r < reps; r++) state.storage.sql.exec(q, ...args).toArray();
      });
      return (Date.now() - t0) / reps;
    };
    await time(OLD, [1], 2);
    const oldMs = await time(OLD, [1], 10);
    const newMs = await time(NEW, [5, 5000, 1], 10);
    console.log(`old ${oldMs.toFixed(1)} ms/call, new ${newMs.toFixed(1)} ms/call`);
    expect(newMs).toBeGreaterThan(0);
  });
});
