/**
 * The session's bounds in SQL: counting the stored events (exactly, or at least them without
 * reading them all), and removing the oldest to keep the session within its bounds. Nothing else removes events one by one: a delete is a row written, as dear as the
 * insert, so ended streams keep theirs until the whole session is dropped (idle expiry,
 * DELETE). Stream rows always stay, so a cursor into removed events is answered
 * `events_pruned`, never `unknown_stream`. Synchronous SQL, for the caller's transaction.
 * `parts` says whether event_parts exists (EventLog knows). Every range is one of the events
 * table's key (event-key.ts).
 */
import { EVENT_KEY, lastOf, MAX_STREAM, STREAM_LAST, STREAM_START, startOf } from './event-key.ts';

/** Rows a prune reads first from a stream (then 4× more each time): enough for the usual case. */
const MIN_PRUNE_PAGE = 32;

/** Number and total size (UTF-8 bytes) of the stored events, of the streams numbered `from` to `to`. */
export function storedTotals(
  sql: SqlStorage,
  parts: boolean,
  from = 0,
  to = MAX_STREAM,
): { readonly events: number; readonly bytes: number } {
  return sql
    .exec<{ events: number; bytes: number }>(
      `SELECT count(*) AS events,
              coalesce(sum(octet_length(message)), 0)
                ${parts ? '+ (SELECT coalesce(sum(octet_length(chunk)), 0) FROM event_parts WHERE stream BETWEEN ? AND ?)' : ''} AS bytes
         FROM events WHERE event >= ${STREAM_START} AND event <= ${STREAM_LAST}`,
      ...(parts ? [from, to, from, to] : [from, to]),
    )
    .one();
}

/**
 * At least the number and size of the stored events, without reading them all: the newest
 * stream's stored_* (at least the totals when it opened), plus every event of the streams
 * events can have been added to since — those from its open_floor on, and the standalone
 * stream current then (pruning only removes). Counts events of streams open then twice,
 * which only makes it larger. Undefined where the newest row does not say (an upgraded
 * session).
 */
export function storedTotalsBound(sql: SqlStorage, parts: boolean): { readonly events: number; readonly bytes: number } | undefined {
  const newest = sql
    .exec<{ floor: number; events: number | null; bytes: number | null; standalone: number | null }>(
      `SELECT open_floor AS floor, stored_events AS events, stored_bytes AS bytes, (SELECT standalone_stream FROM session) AS standalone
         FROM streams ORDER BY stream DESC LIMIT 1`,
    )
    .toArray()[0];
  if (newest === undefined) return { events: 0, bytes: 0 };
  if (newest.events === null || newest.bytes === null) return undefined;
  const since = storedTotals(sql, parts, newest.floor);
  const standalone =
    newest.standalone !== null && newest.standalone < newest.floor
      ? storedTotals(sql, parts, newest.standalone, newest.standalone)
      : { events: 0, bytes: 0 };
  return { events: newest.events + since.events + standalone.events, bytes: newest.bytes + since.bytes + standalone.bytes };
}

/**
 * Drops the fewest events, in pruning order, that make at least `atLeast.events` events and
 * `atLeast.bytes` bytes, never `keep` (the event just stored). Pruning order: ended streams
 * first, then open ones, each in the order they were opened, and each stream from its oldest
 * event — so a stream loses a prefix of its events, never one from the middle. It walks only
 * the streams that have events, one primary-key seek each (stream rows stay for the
 * session's life, so reading them all would cost more with every call the session ever
 * made), and reads a stream's events along the key a page at a time: the usual case (one
 * event over the bound) reads a few rows. Records how far each affected stream is pruned;
 * returns what was removed.
 */
