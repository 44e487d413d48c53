/**
 * The `cursor` a webhook delivery carries, and a refresh returns: the safe watermark (MCP Events,
 * SEP-3415, *Webhook event delivery*). "`cursor` in the body is a safe-to-persist watermark: a
 * position such that every event at or before it has been acknowledged by the endpoint or
 * abandoned by the server … It does not include `cursor_N` in event N's payload until the events
 * at positions before N have been acknowledged or given up on." A refresh's `cursor` "does not
 * advance past unacknowledged events, so persisting it never skips anything".
 *
 * Positions are log seqs, and a watermark is a seq as event-cursor.ts's `next` is: everything
 * below it is passed. A subscription tracks the occurrences that matched it below `scannedTo`
 * (the seq its matching has reached; log entries that did not match are passed by definition, so
 * seqs have gaps). The watermark is the seq of the earliest occurrence not passed, or `scannedTo`
 * when every one is — so it advances in quiet periods, as the text wants.
 *
 * Passed: acknowledged (2xx); declined (410: the receiver chose not to take it, "stale or already
 * processed"); and abandoned ONLY once a `gap` envelope announcing it has been acknowledged (a refresh
 * never announces one: it answers `truncated: false` and this watermark). The text lets the watermark pass an
 * abandoned event at once; here it waits for the announcement, so a client's persisted cursor
 * never passes an event it was not told it lost. gapToAnnounce gives the envelope's `cursor`: the
 * watermark with the abandoned occurrences counted as passed, which the client "persists … and
 * treats … as `truncated: true`"; its previously persisted cursor and this one bracket what was
 * skipped. Order of acknowledgements does not matter: the watermark is a function of the states.
 */

/** Where an occurrence's delivery stands for the watermark. */
export type OccurrenceState = 'pending' | 'delivered' | 'declined' | 'abandoned' | 'gap_announced';

export interface TrackedOccurrence {
  readonly seq: number;
  readonly state: OccurrenceState;
}

/** Whether the watermark may pass an occurrence in this state. */
export function isPassed(state: OccurrenceState): boolean {
  return state === 'delivered' || state === 'declined' || state === 'gap_announced';
}

function check(scannedTo: number, occurrences: readonly TrackedOccurrence[]): void {
  if (!Number.isSafeInteger(scannedTo) || scannedTo < 0) throw new RangeError(`scannedTo must be a non-negative integer, got ${scannedTo}`);
  const seen = new Set<number>();
  for (const { seq } of occurrences) {
    if (!Number.isSafeInteger(seq) || seq < 0 || seq >= scannedTo) {
      throw new RangeError(`occurrence seq ${seq} is not a position below scannedTo ${scannedTo}`);
    }
    if (seen.has(seq)) throw new RangeError(`occurrence seq ${seq} is tracked twice`);
    seen.add(seq);
  }
}

function earliestWhere(scannedTo: number, occurrences: readonly TrackedOccurrence[], blocks: (state: OccurrenceState) => boolean): number {
  check(scannedTo, occurrences);
  let mark = scannedTo;
  for (const { seq, state } of occurrences) if (blocks(state) && seq < mark) mark = seq;
  return mark;
}

/** The safe watermark: the seq of the earliest occurrence not passed, else `scannedTo`. Order of the list is free. */
export function watermark(scannedTo: number, occurrences: readonly TrackedOccurrence[]): number {
  return earliestWhere(scannedTo, occurrences, (state) => !isPassed(state));
}

/**
 * The `gap` envelope due, if any: the abandoned occurrences it announces (ascending), and the
 * `cursor` it carries — the watermark once they count as passed. Once the envelope is
 * acknowledged, they become `gap_announced`.
 */
export function gapToAnnounce(
  scannedTo: number,
  occurrences: readonly TrackedOccurrence[],
): { readonly seqs: readonly number[]; readonly cursorNext: number } | null {
  const seqs = occurrences
    .filter(({ state }) => state === 'abandoned')
    .map(({ seq }) => seq)
    .sort((a, b) => a - b);
  const cursorNext = earliestWhere(scannedTo, occurrences, (state) => state === 'pending');
  return seqs.length === 0 ? null : { seqs, cursorNext };
}
