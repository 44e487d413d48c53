/**
 * `events/poll` (SEP-3415, *Poll*): stateless on the server — everything a poll needs is in its
 * cursor and its log. The log decides where the poll starts and reads from there in one turn
 * (event-log-object.ts `read`); this module pages through what the subscription's arguments do
 * not select, so a poll answers up to `maxEvents` selected occurrences, and mints the cursor after
 * the last occurrence it looked at (selected or not): everything before that cursor was either
 * delivered or not for this subscription, and nothing after it was skipped.
 *
 * "If more events are available than the cap, the server returns a partial batch with an
 * intermediate cursor and sets hasMore: true." A poll also stops after SCAN_PAGES pages of
 * occurrences its arguments did not select, with `hasMore: true` and the cursor where it
 * stopped: the client polls again at once, and no poll reads without bound.
 *
 * A poll writes nothing, but the first read of a log that was never written or read creates it
 * (event-log-store.ts: its record and tables, once in the log's life).
 */
import { type CursorKeys, mintCursor } from '../core/event-cursor.ts';
import type { EventOccurrence, EventsError, JsonObject, PollEventsResult } from '../core/events-wire.ts';
import type { EventLogStub } from './event-logs.ts';
import type { Subscription } from './event-subscription.ts';

/** Occurrences a poll answers when `maxEvents` is absent ("the server uses its own default"), and at most. */
export const DEFAULT_POLL_EVENTS = 100;
export const MAX_POLL_EVENTS = 1_000;
/** Data bytes one poll answers: past them, `hasMore`. */
export const MAX_POLL_BYTES = 1024 * 1024;
/** Pages of occurrences one poll reads before it answers what it has. */
export const SCAN_PAGES = 8;

export interface PollRequest {
  readonly maxEvents: number | undefined;
  readonly maxAgeMs: number | undefined;
  /** What the answer suggests as `nextPollMs`. */
  readonly nextPollMs: number;
}

export async function pollEvents(
  log: EventLogStub,
  subscription: Subscription,
  request: PollRequest,
  keys: CursorKeys,
): Promise<Omit<PollEventsResult, 'resultType'> | { readonly error: EventsError }> {
  const limit = Math.min(request.maxEvents ?? DEFAULT_POLL_EVENTS, MAX_POLL_EVENTS);
  const { type, partition } = subscription.log;
  const events: EventOccurrence[] = [];
  let cursor = subscription.cursor;
  let maxAgeMs = request.maxAgeMs;
  let truncated = false;
  let bytes = 0;
  let position = { logId: '', next: 0 };
  let hasMore = false;
  for (let page = 0; page < SCAN_PAGES; page++) {
    const answer = await log.read({
      type,
      partition,
      retention: subscription.type.retention,
      cursor,
      ...(maxAgeMs !== undefined && { maxAgeMs }),
      limit: limit - events.length,
      maxBytes: MAX_POLL_BYTES - bytes,
    });
    const { decision } = answer;
    if (decision.kind === 'refused') return { error: decision.invalid };
    // "truncated … on the first response" after a skip; a later page of the same poll can be overtaken too.
    truncated ||= decision.truncated;
    position = { logId: answer.logId, next: decision.fromSeq };
    for (const occurrence of answer.occurrences) {
      position = { logId: answer.logId, next: occurrence.seq + 1 };
      const data = JSON.parse(occurrence.data) as JsonObject;
      if (!subscription.accepts(data)) continue;
      bytes += occurrence.data.length;
      events.push({ eventId: occurrence.eventId, name: type, timestamp: occurrence.timestamp, data });
    }
    hasMore = position.next < answer.nextSeq;
    // A cursor of null reads from now: there is nothing to page through.
    if (!hasMore || events.length >= limit || bytes >= MAX_POLL_BYTES || decision.kind === 'from_now') break;
    cursor = { type, partition, ...position };
    maxAgeMs = undefined;
  }
  return {
    events,
    cursor: await mintCursor({ type, partition, ...position }, keys),
    truncated,
    hasMore,
    nextPollMs: request.nextPollMs,
  };
}
