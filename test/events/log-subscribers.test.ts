/**
 * An event log's webhook subscribers (src/events/log-subscribers.ts, the log's side of
 * docs/events.md, *Webhooks*), through the real `McpEventLog` object and its SQLite: `addSubscriber` decides
 * where a subscription starts exactly as `read` decides where a poll starts, for the same cursor,
 * and writes the subscriber's row in that turn; it is idempotent and bounded
 * (MAX_WEBHOOKS_PER_LOG); `removeSubscriber` drops the row.
 *
 * The pokes (docs/events.md, *Webhooks*, how occurrences arrive): a subscriber is poked after an append with the occurrences it has not
 * confirmed, at most one poke in flight (appends meanwhile ride the next one), `gone` drops its
 * row, and the fan-out check alarm re-pokes what a restart lost. The subscriber here is the
 * fixture's PokeRecorder (test/fixture-server/poke-recorder.ts), told how to answer.
 *
 * Each test has a log of its own (a type name nothing else uses), called by RPC as the library
 * calls it (event-logs.ts `eventLog`).
 */
import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import type { EventCursor } from '../../src/core/event-cursor.ts';
import { MAX_WEBHOOKS_PER_LOG } from '../../src/events/event-log-object.ts';
import { eventLog, type EventLogStub, logObjectName } from '../../src/events/event-logs.ts';
import type { LogName } from '../../src/events/event-log-store.ts';
import type { RecorderMode } from '../fixture-server/poke-recorder.ts';

/** Keeps 8 (deletes once it holds 9): a cursor below the earliest kept is easy to make. */
const retention = { maxAgeMs: 3_600_000, maxCount: 8 };

function freshLog(): { name: LogName; log: EventLogStub; object: DurableObjectStub } {
  const name = { type: `test.subscribers.${crypto.randomUUID()}`, partition: '' };
  return {
    name,
    log: eventLog(env.MCP_EVENTS, name),
    object: freshStub(name),
  };
}

/** A stub of the log's object (a new one after abortAllDurableObjects: the old ones are broken). */
const freshStub = (name: LogName) => env.MCP_EVENTS.get(env.MCP_EVENTS.idFromName(logObjectName(name))) as unknown as DurableObjectStub;

const subscriber = (id = `sub_${crypto.randomUUID()}`) => ({ id, binding: 'MCP_POKE_RECORDER' });

async function appendN(log: EventLogStub, name: LogName, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await log.append(name, retention, { data: JSON.stringify({ i }) });
}

/** The subscriber rows, read from the object's own SQLite (none when the table was never made). */
const subscriberRows = (object: DurableObjectStub) =>
  runInDurableObject(object, (_instance, state) => {
    const exists = state.storage.sql.exec(`SELECT 1 FROM sqlite_master WHERE name = 'webhook_subscriber'`).toArray().length > 0;
    return exists
      ? state.storage.sql.exec<{ id: string; binding: string }>('SELECT id, binding FROM webhook_subscriber ORDER BY id').toArray()
      : [];
  });

