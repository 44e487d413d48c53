/**
 * How an event log pokes its webhook subscribers (docs/events.md, *Webhooks*, how occurrences arrive), the
 * pure part: who is poked next and with which range, how pokes coalesce, what the fan-out check
 * owes, and when the log's one alarm is due. events/log-subscribers.ts holds the state per
 * subscriber and sends the pokes; the subscription's object (webhook-object.ts) processes them.
 *
 * What the log knows of a subscriber lives in its instance's memory only: the seq every
 * occurrence below which the subscriber confirmed processed (`confirmed`), and the head the poke
 * in flight carries (`inFlight`). Nothing of it is stored: a fresh instance knows none (`null`),
 * so every subscriber is owed a poke, and the fan-out check alarm (armed in the turn of the
 * append it covers) sends it. Rules:
 * - at most ONE poke in flight per subscriber: appends during it are carried by the next poke,
 *   sent when it returns `processed` (so pokes per subscriber ≤ 1 per round trip, however fast
 *   emits come);
 * - a poke carries the occurrences from `confirmed` to the head when the log still holds all of
 *   them in memory (its tail: ≤ POKE_TAIL_MAX occurrences and ≤ POKE_TAIL_MAX_BYTES), else none
 *   (the subscriber reads from its own position with the log's `read`);
 * - `processed` confirms up to the head that poke carried; a failure (a throw) confirms nothing
 *   and sends nothing at once: the next append or the check alarm pokes again;
 * - the check alarm is due FANOUT_CHECK_MS after an append with subscribers unless an alarm is
 *   already due by then; after a check it is the sweep's time, or another FANOUT_CHECK_MS while
 *   a confirmation is still owed. Cost: ≤ 2 rows (setAlarm) per window of FANOUT_CHECK_MS in
 *   which the log was appended to (arm, then restore the sweep), shared by all its subscribers,
 *   0 per occurrence.
 */

/** The fan-out check's window: longer than a subscription's attempt timeout (10 s), so a slow but live subscriber is not re-poked. */
export const FANOUT_CHECK_MS = 30_000;
/** The most occurrences a log keeps in memory for pokes (ATTACH_BACKLOG_MAX's bound). */
export const POKE_TAIL_MAX = 64;
/** The most data bytes (JSON text length) a log keeps in memory for pokes. */
export const POKE_TAIL_MAX_BYTES = 1024 * 1024;

/** What an instance of the log knows of one subscriber (never stored). */
export interface FanoutState {
  /** Every occurrence below it is processed by the subscriber (confirmed, or its start); null: unknown. */
  readonly confirmed: number | null;
  /** The head the poke in flight carries; null: none in flight. */
  readonly inFlight: number | null;
}

/** A subscriber this instance knows nothing of: owed a poke without occurrences. */
export const UNKNOWN: FanoutState = { confirmed: null, inFlight: null };

/** The occurrences the log holds in memory: seqs `from` ≤ seq < `to`. */
export interface TailRange {
  readonly from: number;
  readonly to: number;
}

/** A poke to send: up to `head`, carrying the occurrences from `from` (null: none, the subscriber reads). */
export interface PokePlan {
  readonly head: number;
  readonly from: number | null;
}

/** How a poke came back: `gone` is the subscriber's (the log drops its row); a throw is `failed`. */
export type PokeOutcome = 'processed' | 'gone' | 'failed';

/** Whether the subscriber is owed a confirmation to `head` (in flight or not). */
export function owes(state: FanoutState, head: number): boolean {
  return state.confirmed === null || state.confirmed < head;
}

/**
 * The poke `state`'s subscriber gets now at `head`, or null: one is in flight (its return sends
 * the rest), or nothing is owed. It carries occurrences only when the tail holds every one from
 * `confirmed` up to the head.
 */
export function planPoke(state: FanoutState, head: number, tail: TailRange): PokePlan | null {
  if (state.inFlight !== null || !owes(state, head)) return null;
  const from = state.confirmed;
  const carried = from !== null && tail.from <= from && tail.to === head;
  return { head, from: carried ? from : null };
}

/** `state` with its poke to `head` sent. */
export function sent(state: FanoutState, plan: PokePlan): FanoutState {
  return { confirmed: state.confirmed, inFlight: plan.head };
}

/**
 * `state` after its poke to `carried` came back (null: `gone`, the row is dropped), and the
 * poke owed at once: only after `processed` (coalescing: what was appended meanwhile), never
 * after a failure (the next append or the check alarm pokes again, so a dead subscriber is not
 * poked in a loop).
 */
export function settle(
  state: FanoutState,
  carried: number,
  outcome: PokeOutcome,
  head: number,
  tail: TailRange,
): { readonly state: FanoutState; readonly next: PokePlan | null } | null {
  if (outcome === 'gone') return null;
  if (outcome === 'failed') return { state: { confirmed: state.confirmed, inFlight: null }, next: null };
  const confirmed = state.confirmed === null ? carried : Math.max(state.confirmed, carried);
  const settled = { confirmed, inFlight: null };
  return { state: settled, next: planPoke(settled, head, tail) };
}

/**
 * The alarm to set in an append's turn (null: none): with subscribers, one due by
 * `now + FANOUT_CHECK_MS` unless `alarmAt` (the alarm set, null: none) is due by then already.
 */
export function checkToArm(now: number, hasSubscribers: boolean, alarmAt: number | null): number | null {
  if (!hasSubscribers) return null;
  const due = now + FANOUT_CHECK_MS;
  return alarmAt !== null && alarmAt <= due ? null : due;
}

/** The alarm after a check: the sweep's time (null: nothing to sweep), or sooner while a confirmation is owed. */
export function nextAlarm(now: number, sweepDue: number | null, owed: boolean): number | null {
  if (!owed) return sweepDue;
  const check = now + FANOUT_CHECK_MS;
  return sweepDue === null ? check : Math.min(sweepDue, check);
}

/** How many of the oldest tail entries to drop so that ≤ POKE_TAIL_MAX entries and ≤ POKE_TAIL_MAX_BYTES remain (`sizes` oldest first). */
export function tailOverflow(sizes: readonly number[], maxCount = POKE_TAIL_MAX, maxBytes = POKE_TAIL_MAX_BYTES): number {
  let bytes = sizes.reduce((sum, size) => sum + size, 0);
  let drop = 0;
  while (drop < sizes.length && (sizes.length - drop > maxCount || bytes > maxBytes)) {
    bytes -= sizes[drop]!;
    drop++;
  }
  return drop;
}
