/**
 * `events/poll` on an upstream-backed type (upstream-event-type.ts; SEP-3415, *Poll*): stateless
 * as a log's poll (event-poll.ts), and the same answer, but what it reads is the author's
 * upstream, through the author's `read`: no object is asked anything and no row is read or
 * written here — the upstream is the log.
 *
 * The poll reads after the subscription's position (decided by event-subscription.ts) page by
 * page, keeping what the arguments select (`matches`), up to `maxEvents` and MAX_POLL_BYTES, and
 * at most SCAN_PAGES pages, as a log's poll does. Each page is asked for no more than the poll can
 * still answer, so a page is never cut: the cursor answered is the author's cursor after the last
 * page read, sealed (core/event-cursor.ts), and everything before it was delivered or not selected.
 * `truncated` is the author's ("the cursor read from is behind what the upstream keeps"), or ours
 * when `maxAgeMs` discarded an occurrence: the SEP lets a server "honor maxAgeMs by replaying from
 * cursor and discarding events whose timestamp is older than the floor", and "If the floor
 * advances past the cursor, the server SHOULD set truncated: true". `nextPollMs` is the type's
 * `pollIntervalMs`: how often its upstream may be asked.
 *
 * A read that fails throws UpstreamReadError (its words logged by the type): the poll is answered
 * UPSTREAM_ERROR by event-methods.ts.
 */
import { type CursorKeys, mintUpstreamCursor } from '../core/event-cursor.ts';
import type { EventOccurrence, PollEventsResult } from '../core/events-wire.ts';
import { DEFAULT_POLL_EVENTS, MAX_POLL_BYTES, MAX_POLL_EVENTS, SCAN_PAGES } from './event-poll.ts';
import type { Subscription } from './event-subscription.ts';
import type { UpstreamEventType } from './upstream-event-type.ts';

export interface UpstreamPollRequest {
  readonly maxEvents: number | undefined;
  readonly maxAgeMs: number | undefined;
}

/** The subscription's upstream read: its type and where it starts. */
export type UpstreamSubscription = Subscription & { readonly upstream: { readonly type: UpstreamEventType; readonly from: string | null } };

/**
 * The time before which occurrences are discarded, for `maxAgeMs` with a cursor ("maxAgeMs is
 * ignored when cursor is null … also ignored for event types that do not support replay": a read
 * from null is one of those). Undefined: nothing is.
 */
export function ageFloor(maxAgeMs: number | undefined, from: string | null, now = Date.now()): number | undefined {
  return maxAgeMs === undefined || from === null ? undefined : now - maxAgeMs;
}

/** Whether an occurrence at `timestamp` is older than `floor`. */
export const beforeFloor = (timestamp: string, floor: number | undefined) => floor !== undefined && Date.parse(timestamp) < floor;

export async function pollUpstream(
  subscription: UpstreamSubscription,
  request: UpstreamPollRequest,
  keys: CursorKeys,
): Promise<Omit<PollEventsResult, 'resultType'>> {
  const { type, from } = subscription.upstream;
  const limit = Math.min(request.maxEvents ?? DEFAULT_POLL_EVENTS, MAX_POLL_EVENTS);
  const floor = ageFloor(request.maxAgeMs, from);
  const events: EventOccurrence[] = [];
  let cursor = from;
  let truncated = false;
  let hasMore = false;
  let bytes = 0;
  for (let page = 0; page < SCAN_PAGES; page++) {
    const answer = await type.readPage(subscription.args, cursor, limit - events.length, MAX_POLL_BYTES - bytes);
    // "truncated … on the first response" after a skip; a later page of the same poll can be overtaken too.
    truncated ||= answer.truncated;
    for (const { eventId, timestamp, data } of answer.occurrences) {
      if (beforeFloor(timestamp, floor)) {
        truncated = true;
        continue;
      }
      if (subscription.accepts(data)) events.push({ eventId, name: type.name, timestamp, data });
    }
    bytes += answer.bytes;
    cursor = answer.cursor;
    hasMore = answer.hasMore;
    // From now (or an upstream that cannot replay): one read, nothing to page through.
    if (!hasMore || cursor === null || from === null || events.length >= limit || bytes >= MAX_POLL_BYTES) break;
  }
  const { partition } = subscription.log;
  return {
    events,
    // "A client that receives cursor: null MUST NOT attempt to persist or replay from it."
    cursor: cursor === null ? null : await mintUpstreamCursor({ type: type.name, partition, upstream: cursor }, keys),
    truncated,
    hasMore,
    nextPollMs: type.pollIntervalMs,
  };
}