describe('addSubscriber decides as read does', () => {
  /** The log holds seqs 4..11 (12 appended, 8 kept) when each cursor is asked. */
  const cursors: { name: string; cursor: (logId: string, name: LogName) => EventCursor | null; kind: string; maxAgeMs?: number }[] = [
    { name: 'no cursor: from now', cursor: () => null, kind: 'from_now' },
    { name: 'a kept position: continue', cursor: (logId, name) => ({ ...name, logId, next: 6 }), kind: 'continue' },
    { name: 'at the head: continue, nothing owed', cursor: (logId, name) => ({ ...name, logId, next: 12 }), kind: 'continue' },
    { name: 'below the earliest kept: truncated (retention)', cursor: (logId, name) => ({ ...name, logId, next: 1 }), kind: 'truncated' },
    {
      name: 'an earlier generation: truncated (log_reset)',
      cursor: (_logId, name) => ({ ...name, logId: 'old', next: 3 }),
      kind: 'truncated',
    },
    {
      name: 'a maxAgeMs floor above every kept occurrence: truncated (max_age)',
      cursor: (logId, name) => ({ ...name, logId, next: 5 }),
      kind: 'truncated',
      maxAgeMs: -3_600_000,
    },
    { name: 'past the head: refused (cursor_ahead)', cursor: (logId, name) => ({ ...name, logId, next: 13 }), kind: 'refused' },
    { name: 'another type: refused', cursor: (logId) => ({ type: 'demo.other', partition: '', logId, next: 5 }), kind: 'refused' },
    { name: 'another partition: refused', cursor: (logId, name) => ({ ...name, partition: 'p', logId, next: 5 }), kind: 'refused' },
  ];

  it.each(cursors)('$name', async ({ cursor, kind, maxAgeMs }) => {
    const { name, log, object } = freshLog();
    await appendN(log, name, 12);
    const { logId } = await log.read({ ...name, retention, cursor: null, limit: 1, maxBytes: 1 });
    const given = cursor(logId, name);
    const read = await log.read({ ...name, retention, cursor: given, maxAgeMs, limit: 1, maxBytes: 1 });
    const sub = subscriber();
    const added = await log.addSubscriber({ ...name, retention, subscriber: sub, cursor: given, maxAgeMs });
    expect(read.decision.kind).toBe(kind);
    if (read.decision.kind === 'refused') {
      expect(added).toEqual({ refusal: read.decision.invalid });
      expect(await subscriberRows(object)).toEqual([]);
    } else {
      expect(added).toEqual({ logId, nextSeq: 12, earliestSeq: 4, decision: read.decision });
      expect(await subscriberRows(object)).toEqual([sub]);
    }
  });
});

