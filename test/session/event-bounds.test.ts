/**
 * The per-session event bounds count exactly what is stored: across instances, after
 * retention pruning, and in UTF-8 bytes (as SQLite measures them), whatever the characters.
 */
import { describe, expect, it } from 'vitest';
import { SessionStore } from '../../src/session/session-store.ts';
import { MAX_MESSAGE_BYTES } from '../../src/session/event-rows.ts';
import { MessageTooLargeError } from '../../src/session/message-size.ts';
import { SessionStreams } from '../../src/session/session-streams.ts';
import { inNewObject, streamOptions } from '../support/session-fixture.ts';

/** Stored events and their UTF-8 bytes, parts included (a message over one value is stored in parts). */
const stored = (sql: SqlStorage) => {
  // event_parts exists once a message was stored in parts.
  const parts = sql.exec(`SELECT 1 FROM sqlite_master WHERE name = 'event_parts'`).toArray().length > 0;
  return sql
    .exec<{ events: number; bytes: number }>(
      `SELECT count(*) AS events,
              coalesce(sum(length(CAST(message AS BLOB))), 0)
                ${parts ? '+ (SELECT coalesce(sum(length(CAST(chunk AS BLOB))), 0) FROM event_parts)' : ''} AS bytes
         FROM events`,
    )
    .one();
};

function fresh(storage: DurableObjectStorage, bounds: { events?: number; bytes?: number } = {}) {
  return new SessionStreams(
    storage,
    new SessionStore(storage.sql),
    streamOptions({ maxSessionEvents: bounds.events ?? 1_000, maxSessionBytes: bounds.bytes ?? 1 << 30 }),
  );
}

