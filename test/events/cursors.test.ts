/**
 * Cursors, served (SEP-3415, *Cursor Lifecycle*; docs/events.md, *Where delivery starts* and
 * *Choices* 1 to 7): every kind of cursor a client can bring to `events/poll` and `events/stream`
 * of the fixture, each with its answer — continue, `truncated: true` with a fresh cursor, or a
 * -32602 refusal with its reason — and, whatever the answer, no occurrence of another log spliced
 * in: a refusal delivers nothing, and a truncated answer reads only the log its fresh cursor names.
 * The pure table is test/core/event-cursor.test.ts; this file holds it in real workerd, over the
 * log objects' real storage.
 *
 * `demo.tiny` (keeps 3) is this file's alone: its tests reset its log and emit into it in turn.
 */
import { createExecutionContext, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { importCursorKey, mintCursor, type EventCursor } from '../../src/core/event-cursor.ts';
import { EventsNotification } from '../../src/core/events-wire.ts';
import { DEVELOPMENT_CURSOR_KEY } from '../../src/events/cursor-keys.ts';
import { logObjectName, resetEventLog } from '../../src/events/event-logs.ts';
import fixture from '../fixture-server/index.ts';
import { tinyEvents } from '../fixture-server/note-events.ts';
import { activeStream, cursorFields, EVENTS, poll, polled, postNote, refusedStream, seqOf, token } from '../support/events-http.ts';
import { answerOf, modernRequestOf } from '../support/modern-http.ts';

const developmentKeys = async () => ({ current: await importCursorKey(DEVELOPMENT_CURSOR_KEY) });

/** A base64url string with one character changed (the first: every bit of it is used, so the spelling stays canonical). */
function altered(text: string): string {
  return (text[0] === 'A' ? 'B' : 'A') + text.slice(1);
}

/** The cursor with its position rewritten and its MAC kept: what a client rewinding by hand would send. */
function rewound(cursor: string, next: number): string {
  const [payload, mac] = cursor.split('.') as [string, string];
  const fields = JSON.parse(atob(payload.replaceAll('-', '+').replaceAll('_', '/'))) as unknown[];
  fields[4] = next;
  const rewritten = btoa(JSON.stringify(fields)).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
  return `${rewritten}.${mac}`;
}

const tinyLog = () => env.MCP_EVENTS.get(env.MCP_EVENTS.idFromName(logObjectName({ type: 'demo.tiny', partition: '' })));

/** The lowest seq demo.tiny's log keeps, and how many it keeps, read in its object. */
function tinyKept(): Promise<{ earliest: number; count: number }> {
  return runInDurableObject(tinyLog(), (_instance, state) => {
    const row = state.storage.sql
      .exec<{ earliest: number; count: number }>('SELECT min(seq) AS earliest, count(*) AS count FROM occurrence')
      .one();
    return { earliest: row.earliest, count: row.count };
  });
}

/** demo.tiny's log, reset (a new log id, nothing kept), then `n` occurrences emitted, `n` 0, 1, …: its cursor from before them. */
async function freshTiny(n: number): Promise<{ start: string }> {
  await resetEventLog(env.MCP_EVENTS, tinyEvents);
  const { cursor } = await polled({ name: 'demo.tiny', cursor: null });
  for (let i = 0; i < n; i++) await tinyEvents.emit(env.MCP_EVENTS, { data: { n: i } });
  return { start: cursor };
}

describe('a cursor that is not a position of the subscription is refused -32602 with its reason, and nothing is delivered', () => {
  let note: string;
  let other: string;
  let noteLog: EventCursor;
  beforeAll(async () => {
    // At least one occurrence before the cursor, so that rewinding it to 0 changes it.
    await postNote(`${token()} so that the head is past 0`);
    note = (await polled({ name: 'demo.note', cursor: null })).cursor;
    other = (await polled({ name: 'demo.other', cursor: null })).cursor;
    noteLog = cursorFields(note);
    expect(noteLog.next).toBeGreaterThan(0);
  });

  // Each row: the cursor sent on a demo.note subscription, and the reason it is refused with.
  const rows: { name: string; cursor: () => Promise<unknown>; reason: string }[] = [
    { name: 'not a cursor at all (malformed)', cursor: async () => 'not-a-cursor', reason: 'malformed_cursor' },
    { name: 'an empty string (malformed)', cursor: async () => '', reason: 'malformed_cursor' },
    { name: 'not a string (malformed)', cursor: async () => 5, reason: 'malformed_cursor' },
    { name: 'longer than any cursor minted (malformed)', cursor: async () => `${note}${'A'.repeat(2_048)}`, reason: 'malformed_cursor' },
    { name: 'three parts (malformed)', cursor: async () => `${note}.AAAA`, reason: 'malformed_cursor' },
    {
      name: 'its MAC altered (forged)',
      cursor: async () => `${note.split('.')[0]}.${altered(note.split('.')[1]!)}`,
      reason: 'forged_cursor',
    },
    { name: 'its position rewound, MAC kept (forged)', cursor: async () => rewound(note, 0), reason: 'forged_cursor' },
    {
      name: 'minted under a key this server does not hold (forged)',
      cursor: async () => mintCursor({ ...noteLog, next: 0 }, { current: await importCursorKey('another server key, 32 bytes or more') }),
      reason: 'forged_cursor',
    },
    { name: "another event type's (demo.other)", cursor: async () => other, reason: 'cursor_other_type' },
    {
      name: "another partition's of the same type",
      cursor: async () => mintCursor({ ...noteLog, partition: 'elsewhere' }, await developmentKeys()),
      reason: 'cursor_other_log',
    },
    {
      name: "past the log's head (a position this log never issued)",
      cursor: async () => mintCursor({ ...noteLog, next: noteLog.next + 1_000_000 }, await developmentKeys()),
      reason: 'cursor_ahead',
    },
  ];

  it.each(rows)('events/poll, $name: $reason', async ({ cursor, reason }) => {
    const answer = await poll({ name: 'demo.note', arguments: {}, cursor: await cursor() });
    expect(answer.result).toBeUndefined();
    expect(answer.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^InvalidParams: /), data: { reason } });
  });

  it.each(rows)(
    'events/stream, $name: $reason, "responds immediately with a JSON-RPC error and no stream is opened"',
    async ({ cursor, reason }) => {
      const error = await refusedStream({ name: 'demo.note', arguments: {}, cursor: await cursor() });
      expect(error).toMatchObject({ code: -32602, data: { reason } });
    },
  );

  it("a demo.note cursor on demo.other is refused too (cursor_other_type): neither log's positions are read against the other's", async () => {
    const answer = await poll({ name: 'demo.other', cursor: note });
    expect(answer.error).toMatchObject({ code: -32602, data: { reason: 'cursor_other_type' } });
    expect(await refusedStream({ name: 'demo.other', cursor: note })).toMatchObject({
      code: -32602,
      data: { reason: 'cursor_other_type' },
    });
  });
});