describe('the subscriber rows', () => {
  it('addSubscriber is idempotent: one row, its binding kept; each call answers a decision', async () => {
    const { name, log, object } = freshLog();
    const sub = subscriber();
    const first = await log.addSubscriber({ ...name, retention, subscriber: sub, cursor: null });
    await appendN(log, name, 2);
    const again = await log.addSubscriber({ ...name, retention, subscriber: { ...sub, binding: 'ELSEWHERE' }, cursor: null });
    expect(first).toMatchObject({ nextSeq: 0, decision: { kind: 'from_now', fromSeq: 0 } });
    expect(again).toMatchObject({ nextSeq: 2, decision: { kind: 'from_now', fromSeq: 2 } });
    expect(await subscriberRows(object)).toEqual([sub]);
  });

  it(`at MAX_WEBHOOKS_PER_LOG (${MAX_WEBHOOKS_PER_LOG}) a new id is refused ResourceExhausted {limit: "webhooks_per_log", max}; one already there is kept`, async () => {
    const { name, log, object } = freshLog();
    const first = subscriber('sub_first');
    await log.addSubscriber({ ...name, retention, subscriber: first, cursor: null });
    // The rest written straight into the table, then read by a fresh instance (the rows are read once per wake, so the object is restarted).
    await runInDurableObject(object, (_instance, state) => {
      for (let i = 1; i < MAX_WEBHOOKS_PER_LOG - 1; i++) {
        state.storage.sql.exec('INSERT INTO webhook_subscriber (id, binding) VALUES (?, ?)', `sub_${String(i).padStart(4, '0')}`, 'B');
      }
    });
    await abortAllDurableObjects();
    const reopened = eventLog(env.MCP_EVENTS, name);
    const last = await reopened.addSubscriber({ ...name, retention, subscriber: subscriber('sub_last'), cursor: null });
    const over = await reopened.addSubscriber({ ...name, retention, subscriber: subscriber('sub_over'), cursor: null });
    const kept = await reopened.addSubscriber({ ...name, retention, subscriber: first, cursor: null });
    expect(last).toMatchObject({ decision: { kind: 'from_now' } });
    expect(over).toEqual({
      refusal: {
        code: -32025,
        message: expect.stringContaining(`${MAX_WEBHOOKS_PER_LOG}`),
        data: { limit: 'webhooks_per_log', max: MAX_WEBHOOKS_PER_LOG },
      },
    });
    expect(kept).toMatchObject({ decision: { kind: 'from_now' } });
    const rows = await subscriberRows(freshStub(name));
    expect(rows).toHaveLength(MAX_WEBHOOKS_PER_LOG);
    expect(rows.some((row) => row.id === 'sub_over')).toBe(false);
  });

  it('removeSubscriber drops the row, and is idempotent; the id may join again', async () => {
    const { name, log, object } = freshLog();
    const a = subscriber('sub_a');
    const b = subscriber('sub_b');
    await log.addSubscriber({ ...name, retention, subscriber: a, cursor: null });
    await log.addSubscriber({ ...name, retention, subscriber: b, cursor: null });
    await log.removeSubscriber(name, a.id);
    await log.removeSubscriber(name, a.id);
    expect(await subscriberRows(object)).toEqual([b]);
    await log.addSubscriber({ ...name, retention, subscriber: a, cursor: null });
    expect(await subscriberRows(object)).toEqual([a, b]);
  });

  it('a log without subscribers has no subscriber table: removeSubscriber on it writes nothing', async () => {
    const { name, log, object } = freshLog();
    await appendN(log, name, 1);
    await log.removeSubscriber(name, 'sub_never');
    const tables = await runInDurableObject(object, (_instance, state) =>
      state.storage.sql
        .exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'webhook_subscriber'`)
        .toArray(),
    );
    expect(tables).toEqual([]);
  });
});

/** The recorder standing in for subscription `id`'s object (a fresh stub: old ones break at abortAllDurableObjects). */
const recorder = (id: string) => env.MCP_POKE_RECORDER.get(env.MCP_POKE_RECORDER.idFromName(id));

/** Waits (bounded) until the recorder of `id` holds `n` pokes, and answers them. */
async function pokesOf(id: string, n: number) {
  return vi.waitFor(
    async () => {
      const pokes = await recorder(id).pokes();
      if (pokes.length < n) throw new Error(`${pokes.length} pokes of ${n}`);
      return pokes;
    },
    { timeout: 5_000, interval: 10 },
  );
}

async function subscribed(mode: RecorderMode = 'processed') {
  const { name, log, object } = freshLog();
  const sub = subscriber();
  await recorder(sub.id).answer(mode);
  const added = await log.addSubscriber({ ...name, retention, subscriber: sub, cursor: null });
  if ('refusal' in added) throw new Error('refused');
  return { name, log, object, sub, logId: added.logId };
}

describe('pokes', () => {
  it('an append pokes the subscriber with exactly that occurrence, the head after it, and the earliest kept', async () => {
    const { name, log, sub, logId } = await subscribed();
    const appended = await log.append(name, retention, { data: '{"n":1}' });
    const [poke, ...more] = await pokesOf(sub.id, 1);
    expect(more).toEqual([]);
    expect(poke).toEqual({
      logId,
      head: 1,
      earliestSeq: 0,
      occurrences: [{ seq: 0, storedAt: appended.storedAt, eventId: appended.eventId, timestamp: appended.timestamp, data: '{"n":1}' }],
    });
  });

  it('while a poke is held, N appends: after its release exactly one more poke, carrying the N (coalescing)', async () => {
    const { name, log, sub } = await subscribed('hold');
    await log.append(name, retention, { data: '"first"' });
    await vi.waitFor(async () => expect(await recorder(sub.id).heldCount()).toBe(1), { timeout: 5_000, interval: 10 });
    for (const data of ['"a"', '"b"', '"c"']) await log.append(name, retention, { data });
    expect(await recorder(sub.id).pokes()).toHaveLength(1);
    await recorder(sub.id).release();
    const pokes = await pokesOf(sub.id, 2);
    expect(pokes[1]).toMatchObject({ head: 4 });
    expect(pokes[1]!.occurrences!.map((o) => [o.seq, o.data])).toEqual([
      [1, '"a"'],
      [2, '"b"'],
      [3, '"c"'],
    ]);
    // Confirmed to 4: the next append's poke carries only its own occurrence.
    await log.append(name, retention, { data: '"d"' });
    const after = await pokesOf(sub.id, 3);
    expect(after).toHaveLength(3);
    expect(after[2]!.occurrences!.map((o) => o.seq)).toEqual([4]);
  });

  it('a poke answered gone drops the subscriber row: the next append pokes nobody', async () => {
    const { name, log, object, sub } = await subscribed('gone');
    await log.append(name, retention, { data: '1' });
    await pokesOf(sub.id, 1);
    await vi.waitFor(async () => expect(await subscriberRows(object)).toEqual([]), { timeout: 5_000, interval: 10 });
    await recorder(sub.id).answer('processed');
    await log.append(name, retention, { data: '2' });
    await log.read({ ...name, retention, cursor: null, limit: 1, maxBytes: 1 }); // a round trip after the append's turn
    expect(await recorder(sub.id).pokes()).toHaveLength(1);
  });

  it('a poke that throws is not confirmed: the check alarm pokes again, up to the head', async () => {
    const { name, log, object, sub } = await subscribed('throw');
    await log.append(name, retention, { data: '1' });
    await pokesOf(sub.id, 1);
    await recorder(sub.id).answer('processed');
    expect(await runDurableObjectAlarm(object)).toBe(true);
    const pokes = await pokesOf(sub.id, 2);
    expect(pokes[1]).toMatchObject({ head: 1 });
  });

  it('after a restart of both sides mid-poke, the check alarm re-pokes the unconfirmed subscriber (without occurrences), then goes back to the sweep', async () => {
    const { name, log, sub, logId } = await subscribed('hold');
    await log.append(name, retention, { data: '1' });
    await vi.waitFor(async () => expect(await recorder(sub.id).heldCount()).toBe(1), { timeout: 5_000, interval: 10 });
    await abortAllDurableObjects();
    const fresh = freshStub(name);
    const checkAt = await runInDurableObject(fresh, (_instance, state) => state.storage.getAlarm());
    expect(checkAt).not.toBeNull();
    expect(await runDurableObjectAlarm(fresh)).toBe(true);
    const pokes = await recorder(sub.id).pokes(); // the fresh recorder's: the alarm waited for its answer
    expect(pokes).toEqual([{ logId, head: 1, earliestSeq: 0 }]);
    const next = await runInDurableObject(freshStub(name), (_instance, state) => state.storage.getAlarm());
    // Confirmed: no further check; the sweep's time (the occurrence's age limit, an hour away).
    expect(next).toBeGreaterThan(checkAt! + 60_000);
  });

  it('a reset keeps the subscribers: the next poke carries the new log id', async () => {
    const { name, log, sub, logId } = await subscribed();
    await log.append(name, retention, { data: '1' });
    await pokesOf(sub.id, 1);
    const newLogId = await log.reset(name, retention);
    await log.append(name, retention, { data: '2' });
    const pokes = await pokesOf(sub.id, 2);
    expect(newLogId).not.toBe(logId);
    expect(pokes[1]).toEqual({ logId: newLogId, head: 1, earliestSeq: 0 });
  });

  it('rows written by appends with a subscriber: 1 per occurrence, and the check alarm set once for the window, not per append', async () => {
    const { name, log, object, sub } = await subscribed();
    await log.append(name, retention, { data: '0' });
    await pokesOf(sub.id, 1);
    await runDurableObjectAlarm(object); // confirmed: the alarm goes back to the sweep's time
    const before = await runInDurableObject(object, (_instance, state) => {
      const count = { alarms: 0 };
      const setAlarm = state.storage.setAlarm.bind(state.storage);
      state.storage.setAlarm = (...args: Parameters<typeof setAlarm>) => {
        count.alarms++;
        return setAlarm(...args);
      };
      (globalThis as { alarmCount?: typeof count }).alarmCount = count;
      return state.storage.sql.exec<{ n: number }>('SELECT total_changes() AS n').one().n;
    });
    for (let i = 1; i <= 5; i++) await log.append(name, retention, { data: `${i}` });
    const after = await runInDurableObject(object, (_instance, state) => ({
      rows: state.storage.sql.exec<{ n: number }>('SELECT total_changes() AS n').one().n,
      alarms: (globalThis as { alarmCount?: { alarms: number } }).alarmCount?.alarms,
    }));
    // The alarm is a row of the object's SQLite too (workerd counts it in total_changes()).
    expect(after).toEqual({ rows: before + 5 + 1, alarms: 1 });
  });
});
