/**
 * `events/poll` on an upstream-backed type (src/events/upstream-poll.ts; docs/events.md,
 * *Upstream-backed types*), served by the fixture's `demo.upstream` over its in-memory upstream
 * (test/fixture-server/upstream-events.ts): from now, a continuation exactly after a cursor, the
 * arguments' selection, the author's `truncated` and `hasMore` passed through, `maxAgeMs`, every
 * cursor that is not a position of the subscription refused with its reason before the author's
 * `read` is called, and a read that throws or answers a page it may not — UpstreamError, the
 * upstream's words logged and never sent. Push is upstream-push.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import { importCursorKey, mintCursor, mintUpstreamCursor } from '../../src/core/event-cursor.ts';
import { UPSTREAM_ERROR } from '../../src/core/events-wire.ts';
import { DEVELOPMENT_CURSOR_KEY } from '../../src/events/cursor-keys.ts';
import { EventEmitError } from '../../src/events/event-type.ts';
import { upstreamEvents } from '../fixture-server/upstream-events.ts';
import { EVENTS, poll, polled, refusedStream } from '../support/events-http.ts';
import { captureLogLines } from '../support/log-lines.ts';
import { answerOf, modernRequest } from '../support/modern-http.ts';
import { driveFeed, feedName, upstreamAt, upstreamFields } from '../support/upstream-feed.ts';

const developmentKeys = async () => ({ current: await importCursorKey(DEVELOPMENT_CURSOR_KEY) });
const texts = (result: { events: { data: Record<string, unknown> }[] }) => result.events.map((e) => e.data.text);
const logLines = captureLogLines();

/** A feed with `before` notes already in it, and the cursor of a poll from now. */
async function feedFromNow(before: readonly string[] = []): Promise<{ feed: string; cursor: string }> {
  const feed = feedName();
  if (before.length > 0) await driveFeed(feed, { append: before });
  const { cursor } = await polled({ name: 'demo.upstream', arguments: { feed }, cursor: null });
  return { feed, cursor };
}

