/**
 * The project's client (`followEvents`, mcp-edge-sessions/client) against the real server: a
 * follower by push and one by poll each get every note posted, in order, once, and each resumes
 * from the cursor its application saved.
 */
import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { followEvents } from '../../src/client/index.ts';
import type { EventOccurrence } from '../../src/core/events-wire.ts';
import { answerOf, modernRequest } from '../support/modern-http.ts';

const fetchWorker = (input: RequestInfo | URL, init?: RequestInit) =>
  exports.default.fetch(new Request(input, { ...init, headers: { Host: 'localhost', ...Object.fromEntries(new Headers(init?.headers)) } }));

async function post(text: string): Promise<string> {
  const answer = await answerOf(await modernRequest('tools/call', { name: 'post_note', arguments: { text } }));
  return (answer.result.structuredContent as { eventId: string }).eventId;
}

/** Follows demo.note selecting `tag`, until `count` occurrences arrived; answers them and the last saved cursor. */
async function follow(mode: 'push' | 'poll', tag: string, count: number, cursor: string | null, during: () => Promise<void>) {
  const received: EventOccurrence[] = [];
  let saved: string | null = cursor;
  const stop = new AbortController();
  let reached!: () => void;
  const enough = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const follower = followEvents({
    url: 'http://localhost/mcp',
    name: 'demo.note',
    arguments: { contains: tag },
    mode,
    cursor,
    fetch: fetchWorker,
    heartbeatMs: 30_000,
    pollFloorMs: 10,
    signal: stop.signal,
    onEvent: (occurrence) => {
      received.push(occurrence);
    },
    // Stopped once the cursor after them is saved: a follower stopped before that gets them again (at least once).
    saveCursor: (next) => {
      saved = next;
      if (received.length >= count) reached();
    },
  });
  // The follower has its first cursor (from now) before anything is posted.
  while (saved === cursor && cursor === null) await new Promise((resolve) => setTimeout(resolve, 10));
  await during();
  await enough;
  stop.abort();
  await follower.done;
  return { texts: received.map((occurrence) => (occurrence.data as { text: string }).text), saved };
}

describe('followEvents against the server', () => {
  for (const mode of ['push', 'poll'] as const) {
    it(`${mode}: every note once, in order, and again from the saved cursor`, async () => {
      const tag = `${mode}-${crypto.randomUUID()}`;
      const first = await follow(mode, tag, 3, null, async () => {
        for (const n of [1, 2, 3]) await post(`${tag} ${n}`);
      });
      expect(first.texts).toEqual([1, 2, 3].map((n) => `${tag} ${n}`));
      // Posted while nobody follows: delivered from the saved cursor, and nothing before it again.
      for (const n of [4, 5]) await post(`${tag} ${n}`);
      const second = await follow(mode, tag, 2, first.saved, async () => undefined);
      expect(second.texts).toEqual([4, 5].map((n) => `${tag} ${n}`));
    });
  }
});
