/**
 * A message longer than one SQLite value may be (2 MB in a Durable Object) is stored in parts:
 * its events row holds the first, event_parts the rest. Readers, totals and pruning see whole
 * messages; a message is stored whole or not at all. Small parts (4 UTF-16 units) here, so
 * every boundary is exercised; the real size is exercised end to end in message-size.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { utf8Length } from '../../src/core/utf8.ts';
import { EventLog } from '../../src/session/event-log.ts';
import { PART_UNITS } from '../../src/session/event-rows.ts';
import { inNewObject } from '../support/session-fixture.ts';

/** Each crosses part boundaries differently: pairs and two- and three-byte characters at the cuts. */
const MESSAGES = ['tiny', 'a😀b😀c😀d', 'é€é€é€é€é', '{"jsonrpc":"2.0","id":1,"result":{"text":"😀😀"}}', 'abcdefgh'];

function inLog<T>(body: (log: EventLog, sql: SqlStorage) => T, partUnits = 4): Promise<T> {
  return inNewObject((storage) => {
    const log = new EventLog(storage, { partUnits });
    log.openStream('request', 1, ['"1"'], 0);
    log.openStream('request', 1, ['"1"'], 0);
    return body(log, storage.sql);
  });
}

const partsOf = (sql: SqlStorage, stream: number) =>
  sql.exec<{ n: number }>(`SELECT count(*) AS n FROM event_parts WHERE stream = ?`, stream).one().n;

describe('a message stored in parts', () => {
  it('is read back whole and in order, mixed with messages stored whole', async () => {
    const { page, parts } = await inLog((log, sql) => {
      log.appendMany(MESSAGES.map((message, i) => ({ stream: 1, seq: i + 1, message })));
      return { page: log.eventsAfter(1, 0, 1 << 20), parts: partsOf(sql, 1) };
    });
    expect(page).toEqual(MESSAGES.map((message, i) => ({ seq: i + 1, message })));
    expect(parts).toBeGreaterThan(MESSAGES.length);
  });

  it('counts its whole UTF-8 size against a page budget', async () => {
    const sizes = MESSAGES.map(utf8Length);
    const seqs = await inLog((log) => {
      log.appendMany(MESSAGES.map((message, i) => ({ stream: 1, seq: i + 1, message })));
      // A budget one byte short of the first three: two of them.
      return log.eventsAfter(1, 0, sizes[0]! + sizes[1]! + sizes[2]! - 1).map((e) => e.seq);
    });
    expect(seqs).toEqual([1, 2]);
  });

  it('is stored whole or not at all: a part that cannot be written takes the batch with it', async () => {
    const result = await inLog((log, sql) => {
      log.appendMany([{ stream: 2, seq: 1, message: MESSAGES[1]! }]); // event_parts exists from here
      // A stray part where seq 2's would go: writing seq 2's parts violates the key.
      sql.exec(`INSERT INTO event_parts (stream, seq, part, chunk) VALUES (1, 2, 1, 'x')`);
      let failed = false;
      try {
        log.appendMany(MESSAGES.slice(0, 2).map((message, i) => ({ stream: 1, seq: i + 1, message })));
      } catch {
        failed = true;
      }
      return { failed, events: sql.exec(`SELECT count(*) AS n FROM events WHERE stream = 1`).one().n, parts: partsOf(sql, 1) };
    });
    expect(result).toEqual({ failed: true, events: 0, parts: 1 });
  });

  it('has its table created with the first message stored in parts, not with the session', async () => {
    const hasTable = (sql: SqlStorage) => sql.exec(`SELECT 1 FROM sqlite_master WHERE name = 'event_parts'`).toArray().length === 1;
    const result = await inLog((log, sql) => {
      const atStart = hasTable(sql);
      log.appendMany([{ stream: 1, seq: 1, message: 'tiny' }]);
      const afterShort = hasTable(sql);
      // A long message whose insert fails (seq 1 is taken): its table goes with it...
      let failed = false;
      try {
        log.appendMany([{ stream: 1, seq: 1, message: MESSAGES[1]! }]);
      } catch {
        failed = true;
      }
      const afterFailure = hasTable(sql);
      // ...and the next long one creates it again.
      log.appendMany([{ stream: 1, seq: 2, message: MESSAGES[1]! }]);
      return {
        atStart,
        afterShort,
        failed,
        afterFailure,
        after: hasTable(sql),
        page: log.eventsAfter(1, 0, 1 << 20).map((e) => e.message),
      };
    });
    expect(result).toEqual({
      atStart: false,
      afterShort: false,
      failed: true,
      afterFailure: false,
      after: true,
      page: ['tiny', MESSAGES[1]],
    });
  });

  it('counts whole in the totals, and is pruned with all its parts', async () => {
    const bytes = MESSAGES.reduce((sum, m) => sum + utf8Length(m), 0);
    const result = await inLog((log, sql) => {
      log.appendMany(MESSAGES.map((message, i) => ({ stream: 1, seq: i + 1, message })));
      log.appendMany(MESSAGES.map((message, i) => ({ stream: 2, seq: i + 1, message })));
      const totals = log.totals();
      // All of stream 2 first once it ended, then the two oldest events of stream 1.
      log.end(2, 'finished');
      const pruned = log.pruneOldest({ events: 7, bytes: 0 }, { stream: 1, seq: MESSAGES.length });
      const left = log.eventsAfter(1, 0, 1 << 20).map((e) => e.message);
      return { totals, pruned, left, parts1: partsOf(sql, 1), parts2: partsOf(sql, 2), after: log.totals() };
    });
    expect(result.totals).toEqual({ events: 10, bytes: 2 * bytes });
    expect(result.pruned).toEqual({ events: 7, bytes: bytes + utf8Length(MESSAGES[0]!) + utf8Length(MESSAGES[1]!) });
    expect(result.left).toEqual(MESSAGES.slice(2));
    expect(result.parts2).toBe(0);
    // What is left of stream 1 still has its parts, and the totals agree with what is left.
    expect(result.parts1).toBeGreaterThan(0);
    expect(result.after).toEqual({ events: 3, bytes: bytes - utf8Length(MESSAGES[0]!) - utf8Length(MESSAGES[1]!) });
  });

  it('is split at PART_UNITS by default, where the real 2 MB value limit is', async () => {
    // Three-byte characters: a part of PART_UNITS of them is 1.8 MB, within the limit.
    const big = '€'.repeat(PART_UNITS * 2 + 1);
    const result = await inLog((log, sql) => {
      log.appendMany([{ stream: 1, seq: 1, message: big }]);
      const [event] = log.eventsAfter(1, 0, 0);
      return { same: event?.message === big, parts: partsOf(sql, 1), totals: log.totals() };
    }, PART_UNITS);
    expect(result).toEqual({ same: true, parts: 2, totals: { events: 1, bytes: 3 * (PART_UNITS * 2 + 1) } });
  });
});
