/**
 * An event type's log, as stored (src/events/event-log-store.ts; docs/events.md, *The log*): an
 * emit returns only after its occurrence is stored; an author's `eventId` deduplicates ("the
 * server SHOULD use that value as eventId"); an emit the author got wrong throws EventEmitError
 * and stores nothing; and what the log costs in rows written, read from its object's own SQLite
 * connection (`total_changes()`: every row inserted, updated or deleted since it opened) — one
 * row per occurrence emitted, none per poll, empty or not.
 *
 * `demo.polled` is this file's alone: nothing else emits into it or polls it.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { EventEmitError, MAX_EVENT_DATA_BYTES, MAX_EVENT_ID_LENGTH } from '../../src/events/event-type.ts';
import { logObjectName } from '../../src/events/event-logs.ts';
import { noteEvents, polledEvents } from '../fixture-server/note-events.ts';
import { cursorFields, polled, postNote, token } from '../support/events-http.ts';

const polledLog = () => env.MCP_EVENTS.get(env.MCP_EVENTS.idFromName(logObjectName({ type: 'demo.polled', partition: '' })));

/** Rows the demo.polled log's object has written since it opened. */
const rowsWritten = () =>
  runInDurableObject(polledLog(), (_instance, state) => state.storage.sql.exec<{ n: number }>('SELECT total_changes() AS n').one().n);

/** The demo.polled log's head, as a fresh poll's cursor names it. */
const head = async () => cursorFields((await polled({ name: 'demo.polled', cursor: null })).cursor).next;

describe('emit and deduplication', () => {
  it('emit returns after the occurrence is stored: a poll right after it delivers it', async () => {
    const { cursor } = await polled({ name: 'demo.polled', cursor: null });
    const value = token();
    const emitted = await polledEvents.emit(env.MCP_EVENTS, { data: { value } });
    expect(emitted).toMatchObject({ duplicate: false, seq: cursorFields(cursor).next });
    const { events } = await polled({ name: 'demo.polled', cursor });
    expect(events).toEqual([{ eventId: emitted.eventId, name: 'demo.polled', timestamp: emitted.timestamp, data: { value } }]);
  });

  it('post_note with the same eventId twice: one occurrence; the second answer duplicate: true with the same seq (SEP: "Stable identifier for deduplication")', async () => {
    const tok = token();
    const eventId = `upstream-${tok}`;
    const { cursor } = await polled({ name: 'demo.note', arguments: { contains: tok }, cursor: null });
    const first = await postNote(`${tok} once`, eventId);
    const second = await postNote(`${tok} twice`, eventId);
    expect(first).toMatchObject({ eventId, duplicate: false });
    expect(second).toMatchObject({ eventId, duplicate: true, seq: first.seq, timestamp: first.timestamp });
    const { events } = await polled({ name: 'demo.note', arguments: { contains: tok }, cursor });
    expect(events.map((e) => [e.eventId, e.data.text])).toEqual([[eventId, `${tok} once`]]);
  });

  it("the author's eventId and timestamp are the occurrence's; without them, generated ids are distinct and the time is the store time", async () => {
    const { cursor } = await polled({ name: 'demo.polled', cursor: null });
    const authored = { eventId: `gmail-${token()}`, timestamp: '2026-01-02T03:04:05.000Z' };
    await polledEvents.emit(env.MCP_EVENTS, { data: { value: 'authored' }, ...authored });
    const a = await polledEvents.emit(env.MCP_EVENTS, { data: { value: 'generated' } });
    const b = await polledEvents.emit(env.MCP_EVENTS, { data: { value: 'generated' } });
    expect(a.eventId).not.toBe(b.eventId);
    expect(b.duplicate).toBe(false);
    const { events } = await polled({ name: 'demo.polled', cursor });
    expect(events.map(({ eventId, timestamp }) => ({ eventId, timestamp }))).toEqual([
      authored,
      { eventId: a.eventId, timestamp: a.timestamp },
      { eventId: b.eventId, timestamp: b.timestamp },
    ]);
  });

  it.each([
    { name: 'a payload failing payloadSchema', emission: { data: { value: 5 } }, says: 'does not match payloadSchema' },
    { name: 'a payload missing a required member', emission: { data: {} }, says: 'does not match payloadSchema' },
    {
      name: `a payload over MAX_EVENT_DATA_BYTES (${MAX_EVENT_DATA_BYTES}) as JSON`,
      emission: { data: { value: 'x'.repeat(MAX_EVENT_DATA_BYTES) } },
      says: `over ${MAX_EVENT_DATA_BYTES} bytes`,
    },
    { name: 'an empty eventId', emission: { data: { value: 'v' }, eventId: '' }, says: 'eventId is 1 to' },
    {
      name: `an eventId over ${MAX_EVENT_ID_LENGTH} characters`,
      emission: { data: { value: 'v' }, eventId: 'e'.repeat(MAX_EVENT_ID_LENGTH + 1) },
      says: 'eventId is 1 to',
    },
    { name: 'a timestamp that is no date', emission: { data: { value: 'v' }, timestamp: 'yesterday' }, says: 'timestamp is an ISO 8601' },
  ])('$name: EventEmitError, naming the type, and nothing stored', async ({ emission, says }) => {
    const before = await head();
    const emitted = polledEvents.emit(env.MCP_EVENTS, emission as never);
    await expect(emitted).rejects.toThrow(EventEmitError);
    await expect(emitted).rejects.toThrow(new RegExp(`^event type demo\\.polled: .*${says.replace(/[.()]/g, '\\$&')}`));
    expect(await head()).toBe(before);
  });

  it('a payload at exactly the limit is stored (the bound is on the JSON as stored)', async () => {
    const overhead = JSON.stringify({ text: '', n: 0 }).length;
    const text = `${token()} `.padEnd(MAX_EVENT_DATA_BYTES - overhead, 'x');
    const emitted = await noteEvents.emit(env.MCP_EVENTS, { data: { text, n: 0 } });
    expect(emitted.duplicate).toBe(false);
    await expect(noteEvents.emit(env.MCP_EVENTS, { data: { text: `${text}x`, n: 0 } })).rejects.toThrow(EventEmitError);
  });
});

