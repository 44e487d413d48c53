/**
 * The fixture's upstream-backed event type, `demo.upstream` (src/events/upstream-event-type.ts),
 * over a tiny upstream of its own: named feeds in this isolate's memory, each an array of notes
 * that keeps its own history, read after a cursor `at:<index>` (the index of the next note). It
 * stands for an API's event history: nothing of it is stored by the library.
 *
 * A subscription names its feed (`feed`, the type's partition: a cursor of one feed is refused on
 * another) and may select notes (`contains`). The tool `upstream_feed` drives a feed from a
 * test: append notes, drop the oldest (the upstream's retention: a cursor behind it reads
 * `truncated`), make its next reads throw or answer a payload its schema refuses, and give each
 * note its own cursor (`exact`) or only the page's. Each feed belongs to one test, which names it
 * with a token of its own.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { defineUpstreamEventType } from '../../src/lib.ts';

interface UpstreamNote {
  readonly eventId: string;
  readonly timestamp: string;
  readonly data: { readonly text: string };
}

interface Feed {
  readonly notes: UpstreamNote[];
  /** Notes before this index are no longer kept. */
  kept: number;
  /** Reads left that throw (an upstream answering 503). */
  failing: number;
  /** Reads left that answer a note whose payload payloadSchema refuses. */
  bad: number;
  /** Each note answered with its own cursor. */
  exact: boolean;
  /** Reads so far. */
  reads: number;
}

const feeds = new Map<string, Feed>();

function feedOf(name: string): Feed {
  let feed = feeds.get(name);
  if (feed === undefined) {
    feed = { notes: [], kept: 0, failing: 0, bad: 0, exact: false, reads: 0 };
    feeds.set(name, feed);
  }
  return feed;
}

const position = (index: number) => `at:${index}`;

export const upstreamEvents = defineUpstreamEventType({
  name: 'demo.upstream',
  description: "Notes an upstream keeps (tests): read after the upstream's own cursor; `feed` names the feed, `contains` selects",
  inputSchema: z.object({ feed: z.string().min(1).max(128), contains: z.string().optional() }),
  payloadSchema: z.object({ text: z.string() }),
  delivery: ['poll', 'push'],
  matches: ({ contains }, { text }) => contains === undefined || text.includes(contains),
  partitionOf: ({ feed }) => feed,
  pollIntervalMs: 100,
  async read({ cursor, limit, args }) {
    const feed = feedOf(args.feed);
    feed.reads++;
    if (feed.failing > 0) {
      feed.failing--;
      throw new Error(`upstream ${args.feed} answered 503 Service Unavailable (secret-upstream-detail)`);
    }
    // "start from now": the head, nothing replayed.
    if (cursor === null) return { occurrences: [], cursor: position(feed.notes.length) };
    const after = /^at:(0|[1-9][0-9]*)$/.exec(cursor);
    if (after === null || Number(after[1]) > feed.notes.length) throw new Error(`not a cursor of feed ${args.feed}: ${cursor}`);
    const from = Math.max(Number(after[1]), feed.kept);
    const page = feed.notes.slice(from, from + limit);
    if (feed.bad > 0 && page.length > 0) {
      feed.bad--;
      return { occurrences: [{ ...page[0]!, data: { text: 42 } as unknown as { text: string } }], cursor: position(from + 1) };
    }
    return {
      occurrences: page.map((note, i) => (feed.exact ? { ...note, cursor: position(from + i + 1) } : note)),
      cursor: position(from + page.length),
      truncated: from > Number(after[1]),
      hasMore: from + page.length < feed.notes.length,
    };
  },
});

export function registerUpstreamTool(server: McpServer): void {
  server.registerTool(
    'upstream_feed',
    {
      description: "Drives a feed of demo.upstream's upstream (tests): append notes, drop the oldest, fail or garble its next reads",
      inputSchema: z.object({
        feed: z.string().min(1).max(128),
        append: z.array(z.string()).max(200).optional(),
        /** When the appended notes occurred (ISO 8601); absent, now. */
        at: z.string().optional(),
        keepLast: z.number().int().min(0).optional(),
        fail: z.number().int().min(0).optional(),
        bad: z.number().int().min(0).optional(),
        exact: z.boolean().optional(),
      }),
    },
    async ({ feed: name, append = [], at, keepLast, fail, bad, exact }) => {
      const feed = feedOf(name);
      for (const text of append) {
        feed.notes.push({ eventId: `${name}-${feed.notes.length}`, timestamp: at ?? new Date().toISOString(), data: { text } });
      }
      if (keepLast !== undefined) feed.kept = Math.max(feed.kept, feed.notes.length - keepLast);
      if (fail !== undefined) feed.failing = fail;
      if (bad !== undefined) feed.bad = bad;
      if (exact !== undefined) feed.exact = exact;
      const state = { size: feed.notes.length, kept: feed.kept, failing: feed.failing, bad: feed.bad, reads: feed.reads };
      return { content: [{ type: 'text', text: JSON.stringify(state) }], structuredContent: state };
    },
  );
}
