/**
 * EventLog.eventsAfter reads a stream's log a page at a time: in order, from the cursor, as
 * many events as fit in the budget (UTF-8 bytes) but always at least one, at most PAGE_ROWS.
 */
import { describe, expect, it } from 'vitest';
import { EventLog } from '../../src/session/event-log.ts';
import { inNewObject } from '../support/session-fixture.ts';

/** Stream 1: seq n has a message of SIZES[n - 1] UTF-8 bytes; stream 2 has one event, never returned. */
const SIZES = [10, 20, 30, 40, 50];
/** Seq 3: 30 bytes of UTF-8 in 16 characters (é is 2 bytes), so a budget that counted characters would show. */
const SEQ_3 = `3${'é'.repeat(14)}x`;
const message = (seq: number, size: number) => (seq === 3 ? SEQ_3 : `${seq}`.padEnd(size, 'x'));

function withLog<T>(body: (log: EventLog, sql: SqlStorage) => T, partUnits?: number): Promise<T> {
  return inNewObject((storage) => {
    const log = new EventLog(storage, { partUnits });
    log.openStream('request', 1, ['"1"'], 0);
    log.openStream('request', 1, ['"1"'], 0);
    log.appendMany(SIZES.map((size, i) => ({ stream: 1, seq: i + 1, message: message(i + 1, size) })));
    log.appendMany([{ stream: 2, seq: 1, message: 'other stream' }]);
    return body(log, storage.sql);
  });
}

// The same pages whether messages are stored whole or, with 4-unit parts, every one of them
// in parts: sizes and contents are the whole message's.
describe.each([
  { storage: 'whole', partUnits: undefined },
  { storage: 'in parts', partUnits: 4 },
])('EventLog.eventsAfter, messages stored $storage', ({ partUnits }) => {
  it('stores them as described', async () => {
    const parts = await withLog(
      (_log, sql) =>
        sql.exec(`SELECT 1 FROM sqlite_master WHERE name = 'event_parts'`).toArray().length === 0
          ? 0 // created with the first message stored in parts
          : sql.exec<{ n: number }>(`SELECT count(*) AS n FROM event_parts`).one().n,
      partUnits,
    );
    // Messages of 10, 20, 16 (seq 3), 40 and 50 units, and 12 on stream 2: 4-unit parts past each first one.
    expect(parts).toBe(partUnits === undefined ? 0 : 2 + 4 + 3 + 9 + 12 + 2);
  });

  it.each([
    { afterSeq: 0, budget: 1_000, seqs: [1, 2, 3, 4, 5], why: 'everything fits' },
    { afterSeq: 0, budget: 150, seqs: [1, 2, 3, 4, 5], why: 'an exact fit' },
    { afterSeq: 0, budget: 149, seqs: [1, 2, 3, 4], why: 'one byte short of the last' },
    { afterSeq: 0, budget: 59, seqs: [1, 2], why: 'seq 3 counts 30 bytes, not 16 characters' },
    { afterSeq: 0, budget: 60, seqs: [1, 2, 3], why: 'seq 3 fits in exactly 30 bytes' },
    { afterSeq: 0, budget: 1, seqs: [1], why: 'always at least one event' },
    { afterSeq: 0, budget: 0, seqs: [1], why: 'even with no room' },
    { afterSeq: 3, budget: 1_000, seqs: [4, 5], why: 'from the cursor' },
    { afterSeq: 3, budget: 89, seqs: [4], why: 'from the cursor, within the budget' },
    { afterSeq: 5, budget: 1_000, seqs: [], why: 'nothing after the last event' },
    { afterSeq: 9, budget: 1_000, seqs: [], why: 'nothing after a cursor past the end' },
  ])('after $afterSeq with $budget bytes: $seqs ($why)', async ({ afterSeq, budget, seqs }) => {
    const page = await withLog((log) => log.eventsAfter(1, afterSeq, budget), partUnits);
    expect(page.map((e) => e.seq)).toEqual(seqs);
    for (const event of page) expect(event.message.startsWith(String(event.seq))).toBe(true);
  });

  it('returns the stored bytes exactly', async () => {
    const page = await withLog((log) => log.eventsAfter(1, 2, 30), partUnits);
    expect(page).toEqual([{ seq: 3, message: SEQ_3 }]);
  });

  it('returns at most 1,000 events however small they are', async () => {
    const pages = await inNewObject((storage) => {
      const log = new EventLog(storage);
      log.openStream('request', 1, ['"1"'], 0);
      for (let seq = 1; seq <= 2_500; seq += 25) {
        log.appendMany(Array.from({ length: 25 }, (_, i) => ({ stream: 1, seq: seq + i, message: 'm' })));
      }
      const sizes: number[] = [];
      for (let after = 0; ; ) {
        const page = log.eventsAfter(1, after, 1 << 30);
        if (page.length === 0) return sizes;
        expect(page[0]!.seq).toBe(after + 1);
        sizes.push(page.length);
        after = page.at(-1)!.seq;
      }
    });
    expect(pages).toEqual([1_000, 1_000, 500]);
  });
});