export function pruneOldest(
  sql: SqlStorage,
  parts: boolean,
  atLeast: { readonly events: number; readonly bytes: number },
  keep: { readonly stream: number; readonly seq: number },
): { readonly events: number; readonly bytes: number } {
  let events = 0;
  let bytes = 0;
  const enough = () => events >= atLeast.events && bytes >= atLeast.bytes;
  const pruneFrom = (stream: number): void => {
    let through = 0;
    // The event that finished the stream, if it goes: its row must then say so (EventLog).
    let endsStream = false;
    for (let page = Math.max(MIN_PRUNE_PAGE, atLeast.events - events); !enough(); page *= 4) {
      const rows = [
        ...sql
          .exec(
            `SELECT seq, octet_length(message), ends_stream FROM events
              WHERE event > ${EVENT_KEY} AND event <= ${STREAM_LAST} AND event <> ${EVENT_KEY}
              ORDER BY event
              LIMIT ?`,
            stream,
            through,
            stream,
            keep.stream,
            keep.seq,
            page,
          )
          .raw<[number, number, number]>(),
      ];
      const more = parts ? partBytes(sql, stream, through, rows.at(-1)?.[0] ?? through) : undefined;
      for (const [seq, size, ends] of rows) {
        if (enough()) break;
        through = seq;
        events += 1;
        bytes += size + (more?.get(seq) ?? 0);
        endsStream ||= ends === 1;
      }
      if (rows.length < page) break; // the rest of this stream, if any, is `keep`
    }
    if (through === 0) return;
    sql.exec(`DELETE FROM events WHERE event >= ${STREAM_START} AND event <= ${EVENT_KEY}`, stream, stream, through);
    if (parts) sql.exec(`DELETE FROM event_parts WHERE stream = ? AND seq <= ?`, stream, through);
    sql.exec(
      `UPDATE streams SET pruned_through = max(pruned_through, ?), state = CASE WHEN ? AND state = 'open' THEN 'finished' ELSE state END
        WHERE stream = ?`,
      through,
      endsStream ? 1 : 0,
      stream,
    );
  };
  const open: number[] = [];
  for (let next = nextStreamWithEvents(sql, 0); next !== undefined && !enough(); next = nextStreamWithEvents(sql, next.stream)) {
    if (next.open) open.push(next.stream);
    else pruneFrom(next.stream);
  }
  for (const stream of open) {
    if (enough()) break;
    pruneFrom(stream);
  }
  return { events, bytes };
}

/**
 * The first stream numbered after `after` that has stored events, and whether it is open: its
 * row says so and its last event did not finish it.
 */
function nextStreamWithEvents(sql: SqlStorage, after: number): { stream: number; open: boolean } | undefined {
  // Read to the end (one row): a cursor left open keeps its statement busy.
  const [row] = [
    ...sql
      .exec(
        `SELECT e.stream,
                s.state = 'open' AND NOT coalesce((SELECT l.ends_stream FROM events l
                                                    WHERE l.event >= ${startOf('e.stream')} AND l.event <= ${lastOf('e.stream')}
                                                    ORDER BY l.event DESC LIMIT 1), 0)
           FROM (SELECT stream FROM events WHERE event > ${STREAM_LAST} ORDER BY event LIMIT 1) e JOIN streams s ON s.stream = e.stream`,
        after,
      )
      .raw<[number, number]>(),
  ];
  return row === undefined ? undefined : { stream: row[0], open: row[1] === 1 };
}

/**
 * The bytes stored in parts, per seq, of the stream's events in (afterSeq, through]. One range
 * read: asked row by row, as a correlated subquery, it made a page of small events take
 * 100× longer once any large message was stored.
 */
export function partBytes(sql: SqlStorage, stream: number, afterSeq: number, through: number): Map<number, number> {
  const bytes = new Map<number, number>();
  const rows = sql
    .exec(
      `SELECT seq, sum(octet_length(chunk)) FROM event_parts WHERE stream = ? AND seq > ? AND seq <= ? GROUP BY seq`,
      stream,
      afterSeq,
      through,
    )
    .raw<[number, number]>();
  for (const [seq, size] of rows) bytes.set(seq, size);
  return bytes;
}
