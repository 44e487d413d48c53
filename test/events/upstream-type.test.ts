/**
 * What an upstream-backed type's author answers, checked before anything is delivered
 * (src/events/upstream-event-type.ts `readPage`): each page the author may not answer is refused
 * as UpstreamReadError with the reason logged, and the pages it may answer come back as the
 * poll and the push stream read them (`truncated` and `hasMore` settled, times resolved).
 * Served, these are upstream-poll.test.ts's and upstream-push.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { MAX_UPSTREAM_CURSOR_LENGTH } from '../../src/core/event-cursor.ts';
import { MAX_EVENT_DATA_BYTES, MAX_EVENT_ID_LENGTH } from '../../src/events/event-type.ts';
import { defineUpstreamEventType, UpstreamReadError } from '../../src/events/upstream-event-type.ts';
import { captureLogLines } from '../support/log-lines.ts';

const logLines = captureLogLines();

/** A type whose read answers `page` whatever it is asked. */
const answering = (page: unknown) =>
  defineUpstreamEventType({
    name: 'test.upstream',
    inputSchema: z.object({}),
    payloadSchema: z.object({ text: z.string() }),
    delivery: ['poll'],
    read: async () => page as never,
  });

const note = (text: string, over: Record<string, unknown> = {}) => ({ eventId: `id-${text}`, data: { text }, ...over });

describe("an author's page that may not be answered is refused (UpstreamReadError), the reason logged", () => {
  it.each<{ name: string; page: unknown; from?: string | null; limit?: number; maxBytes?: number; reason: RegExp }>([
    { name: 'no page', page: undefined, reason: /no page/ },
    { name: 'no occurrences array', page: { cursor: 'c' }, reason: /no occurrences array/ },
    {
      name: 'more occurrences than asked',
      page: { occurrences: [note('a'), note('b')], cursor: 'c' },
      limit: 1,
      reason: /past its limit of 1/,
    },
    { name: 'a cursor with a newline', page: { occurrences: [], cursor: 'c\n' }, reason: /printable ASCII/ },
    {
      name: 'a cursor over the length',
      page: { occurrences: [], cursor: 'c'.repeat(MAX_UPSTREAM_CURSOR_LENGTH + 1) },
      reason: /printable ASCII/,
    },
    // "an event type that ever returns a non-null cursor SHOULD always do so"
    {
      name: 'cursor null after a non-null cursor',
      page: { occurrences: [], cursor: null },
      from: 'c',
      reason: /cursor null after a non-null/,
    },
    // "null means "start from now": the server returns no events and a fresh cursor"
    { name: 'occurrences on a read from now', page: { occurrences: [note('a')], cursor: 'c' }, from: null, reason: /from now/ },
    { name: 'truncated not a boolean', page: { occurrences: [], cursor: 'c', truncated: 'yes' }, reason: /not a boolean/ },
    { name: 'an empty eventId', page: { occurrences: [note('a', { eventId: '' })], cursor: 'c' }, reason: /eventId/ },
    {
      name: 'an eventId too long',
      page: { occurrences: [note('a', { eventId: 'i'.repeat(MAX_EVENT_ID_LENGTH + 1) })], cursor: 'c' },
      reason: /eventId/,
    },
    {
      name: 'a timestamp that is not a date',
      page: { occurrences: [note('a', { timestamp: 'yesterday' })], cursor: 'c' },
      reason: /timestamp/,
    },
    {
      name: 'a payload payloadSchema refuses',
      page: { occurrences: [{ eventId: 'x', data: { text: 5 } }], cursor: 'c' },
      reason: /payloadSchema/,
    },
    {
      name: 'a payload over the size bound',
      page: { occurrences: [note('a'.repeat(MAX_EVENT_DATA_BYTES), { eventId: 'big' })], cursor: 'c' },
      reason: new RegExp(`over ${MAX_EVENT_DATA_BYTES} bytes`),
    },
    {
      name: 'more bytes than asked, over one occurrence',
      page: { occurrences: [note('aaaa'), note('bbbb')], cursor: 'c' },
      maxBytes: 20,
      reason: /bytes of data/,
    },
    {
      name: "an occurrence's cursor on a page that cannot replay",
      page: { occurrences: [note('a', { cursor: 'c1' })], cursor: null },
      from: null,
      reason: /its cursor/,
    },
    {
      name: "an occurrence's cursor not printable",
      page: { occurrences: [note('a', { cursor: 'c\u00e9' })], cursor: 'c' },
      reason: /its cursor/,
    },
  ])('$name', async ({ page, from = 'c0', limit = 10, maxBytes = 1024 * 1024, reason }) => {
    await expect(answering(page).readPage({}, from, limit, maxBytes)).rejects.toThrow(UpstreamReadError);
    expect(logLines().map(({ line }) => line)).toContainEqual(
      expect.objectContaining({ msg: 'mcp.events.upstream_error', type: 'test.upstream', error: expect.stringMatching(reason) }),
    );
  });

  it('a read that throws: UpstreamReadError, whose message is ours, the words only in the log', async () => {
    const type = defineUpstreamEventType({
      name: 'test.upstream',
      inputSchema: z.object({}),
      payloadSchema: z.object({ text: z.string() }),
      delivery: ['poll'],
      read: async () => {
        throw new Error('Gmail API 503 token=secret');
      },
    });
    const error = await type.readPage({}, null, 10, 1024).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamReadError);
    expect(String((error as Error).message)).not.toMatch(/Gmail|secret/);
    expect(JSON.stringify(logLines())).toMatch(/Gmail API 503/);
  });
});

describe("an author's page that may be answered", () => {
  it('a full page without hasMore is taken to have more; a shorter one not; a timestamp absent is the time of the read; per-occurrence cursors kept', async () => {
    const full = await answering({ occurrences: [note('a', { cursor: 'c1' }), note('b')], cursor: 'c2' }).readPage({}, 'c0', 2, 1024);
    expect(full).toEqual({
      occurrences: [
        { eventId: 'id-a', timestamp: expect.any(String), data: { text: 'a' }, cursor: 'c1' },
        { eventId: 'id-b', timestamp: expect.any(String), data: { text: 'b' } },
      ],
      bytes: 2 * JSON.stringify({ text: 'a' }).length,
      cursor: 'c2',
      truncated: false,
      hasMore: true,
    });
    expect(Number.isNaN(Date.parse(full.occurrences[0]!.timestamp))).toBe(false);
    const short = await answering({ occurrences: [note('a')], cursor: 'c1', truncated: true }).readPage({}, 'c0', 2, 1024);
    expect({ truncated: short.truncated, hasMore: short.hasMore }).toEqual({ truncated: true, hasMore: false });
  });

  it('an upstream that cannot replay (cursor null): occurrences on every read, truncated and hasMore false whatever it says ("truncated SHOULD be false")', async () => {
    const page = await answering({ occurrences: [note('a')], cursor: null, truncated: true, hasMore: true }).readPage({}, null, 1, 1024);
    expect(page).toMatchObject({ cursor: null, truncated: false, hasMore: false, occurrences: [{ eventId: 'id-a' }] });
  });

  it('nothing is emitted to it, and a pollIntervalMs under the floor is refused at declaration', async () => {
    await expect(answering({}).emit()).rejects.toThrow(/nothing is emitted/);
    expect(() =>
      defineUpstreamEventType({
        name: 'test.fast',
        inputSchema: z.object({}),
        payloadSchema: z.object({}),
        delivery: ['poll'],
        pollIntervalMs: 1,
        read: async () => ({ occurrences: [], cursor: null }),
      }),
    ).toThrow(/pollIntervalMs/);
  });
});