describe('per-session bounds', () => {
  it('keep the answer just stored, and prune older events of another stream instead', async () => {
    const rows = await inNewObject((storage) => {
      const streams = fresh(storage, { events: 3 });
      const a = streams.openRequestStream(1, ['"a"']).stream;
      const b = streams.openRequestStream(1, ['"b"']).stream;
      for (let i = 0; i < 3; i++) streams.emit(b, `{"progress":${i}}`);
      // At the bound: the answer on the older stream prunes b's oldest event, not itself.
      streams.emit(a, '{"jsonrpc":"2.0","id":"a","result":{}}', '"a"');
      return {
        a,
        b,
        rows: storage.sql.exec<{ stream: number; seq: number }>(`SELECT stream, seq FROM events ORDER BY stream, seq`).toArray(),
      };
    });
    expect(rows.rows).toEqual([
      { stream: rows.a, seq: 1 },
      { stream: rows.b, seq: 2 },
      { stream: rows.b, seq: 3 },
    ]);
  });

  it('prune just enough older events for a large answer at the byte bound, the minimal prefix', async () => {
    const SMALL = '{"i":0000}'.length;
    const result = await inNewObject((storage) => {
      const streams = fresh(storage, { bytes: 2_000 });
      const small = streams.openRequestStream(1, ['"s"']).stream;
      for (let i = 0; i < 150; i++) streams.emit(small, `{"i":${String(i).padStart(4, '0')}}`); // SMALL bytes each
      const big = streams.openRequestStream(1, ['"b"']).stream;
      const answer = JSON.stringify({ jsonrpc: '2.0', id: 'b', result: { text: 'x'.repeat(1_000) } });
      streams.emit(big, answer, '"b"');
      const left = storage.sql.exec<{ stream: number; seq: number }>(`SELECT stream, seq FROM events ORDER BY stream, seq`).toArray();
      return { small, big, left, bytes: stored(storage.sql).bytes, answerBytes: answer.length };
    });
    // 150 small events and the answer are over 2,000 bytes: the fewest small events that cover it go.
    const over = 150 * SMALL + result.answerBytes - 2_000;
    const pruned = Math.ceil(over / SMALL);
    expect(result.left).toEqual([
      ...Array.from({ length: 150 - pruned }, (_, i) => ({ stream: result.small, seq: pruned + i + 1 })),
      { stream: result.big, seq: 1 },
    ]);
    expect(result.bytes).toBeLessThanOrEqual(2_000);
    expect(result.bytes + SMALL).toBeGreaterThan(2_000); // one event fewer pruned would not have fit
  });

  it('prune ended streams first, then open ones, the oldest stream’s oldest events first', async () => {
    const rows = await inNewObject((storage) => {
      const streams = fresh(storage, { events: 5 });
      const open = streams.openRequestStream(1, ['"open"']).stream;
      for (let i = 0; i < 2; i++) streams.emit(open, `{"open":${i}}`);
      const ended = streams.openRequestStream(1, ['"ended"']).stream;
      streams.emit(ended, '{"ended":0}');
      streams.emit(ended, '{"jsonrpc":"2.0","id":"ended","result":{}}', '"ended"');
      const later = streams.openRequestStream(1, ['"later"']).stream;
      streams.emit(later, '{"later":0}'); // 5 events: at the bound
      streams.emit(later, '{"later":1}'); // one over: the ended stream's first event goes
      const first = storage.sql
        .exec<{ message: string }>(`SELECT message FROM events ORDER BY stream, seq`)
        .toArray()
        .map((r) => r.message);
      streams.emit(later, '{"later":2}'); // its answer next
      streams.emit(later, '{"later":3}'); // then the oldest open stream's oldest event
      const second = storage.sql
        .exec<{ message: string }>(`SELECT message FROM events ORDER BY stream, seq`)
        .toArray()
        .map((r) => r.message);
      return { first, second };
    });
    expect(rows.first).toEqual(['{"open":0}', '{"open":1}', '{"jsonrpc":"2.0","id":"ended","result":{}}', '{"later":0}', '{"later":1}']);
    expect(rows.second).toEqual(['{"open":1}', '{"later":0}', '{"later":1}', '{"later":2}', '{"later":3}']);
  });

  it('keep the event just stored even when every stream holds only its newest', async () => {
    const rows = await inNewObject((storage) => {
      const streams = fresh(storage, { events: 2 });
      const ids = [1, 2, 3].map((n) => streams.openRequestStream(1, [`"${n}"`]).stream);
      streams.emit(ids[1]!, '{"n":2}');
      streams.emit(ids[2]!, '{"n":3}');
      streams.emit(ids[0]!, '{"n":1}'); // the lowest stream number, stored last
      return storage.sql
        .exec<{ message: string }>(`SELECT message FROM events ORDER BY stream, seq`)
        .toArray()
        .map((r) => r.message);
    });
    expect(rows).toContain('{"n":1}');
    expect(rows).toHaveLength(2);
  });

  it('keep exactly MAX_SESSION_EVENTS events, counting the first write of an instance once', async () => {
    const count = await inNewObject((storage) => {
      const streams = fresh(storage, { events: 3 });
      const { stream } = streams.openRequestStream(1, ['1']);
      for (let i = 0; i < 6; i++) streams.emit(stream, `{"n":${i}}`);
      return stored(storage.sql).events;
    });
    expect(count).toBe(3);
  });

  it('stay exact in a new instance over the same storage', async () => {
    const count = await inNewObject((storage) => {
      const first = fresh(storage, { events: 5 });
      const ended = first.openRequestStream(1, ['1']).stream;
      for (let i = 0; i < 3; i++) first.emit(ended, `{"n":${i}}`);
      first.emit(ended, '{"id":1,"result":{}}', '1');
      const running = first.openRequestStream(1, ['2']).stream;
      first.emit(running, '{"r":0}');

      const second = fresh(storage, { events: 5 }); // a new instance: its totals are read from storage
      for (let i = 1; i <= 6; i++) second.emit(running, `{"r":${i}}`);
      return stored(storage.sql).events;
    });
    expect(count).toBe(5);
  });

  it('a new instance starts from a bound that may count twice, and prunes only what the real totals demand', async () => {
    const result = await inNewObject((storage) => {
      const first = fresh(storage, { events: 10 });
      const a = first.openRequestStream(1, ['"a"']).stream;
      for (let i = 0; i < 4; i++) first.emit(a, `{"a":${i}}`);
      const b = first.openRequestStream(1, ['"b"']).stream; // records 4 stored, a still open
      for (let i = 0; i < 3; i++) first.emit(b, `{"b":${i}}`);
      void first.log; // the turn ends: what it held is stored
      // A new instance's bound: 4 + every event of a and b = 11, past the limit; the real total is 7.
      const second = fresh(storage, { events: 10 });
      second.emit(a, '{"a":4}');
      void second.log;
      const earliest = storage.sql.exec<{ seq: number }>(`SELECT min(seq) AS seq FROM events WHERE stream = ?`, a).one().seq;
      return { events: stored(storage.sql).events, earliest };
    });
    expect(result).toEqual({ events: 8, earliest: 1 }); // nothing pruned
  });

  it('a new instance’s bound includes the standalone stream’s events, however old the stream', async () => {
    const count = await inNewObject((storage) => {
      const first = fresh(storage, { events: 5 });
      const standalone = first.openStandalone(1, null).stream;
      const call = first.openRequestStream(1, ['"c"']).stream; // records 0 stored
      first.emit(call, '{"jsonrpc":"2.0","id":"c","result":{}}', '"c"');
      for (let i = 0; i < 4; i++) first.emit(standalone, `{"s":${i}}`);
      void first.log; // the turn ends: what it held is stored
      const second = fresh(storage, { events: 5 }); // 5 stored: at the limit
      second.emit(standalone, '{"s":4}');
      void second.log;
      return stored(storage.sql).events;
    });
    expect(count).toBe(5);
  });

  it('measure bytes as SQLite does, so multi-byte text is neither over- nor under-pruned', async () => {
    const result = await inNewObject((storage) => {
      const message = JSON.stringify({ text: '🙂é'.repeat(50) }); // 4 + 2 bytes per pair
      const streams = fresh(storage, { bytes: 3 * new TextEncoder().encode(message).length });
      const { stream } = streams.openRequestStream(1, ['1']);
      for (let i = 0; i < 5; i++) streams.emit(stream, message);
      return { stored: stored(storage.sql), size: new TextEncoder().encode(message).length };
    });
    expect(result.stored.events).toBe(3);
    expect(result.stored.bytes).toBe(3 * result.size);
  });
});