describe('rows written (docs/events.md, *Cost*): one per occurrence, none per poll', () => {
  it('an empty poll writes 0 rows, with or without a cursor; a poll that delivers writes 0 rows', async () => {
    // The first poll of a log that never existed creates it (its record: once in the log's life).
    const { cursor } = await polled({ name: 'demo.polled', cursor: null });
    const before = await rowsWritten();
    const empty = await polled({ name: 'demo.polled', cursor });
    expect(empty.events).toEqual([]);
    await polled({ name: 'demo.polled', cursor: null });
    await polled({ name: 'demo.polled', cursor: empty.cursor, maxAgeMs: 1_000 });
    expect(await rowsWritten()).toBe(before);

    await polledEvents.emit(env.MCP_EVENTS, { data: { value: 'read me' } });
    const written = await rowsWritten();
    const read = await polled({ name: 'demo.polled', cursor });
    expect(read.events.map((e) => e.data.value)).toEqual(['read me']);
    expect(await rowsWritten()).toBe(written);
  });

  it('each occurrence emitted writes one row; a duplicate writes none', async () => {
    await polledEvents.emit(env.MCP_EVENTS, { data: { value: 'warm' } });
    const before = await rowsWritten();
    const id = `dup-${token()}`;
    for (let i = 0; i < 5; i++) await polledEvents.emit(env.MCP_EVENTS, { data: { value: `row ${i}` } });
    await polledEvents.emit(env.MCP_EVENTS, { data: { value: 'authored' }, eventId: id });
    expect(await rowsWritten()).toBe(before + 6);
    const again = await polledEvents.emit(env.MCP_EVENTS, { data: { value: 'authored' }, eventId: id });
    expect(again.duplicate).toBe(true);
    expect(await rowsWritten()).toBe(before + 6);
  });
});
