/**
 * `events/poll`, served (SEP-3415, *Poll*; docs/events.md): "start from now", the `maxEvents`
 * cap with `hasMore` and an intermediate cursor, arguments that select occurrences (the fixture's
 * `contains`) and a cursor that passes what they did not select, every answer a 2026-07-28 result
 * with `nextPollMs`. Which cursors continue, truncate or are refused is cursors.test.ts's.
 *
 * `demo.other` is emitted into by this file alone, so its pages are exact.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { otherEvents } from '../fixture-server/note-events.ts';
import { cursorFields, type PollResult, poll, polled, postNote, token } from '../support/events-http.ts';

/** "Every result this extension defines is a standard Result and carries resultType: "complete"", and a poll's suggests `nextPollMs`. */
function expectPollResult(result: PollResult): void {
  expect(result).toMatchObject({
    resultType: 'complete',
    events: expect.any(Array),
    cursor: expect.any(String),
    truncated: expect.any(Boolean),
    hasMore: expect.any(Boolean),
    nextPollMs: expect.any(Number),
  });
  expect(result.nextPollMs).toBeGreaterThan(0);
}

describe('events/poll', () => {
  it('"null means start from now: the server returns no events and a fresh cursor", at the head: what follows it is delivered', async () => {
    const tok = token();
    await postNote(`${tok} before`);
    const first = await polled({ name: 'demo.note', arguments: { contains: tok }, cursor: null });
    expectPollResult(first);
    expect({ events: first.events, truncated: first.truncated, hasMore: first.hasMore }).toEqual({
      events: [],
      truncated: false,
      hasMore: false,
    });
    const after = await postNote(`${tok} after`);
    expect(cursorFields(first.cursor).next).toBeLessThanOrEqual(after.seq);
    const next = await polled({ name: 'demo.note', arguments: { contains: tok }, cursor: first.cursor });
    expect(next.events.map((e) => e.data.text)).toEqual([`${tok} after`]);
  });

  it('"An absent cursor field MUST be treated identically to an explicit cursor: null"; absent arguments are {}', async () => {
    const tok = token();
    await postNote(`${tok} before`);
    const absent = await polled({ name: 'demo.note' });
    expectPollResult(absent);
    expect({ events: absent.events, truncated: absent.truncated }).toEqual({ events: [], truncated: false });
  });

  it('"maxAgeMs is ignored when cursor is null": still from now, nothing replayed', async () => {
    const tok = token();
    await postNote(`${tok} recent`);
    const result = await polled({ name: 'demo.note', arguments: { contains: tok }, cursor: null, maxAgeMs: 3_600_000 });
    expect({ events: result.events, truncated: result.truncated }).toEqual({ events: [], truncated: false });
  });

  it('"If more events are available than the cap, the server returns a partial batch with an intermediate cursor and sets hasMore: true"', async () => {
    const { cursor } = await polled({ name: 'demo.other', cursor: null });
    const values = ['a', 'b', 'c', 'd', 'e'].map((v) => `${token()} ${v}`);
    for (const value of values) await otherEvents.emit(env.MCP_EVENTS, { data: { value } });
    const pages: PollResult[] = [];
    let at = cursor;
    for (let i = 0; i < 3; i++) {
      const page = await polled({ name: 'demo.other', cursor: at, maxEvents: 2 });
      expectPollResult(page);
      pages.push(page);
      at = page.cursor;
    }
    expect(pages.map((page) => [page.events.map((e) => e.data.value), page.hasMore])).toEqual([
      [values.slice(0, 2), true],
      [values.slice(2, 4), true],
      [values.slice(4), false],
    ]);
    // Each intermediate cursor is right after its page's last occurrence.
    expect(pages.map((page) => cursorFields(page.cursor).next - cursorFields(cursor).next)).toEqual([2, 4, 5]);
    expect(pages.every((page) => !page.truncated)).toBe(true);
  });

  it('arguments select occurrences (contains), and the cursor passes the ones they did not: a later poll sees none of them', async () => {
    const tok = token();
    const { cursor } = await polled({ name: 'demo.note', arguments: { contains: `${tok} apple` }, cursor: null });
    const apple = await postNote(`${tok} apple`);
    const pear = await postNote(`${tok} pear`);
    const pie = await postNote(`${tok} apple pie`);
    const last = await postNote(`${tok} pear again`);
    const selected = await polled({ name: 'demo.note', arguments: { contains: `${tok} apple` }, cursor });
    expect(selected.events.map((e) => e.eventId)).toEqual([apple.eventId, pie.eventId]);
    // Checked up to the head it read: past the pears too, which this subscription never receives.
    expect(cursorFields(selected.cursor).next).toBeGreaterThan(last.seq);
    const everything = await polled({ name: 'demo.note', arguments: { contains: tok }, cursor: selected.cursor });
    expect(everything.events).toEqual([]);
    // The same position read with other arguments: the pears were before it, so not delivered either.
    expect(pear.seq).toBeLessThan(cursorFields(selected.cursor).next);
  });

  it('an occurrence as polled: eventId, name, timestamp (ISO 8601) and data; no per-event cursor ("poll carries the cursor at the response level")', async () => {
    const tok = token();
    const { cursor } = await polled({ name: 'demo.note', arguments: { contains: tok }, cursor: null });
    const posted = await postNote(`${tok} shape`);
    const { events } = await polled({ name: 'demo.note', arguments: { contains: tok }, cursor });
    expect(events).toEqual([
      { eventId: posted.eventId, name: 'demo.note', timestamp: posted.timestamp, data: { text: `${tok} shape`, n: expect.any(Number) } },
    ]);
    expect(new Date(events[0]!.timestamp).toISOString()).toBe(events[0]!.timestamp);
  });

  it('a poll holds nothing on the server: the same cursor polled twice answers the same', async () => {
    const tok = token();
    const { cursor } = await polled({ name: 'demo.note', arguments: { contains: tok }, cursor: null });
    await postNote(`${tok} one`);
    await postNote(`${tok} two`);
    const first = await poll({ name: 'demo.note', arguments: { contains: tok }, cursor });
    const second = await poll({ name: 'demo.note', arguments: { contains: tok }, cursor });
    expect(second.result.events).toEqual(first.result.events);
    expect(first.result.events).toHaveLength(2);
  });
});
