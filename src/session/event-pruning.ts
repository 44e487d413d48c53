/**
 * Removing events from the log: retention (a stream's events once it has ended long enough)
 * and the per-session bounds (the oldest events first). Stream rows always stay, so a cursor
 * into removed events is answered `events_pruned`, never `unknown_stream`. Synchronous SQL,
 * for the caller's transaction.
 */

/** Streams that still have stored events. */
const HAS_EVENTS = `EXISTS (SELECT 1 FROM events e WHERE e.stream = s.stream)`;

/** Rows a prune reads first from a stream (then 4× more each time): enough for the usual case. */
const MIN_PRUNE_PAGE = 32;

/** Number and total size (UTF-8 bytes) of the stored events. */
export function storedTotals(sql: SqlStorage): { readonly events: number; readonly bytes: number } {
  return sql
    .exec<{ events: number; bytes: number }>(
      `SELECT count(*) AS events,
              coalesce(sum(octet_length(message)), 0) + (SELECT coalesce(sum(octet_length(chunk)), 0) FROM event_parts) AS bytes
         FROM events`,
    )
    .one();
}

/**
 * Drops the events of streams that ended at or before `endedBy`. The stream rows stay, so a
 * cursor into them is answered `events_pruned`, not `unknown_stream`.
 * Returns what was removed.
 */
export function pruneEnded(sql: SqlStorage, endedBy: number): { readonly events: number; readonly bytes: number } {
  const streams = sql
    .exec<{ stream: number }>(`SELECT stream FROM streams s WHERE state != 'open' AND ended_at <= ? AND ${HAS_EVENTS}`, endedBy)
    .toArray();
  let events = 0;
  let bytes = 0;
  for (const { stream } of streams) {
    const removed = sql
      .exec<{ events: number; bytes: number }>(
        `SELECT count(*) AS events,
                coalesce(sum(octet_length(message)), 0) +
                  (SELECT coalesce(sum(octet_length(chunk)), 0) FROM event_parts WHERE stream = ?) AS bytes
           FROM events WHERE stream = ?`,
        stream,
        stream,
      )
      .one();
    sql.exec(`UPDATE streams SET pruned_through = (SELECT max(seq) FROM events WHERE stream = ?) WHERE stream = ?`, stream, stream);
    sql.exec(`DELETE FROM events WHERE stream = ?`, stream);
    sql.exec(`DELETE FROM event_parts WHERE stream = ?`, stream);
    events += removed.events;
    bytes += removed.bytes;
  }
  return { events, bytes };
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
  atLeast: { readonly events: number; readonly bytes: number },
  keep: { readonly stream: number; readonly seq: number },
): { readonly events: number; readonly bytes: number } {
  let events = 0;
  let bytes = 0;
  const enough = () => events >= atLeast.events && bytes >= atLeast.bytes;
  const pruneFrom = (stream: number): void => {
    let through = 0;
    for (let page = Math.max(MIN_PRUNE_PAGE, atLeast.events - events); !enough(); page *= 4) {
      const rows = [
        ...sql
          .exec(
            `SELECT seq, octet_length(message) FROM events
              WHERE stream = ? AND seq > ? AND NOT (stream = ? AND seq = ?)
              ORDER BY seq
              LIMIT ?`,
            stream,
            through,
            keep.stream,
            keep.seq,
            page,
          )
          .raw<[number, number]>(),
      ];
      const more = partBytes(sql, stream, through, rows.at(-1)?.[0] ?? through);
      for (const [seq, size] of rows) {
        if (enough()) break;
        through = seq;
        events += 1;
        bytes += size + (more.get(seq) ?? 0);
      }
      if (rows.length < page) break; // the rest of this stream, if any, is `keep`
    }
    if (through === 0) return;
    sql.exec(`DELETE FROM events WHERE stream = ? AND seq <= ?`, stream, through);
    sql.exec(`DELETE FROM event_parts WHERE stream = ? AND seq <= ?`, stream, through);
    sql.exec(`UPDATE streams SET pruned_through = max(pruned_through, ?) WHERE stream = ?`, through, stream);
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

/** The first stream numbered after `after` that has stored events, and whether it is open. */
function nextStreamWithEvents(sql: SqlStorage, after: number): { stream: number; open: boolean } | undefined {
  // Read to the end (one row): a cursor left open keeps its statement busy.
  const [row] = [
    ...sql
      .exec(
        `SELECT e.stream, s.state = 'open' FROM events e JOIN streams s ON s.stream = e.stream WHERE e.stream > ? ORDER BY e.stream LIMIT 1`,
        after,
      )
      .raw<[number, number]>(),
  ];
  return row === undefined ? undefined : { stream: row[0], open: row[1] === 1 };
}

/** When the oldest unpruned ended stream ended, if any. */
export function oldestUnprunedEnd(sql: SqlStorage): number | undefined {
  return (
    sql.exec<{ at: number | null }>(`SELECT min(ended_at) AS at FROM streams s WHERE state != 'open' AND ${HAS_EVENTS}`).one().at ??
    undefined
  );
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
