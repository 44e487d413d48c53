/**
 * The fixture's upstream-backed type from a test (test/fixture-server/upstream-events.ts): a feed
 * of its own per test (`feedName()`), driven through the `upstream_feed` tool, and an upstream
 * cursor's fields read back (its payload is base64url JSON `[2, type, partition, upstreamCursor]`).
 */
import { exports } from 'cloudflare:workers';
import { answerOf, modernRequestOf } from './modern-http.ts';

/** A feed no other test reads. */
export const feedName = () => `feed-${crypto.randomUUID()}`;

export interface FeedChange {
  readonly append?: readonly string[];
  readonly at?: string;
  readonly keepLast?: number;
  readonly fail?: number;
  readonly bad?: number;
  readonly exact?: boolean;
}

/** Changes the feed `feed` of the fixture's upstream; answers its state after. */
export async function driveFeed(
  feed: string,
  change: FeedChange = {},
  headers: Record<string, string> = {},
): Promise<{ size: number; kept: number; failing: number; bad: number; reads: number }> {
  const answer = await answerOf(
    await exports.default.fetch(modernRequestOf('tools/call', { name: 'upstream_feed', arguments: { feed, ...change } }, {}, headers)),
  );
  if (answer.result?.structuredContent === undefined) throw new Error(`upstream_feed failed: ${JSON.stringify(answer)}`);
  return answer.result.structuredContent;
}

/** The fields of an upstream cursor: its type, its partition (the feed) and the upstream's own position. */
export function upstreamFields(cursor: string): { version: number; type: string; partition: string; upstream: string } {
  const payload = cursor.split('.')[0]!;
  const [version, type, partition, upstream] = JSON.parse(atob(payload.replaceAll('-', '+').replaceAll('_', '/'))) as [
    number,
    string,
    string,
    string,
  ];
  return { version, type, partition, upstream };
}

/** The position an upstream cursor names, `at:<n>` in the fixture's upstream. */
export const upstreamAt = (cursor: string) => upstreamFields(cursor).upstream;