describe('a cursor this log issued is a continuation, or truncated with a fresh cursor — never a silent skip', () => {
  it('at the head: continue, nothing delivered, not truncated; the cursor stays where it was (poll and stream)', async () => {
    const tok = token();
    await postNote(`${tok} before`);
    const { cursor } = await polled({ name: 'demo.note', arguments: { contains: tok }, cursor: null });
    const again = await polled({ name: 'demo.note', arguments: { contains: tok }, cursor });
    expect({ events: again.events, truncated: again.truncated }).toEqual({ events: [], truncated: false });
    expect(cursorFields(again.cursor).logId).toBe(cursorFields(cursor).logId);
    expect(cursorFields(again.cursor).next).toBeGreaterThanOrEqual(cursorFields(cursor).next);

    const { stream, active } = await activeStream({ name: 'demo.note', arguments: { contains: tok }, cursor });
    try {
      expect(active.truncated).toBe(false);
      expect(cursorFields(active.cursor)).toEqual(cursorFields(cursor));
      // Nothing is due: the next message is a heartbeat.
      await stream.heartbeat();
    } finally {
      await stream.cancel();
    }
  });

  it('behind retention (demo.tiny keeps 3): truncated: true, from the earliest kept occurrence, with a fresh cursor (poll)', async () => {
    const { start } = await freshTiny(10);
    const kept = await tinyKept();
    // Retention applied as occurrences are stored: at most an eighth (here, 1) more than it keeps.
    expect(kept.count).toBeGreaterThanOrEqual(3);
    expect(kept.count).toBeLessThanOrEqual(4);
    expect(kept.earliest).toBeGreaterThan(cursorFields(start).next);

    const result = await polled({ name: 'demo.tiny', cursor: start });
    expect(result.truncated).toBe(true);
    expect(result.events.map((e) => e.data.n)).toEqual(Array.from({ length: kept.count }, (_, i) => kept.earliest + i));
    expect(seqOf(result.events[0]!.eventId)).toBe(kept.earliest);
    expect(cursorFields(result.cursor)).toEqual({ ...cursorFields(start), next: 10 });
    // The fresh cursor is a continuation: nothing more, nothing truncated.
    const next = await polled({ name: 'demo.tiny', cursor: result.cursor });
    expect({ events: next.events, truncated: next.truncated }).toEqual({ events: [], truncated: false });
  });

  it('behind retention, on a stream: the first notifications/events/active carries truncated: true and the cursor of the earliest kept', async () => {
    const { start } = await freshTiny(10);
    const kept = await tinyKept();
    const { stream, active } = await activeStream({ name: 'demo.tiny', cursor: start });
    try {
      expect(active.truncated).toBe(true);
      expect(cursorFields(active.cursor)).toEqual({ ...cursorFields(start), next: kept.earliest });
      const events = await stream.events(kept.count);
      expect(events.map((e) => e.data.n)).toEqual(Array.from({ length: kept.count }, (_, i) => kept.earliest + i));
      expect(cursorFields(events.at(-1)!.cursor!).next).toBe(10);
    } finally {
      await stream.cancel();
    }
  });

  it("from a reset log: truncated: true from the new log's start, with a cursor of the new log; the old seq is never read against it (poll)", async () => {
    const { start } = await freshTiny(1);
    const first = await polled({ name: 'demo.tiny', cursor: start });
    expect(first.events.map((e) => e.data.n)).toEqual([0]);
    const old = cursorFields(first.cursor);
    expect(old.next).toBe(1);

    await resetEventLog(env.MCP_EVENTS, tinyEvents);
    for (const n of [10, 11, 12]) await tinyEvents.emit(env.MCP_EVENTS, { data: { n } });
    const result = await polled({ name: 'demo.tiny', cursor: first.cursor });
    // Read against the new log, the old position (1) would skip n=10 and call it a continuation.
    expect(result.truncated).toBe(true);
    expect(result.events.map((e) => e.data.n)).toEqual([10, 11, 12]);
    const fresh = cursorFields(result.cursor);
    expect(fresh.logId).not.toBe(old.logId);
    expect(fresh.next).toBe(3);
  });

  it("from a reset log, on a stream: active truncated: true with the new log's cursor, then the new log from its start", async () => {
    const { start } = await freshTiny(2);
    const before = await polled({ name: 'demo.tiny', cursor: start });
    await resetEventLog(env.MCP_EVENTS, tinyEvents);
    await tinyEvents.emit(env.MCP_EVENTS, { data: { n: 20 } });
    const { stream, active } = await activeStream({ name: 'demo.tiny', cursor: before.cursor });
    try {
      expect(active.truncated).toBe(true);
      const fresh = cursorFields(active.cursor);
      expect(fresh.logId).not.toBe(cursorFields(before.cursor).logId);
      expect(fresh.next).toBe(0);
      expect((await stream.events(1)).map((e) => e.data.n)).toEqual([20]);
    } finally {
      await stream.cancel();
    }
  });

  it('a log reset while a stream is open: "a fresh notifications/events/active with truncated: true and a new cursor", then the new log', async () => {
    await freshTiny(0);
    const { stream, active } = await activeStream({ name: 'demo.tiny', cursor: null });
    try {
      await tinyEvents.emit(env.MCP_EVENTS, { data: { n: 1 } });
      expect((await stream.events(1)).map((e) => e.data.n)).toEqual([1]);
      await resetEventLog(env.MCP_EVENTS, tinyEvents);
      await tinyEvents.emit(env.MCP_EVENTS, { data: { n: 2 } });
      const restarted = await stream.notification();
      expect(restarted.method).toBe(EventsNotification.active);
      expect(restarted.params.truncated).toBe(true);
      expect(cursorFields(restarted.params.cursor).logId).not.toBe(cursorFields(active.cursor).logId);
      expect((await stream.events(1)).map((e) => e.data.n)).toEqual([2]);
    } finally {
      await stream.cancel();
    }
  });

  describe('maxAgeMs: "the server begins replay from whichever is later: the supplied cursor, or now − maxAgeMs"', () => {
    /** A cursor, then note A, then (500 ms later) note B: a maxAgeMs whose floor falls between them. */
    async function twoNotes() {
      const tok = token();
      const { cursor } = await polled({ name: 'demo.note', arguments: { contains: tok }, cursor: null });
      const a = await postNote(`${tok} A`);
      await scheduler.wait(500);
      const b = await postNote(`${tok} B`);
      // now − maxAgeMs lands 100 ms after A was stored: before B by 400 ms, less the request's own latency.
      const between = () => Date.now() - Date.parse(a.timestamp) - 100;
      return { tok, cursor, a, b, between };
    }

    it('"If the floor advances past the cursor, the server SHOULD set truncated: true": poll, from the floor', async () => {
      const { tok, cursor, b, between } = await twoNotes();
      const result = await polled({ name: 'demo.note', arguments: { contains: tok }, cursor, maxAgeMs: between() });
      expect(result.truncated).toBe(true);
      expect(result.events.map((e) => e.eventId)).toEqual([b.eventId]);
    });

    it('the same on a stream: active truncated: true, then what is past the floor', async () => {
      const { tok, cursor, b, between } = await twoNotes();
      const { stream, active } = await activeStream({ name: 'demo.note', arguments: { contains: tok }, cursor, maxAgeMs: between() });
      try {
        expect(active.truncated).toBe(true);
        expect(cursorFields(active.cursor).next).toBeGreaterThan(cursorFields(cursor).next);
        expect((await stream.events(1)).map((e) => e.eventId)).toEqual([b.eventId]);
      } finally {
        await stream.cancel();
      }
    });

    it('a floor before the cursor skips nothing: not truncated, everything after the cursor', async () => {
      const { tok, cursor, a, b } = await twoNotes();
      const result = await polled({ name: 'demo.note', arguments: { contains: tok }, cursor, maxAgeMs: 3_600_000 });
      expect(result.truncated).toBe(false);
      expect(result.events.map((e) => e.eventId)).toEqual([a.eventId, b.eventId]);
    });
  });
});