describe('events/poll on an upstream-backed type', () => {
  it('"cursor: null … start from now": no events, a fresh cursor at the upstream\'s head, sealed to the type and the feed; nextPollMs is the type\'s pollIntervalMs', async () => {
    const feed = feedName();
    await driveFeed(feed, { append: ['old 1', 'old 2'] });
    const result = await polled({ name: 'demo.upstream', arguments: { feed }, cursor: null });
    const { _meta, ...answered } = result as unknown as Record<string, unknown>;
    expect(answered).toEqual({
      resultType: 'complete',
      events: [],
      cursor: expect.any(String),
      truncated: false,
      hasMore: false,
      nextPollMs: 100,
    });
    expect(upstreamFields(result.cursor)).toEqual({ version: 2, type: 'demo.upstream', partition: feed, upstream: 'at:2' });
  });

  it("from a cursor: exactly the occurrences after it, in the upstream's order, with the upstream's ids and times; at the head, nothing and the same position", async () => {
    const { feed, cursor } = await feedFromNow(['before']);
    await driveFeed(feed, { append: ['a', 'b', 'c'] });
    const first = await polled({ name: 'demo.upstream', arguments: { feed }, cursor });
    expect(first.events).toEqual(
      ['a', 'b', 'c'].map((text, i) => ({
        eventId: `${feed}-${i + 1}`,
        name: 'demo.upstream',
        timestamp: expect.any(String),
        data: { text },
      })),
    );
    expect({ truncated: first.truncated, hasMore: first.hasMore, at: upstreamAt(first.cursor) }).toEqual({
      truncated: false,
      hasMore: false,
      at: 'at:4',
    });
    await driveFeed(feed, { append: ['d'] });
    const second = await polled({ name: 'demo.upstream', arguments: { feed }, cursor: first.cursor });
    expect(texts(second)).toEqual(['d']);
    const third = await polled({ name: 'demo.upstream', arguments: { feed }, cursor: second.cursor });
    expect({ events: third.events, cursor: third.cursor }).toEqual({ events: [], cursor: second.cursor });
  });

  it('"maxEvents": a partial batch with hasMore: true and an intermediate cursor; the next poll continues after it, nothing lost or twice', async () => {
    const { feed, cursor } = await feedFromNow();
    await driveFeed(feed, { append: ['1', '2', '3', '4', '5'] });
    const first = await polled({ name: 'demo.upstream', arguments: { feed }, cursor, maxEvents: 2 });
    expect({ texts: texts(first), hasMore: first.hasMore, at: upstreamAt(first.cursor) }).toEqual({
      texts: ['1', '2'],
      hasMore: true,
      at: 'at:2',
    });
    const second = await polled({ name: 'demo.upstream', arguments: { feed }, cursor: first.cursor, maxEvents: 2 });
    const third = await polled({ name: 'demo.upstream', arguments: { feed }, cursor: second.cursor, maxEvents: 2 });
    expect([texts(second), texts(third), third.hasMore]).toEqual([['3', '4'], ['5'], false]);
  });

  it('the arguments select (`matches`): only the notes containing `contains`, and the cursor moves past the others', async () => {
    const { feed, cursor } = await feedFromNow();
    await driveFeed(feed, { append: ['keep 1', 'drop', 'keep 2', 'drop again'] });
    const result = await polled({ name: 'demo.upstream', arguments: { feed, contains: 'keep' }, cursor });
    expect(texts(result)).toEqual(['keep 1', 'keep 2']);
    expect(upstreamAt(result.cursor)).toBe('at:4');
  });

  it("the author's truncated is passed through: a cursor behind what the upstream keeps answers truncated: true, what it keeps, and a fresh cursor that continues", async () => {
    const { feed, cursor } = await feedFromNow();
    await driveFeed(feed, { append: ['1', '2', '3', '4', '5'], keepLast: 2 });
    const result = await polled({ name: 'demo.upstream', arguments: { feed }, cursor });
    expect({ texts: texts(result), truncated: result.truncated, at: upstreamAt(result.cursor) }).toEqual({
      texts: ['4', '5'],
      truncated: true,
      at: 'at:5',
    });
    const next = await polled({ name: 'demo.upstream', arguments: { feed }, cursor: result.cursor });
    expect({ events: next.events, truncated: next.truncated }).toEqual({ events: [], truncated: false });
  });

  it('"maxAgeMs": occurrences older than the floor are discarded, and "If the floor advances past the cursor, the server SHOULD set truncated: true"', async () => {
    const { feed, cursor } = await feedFromNow();
    await driveFeed(feed, { append: ['an hour ago'], at: new Date(Date.now() - 3_600_000).toISOString() });
    await driveFeed(feed, { append: ['recent'] });
    const result = await polled({ name: 'demo.upstream', arguments: { feed }, cursor, maxAgeMs: 60_000 });
    expect({ texts: texts(result), truncated: result.truncated }).toEqual({ texts: ['recent'], truncated: true });
    // Without maxAgeMs, both: nothing was lost by the upstream.
    const all = await polled({ name: 'demo.upstream', arguments: { feed }, cursor });
    expect({ texts: texts(all), truncated: all.truncated }).toEqual({ texts: ['an hour ago', 'recent'], truncated: false });
  });

  it('events/list lists it as any type: its delivery modes as declared, its schemas', async () => {
    const list = await answerOf(await modernRequest('events/list', {}, EVENTS));
    expect(list.result.events.find((e: { name: string }) => e.name === 'demo.upstream')).toEqual({
      name: 'demo.upstream',
      description: expect.any(String),
      delivery: ['poll', 'push'],
      inputSchema: expect.objectContaining({ type: 'object', required: ['feed'] }),
      payloadSchema: expect.objectContaining({ type: 'object', required: ['text'] }),
    });
  });

  it("nothing is emitted to it: its occurrences are its upstream's (EventEmitError)", async () => {
    await expect(upstreamEvents.emit()).rejects.toThrow(EventEmitError);
  });
});