describe('one message', () => {
  // A message of `bytes` UTF-8 bytes: {"t":"…"} is 8, and each é 2.
  const sized = (bytes: number) => JSON.stringify({ t: 'é'.repeat(50) + 'x'.repeat(bytes - 108) });

  it('is stored up to MAX_MESSAGE_BYTES, and refused one byte past it with nothing stored or changed', async () => {
    const result = await inNewObject((storage) => {
      const streams = fresh(storage);
      const { stream } = streams.openRequestStream(1, ['1']);
      const atLimit = sized(MAX_MESSAGE_BYTES);
      streams.emit(stream, atLimit);
      const before = stored(storage.sql);
      let refused: unknown;
      try {
        streams.emit(stream, sized(MAX_MESSAGE_BYTES + 1), '1');
      } catch (error) {
        refused = error;
      }
      const after = stored(storage.sql);
      // The stream is still open and still numbered from where it was: the answer can follow.
      const answered = streams.emit(stream, '{"id":1,"result":{}}', '1');
      return {
        atLimit: new TextEncoder().encode(atLimit).length,
        before,
        refused,
        after,
        answered,
        open: streams.isOpen(stream),
        events: stored(storage.sql).events,
      };
    });
    expect(result.atLimit).toBe(MAX_MESSAGE_BYTES);
    expect(result.before).toEqual({ events: 1, bytes: MAX_MESSAGE_BYTES });
    expect(result.refused).toBeInstanceOf(MessageTooLargeError);
    expect(result.refused).toMatchObject({
      bytes: MAX_MESSAGE_BYTES + 1,
      limit: MAX_MESSAGE_BYTES,
      data: { reason: 'message_too_large', bytes: MAX_MESSAGE_BYTES + 1, limit: MAX_MESSAGE_BYTES },
    });
    expect(result.after).toEqual(result.before);
    expect(result).toMatchObject({ answered: true, open: false, events: 2 });
  });
});