describe('the cursor is bound to the log, not to the delivery mode (docs/events.md choice 7)', () => {
  it("a poll's cursor resumes a stream, and a stream's event cursor resumes a poll: nothing lost, nothing twice", async () => {
    const tok = token();
    const args = { contains: tok };
    const { cursor } = await polled({ name: 'demo.note', arguments: args, cursor: null });
    const x = await postNote(`${tok} x`);
    const { stream, active } = await activeStream({ name: 'demo.note', arguments: args, cursor });
    let last: string;
    try {
      expect(active.truncated).toBe(false);
      const [fromPoll] = await stream.events(1);
      expect(fromPoll!.eventId).toBe(x.eventId);
      const y = await postNote(`${tok} y`);
      const [live] = await stream.events(1);
      expect(live!.eventId).toBe(y.eventId);
      last = live!.cursor!;
    } finally {
      await stream.cancel();
    }
    const z = await postNote(`${tok} z`);
    const resumed = await polled({ name: 'demo.note', arguments: args, cursor: last });
    expect({ events: resumed.events.map((e) => e.eventId), truncated: resumed.truncated }).toEqual({
      events: [z.eventId],
      truncated: false,
    });
  });
});

describe('the cursor key (docs/events.md choice 11): a cursor minted under the previous key is accepted while the key rotates', () => {
  const K1 = 'the first cursor key of this test, 32 bytes or more';
  const K2 = 'the second cursor key of this test, 32 bytes or more';
  /** The fixture under an environment of its own: a fresh Worker to it, as a deploy with these secrets would be. */
  const under = (secrets: Record<string, string>) => ({ ...env, ...secrets }) as unknown as Env;
  const pollUnder = async (environment: Env, cursor: string | null) =>
    answerOf(
      await fixture.fetch(
        modernRequestOf('events/poll', { name: 'demo.other', cursor }, EVENTS) as Request<unknown, IncomingRequestCfProperties>,
        environment,
        createExecutionContext(),
      ),
    );

  it('K1 → K2 with K1 as previous: K1 cursors continue; K2 alone: they are forged; the development key is not K1', async () => {
    const first = await pollUnder(under({ EVENTS_CURSOR_KEY: K1 }), null);
    expect(first.result.truncated).toBe(false);
    const k1Cursor: string = first.result.cursor;

    const rotating = await pollUnder(under({ EVENTS_CURSOR_KEY: K2, EVENTS_CURSOR_KEY_PREVIOUS: K1 }), k1Cursor);
    expect(rotating.error).toBeUndefined();
    expect(rotating.result.truncated).toBe(false);
    // Minted again under the current key: the same position, another seal.
    expect(cursorFields(rotating.result.cursor)).toEqual(cursorFields(k1Cursor));
    expect(rotating.result.cursor).not.toBe(k1Cursor);

    const rotated = await pollUnder(under({ EVENTS_CURSOR_KEY: K2 }), k1Cursor);
    expect(rotated.error).toMatchObject({ code: -32602, data: { reason: 'forged_cursor' } });
    expect((await poll({ name: 'demo.other', cursor: k1Cursor })).error).toMatchObject({ data: { reason: 'forged_cursor' } });
  });
});