describe('a cursor that is not a position of the subscription is refused -32602 with its reason, and the upstream is not read', () => {
  const rows: { name: string; cursor: (feed: string, own: string) => Promise<unknown>; reason: string }[] = [
    {
      name: "another feed's (other arguments: another partition)",
      cursor: async () => (await polled({ name: 'demo.upstream', arguments: { feed: feedName() }, cursor: null })).cursor,
      reason: 'cursor_other_log',
    },
    {
      name: "a log-backed type's (demo.note)",
      cursor: async () => (await polled({ name: 'demo.note', cursor: null })).cursor,
      reason: 'cursor_other_type',
    },
    {
      name: "a log cursor of this type's name (as if it had been log-backed)",
      cursor: async (feed) => mintCursor({ type: 'demo.upstream', partition: feed, logId: 'L1', next: 0 }, await developmentKeys()),
      reason: 'cursor_other_log',
    },
    {
      name: "another upstream type's, with the same upstream position",
      cursor: async (feed) => mintUpstreamCursor({ type: 'demo.elsewhere', partition: feed, upstream: 'at:0' }, await developmentKeys()),
      reason: 'cursor_other_type',
    },
    {
      name: 'its upstream position rewritten, MAC kept (forged)',
      cursor: async (_feed, own) => {
        const fields = upstreamFields(own);
        const payload = btoa(JSON.stringify([2, fields.type, fields.partition, 'at:0']))
          .replaceAll('+', '-')
          .replaceAll('/', '_')
          .replace(/=+$/, '');
        return `${payload}.${own.split('.')[1]}`;
      },
      reason: 'forged_cursor',
    },
    {
      name: 'minted under a key this server does not hold (forged)',
      cursor: async (feed) =>
        mintUpstreamCursor(
          { type: 'demo.upstream', partition: feed, upstream: 'at:0' },
          { current: await importCursorKey('another server key, 32 bytes or more') },
        ),
      reason: 'forged_cursor',
    },
    { name: 'not a cursor (malformed)', cursor: async () => 'at:0', reason: 'malformed_cursor' },
  ];

  it.each(rows)('events/poll and events/stream, $name: $reason', async ({ cursor, reason }) => {
    const { feed, cursor: own } = await feedFromNow(['kept']);
    const reads = (await driveFeed(feed)).reads;
    const bad = await cursor(feed, own);
    const answer = await poll({ name: 'demo.upstream', arguments: { feed }, cursor: bad });
    expect(answer.result).toBeUndefined();
    expect(answer.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^InvalidParams: /), data: { reason } });
    expect(await refusedStream({ name: 'demo.upstream', arguments: { feed }, cursor: bad })).toMatchObject({
      code: -32602,
      data: { reason },
    });
    expect((await driveFeed(feed)).reads).toBe(reads);
  });

  it('an upstream cursor on a log-backed type is refused (cursor_other_type): never read as a position of its log', async () => {
    const { cursor } = await feedFromNow();
    expect((await poll({ name: 'demo.note', cursor })).error).toMatchObject({ code: -32602, data: { reason: 'cursor_other_type' } });
    expect(await refusedStream({ name: 'demo.note', cursor })).toMatchObject({ code: -32602, data: { reason: 'cursor_other_type' } });
  });
});

describe("a read that fails: UpstreamError, the upstream's words in the server's log only", () => {
  const upstreamError = { code: UPSTREAM_ERROR.code, message: UPSTREAM_ERROR.message, data: { reason: 'upstream_failed' } };

  it('a read that throws: the poll is answered -32603 UpstreamError {reason: "upstream_failed"}, the words logged (mcp.events.upstream_error), not sent; the same cursor then reads on', async () => {
    const { feed, cursor } = await feedFromNow();
    await driveFeed(feed, { append: ['after the outage'], fail: 1 });
    const response = await poll({ name: 'demo.upstream', arguments: { feed }, cursor });
    expect(response.error).toEqual(upstreamError);
    expect(JSON.stringify(response)).not.toMatch(/503|secret-upstream-detail/);
    expect(logLines().map(({ line }) => line)).toContainEqual(
      expect.objectContaining({
        msg: 'mcp.events.upstream_error',
        type: 'demo.upstream',
        error: expect.stringContaining('secret-upstream-detail'),
      }),
    );
    expect(texts(await polled({ name: 'demo.upstream', arguments: { feed }, cursor }))).toEqual(['after the outage']);
  });

  it('a page whose payload payloadSchema refuses: nothing of it delivered, UpstreamError, the reason logged; the next read is served', async () => {
    const { feed, cursor } = await feedFromNow();
    await driveFeed(feed, { append: ['fine'], bad: 1 });
    const response = await poll({ name: 'demo.upstream', arguments: { feed }, cursor });
    expect(response.error).toEqual(upstreamError);
    expect(logLines().map(({ line }) => line)).toContainEqual(
      expect.objectContaining({ msg: 'mcp.events.upstream_error', error: expect.stringContaining('does not match payloadSchema') }),
    );
    expect(texts(await polled({ name: 'demo.upstream', arguments: { feed }, cursor }))).toEqual(['fine']);
  });

  it('a stream whose first read fails is not opened: the same JSON-RPC error', async () => {
    const { feed, cursor } = await feedFromNow();
    await driveFeed(feed, { fail: 1 });
    expect(await refusedStream({ name: 'demo.upstream', arguments: { feed }, cursor })).toEqual(upstreamError);
  });
});
