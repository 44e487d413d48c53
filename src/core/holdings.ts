/**
 * What one principal holds (its live sessions, its unexpired tasks) and whether it may hold
 * one more: the decision table of the principal registry (principals/principal-registry.ts),
 * pure, so every case is tested without storage.
 *
 * The registry is told of a session when it is created and when it is ended by a DELETE or
 * an operator, but not when it expires idle (an expiring session knows no principal, and
 * telling would cost a request per session for a row the registry can drop later for free).
 * So its rows may include expired sessions; only when they would refuse a creation does it
 * find out which, by asking PROBE_BATCH of their objects (`probe`): consecutive rows from a
 * place the caller draws at random, so that live sessions among the oldest cannot hide, on
 * every attempt, expired ones behind them. A task's expiry is known when
 * it is created (`createdAt + ttlMs`), so expired tasks are simply not counted.
 */

export type HoldingKind = 'session' | 'task';

export interface Holding {
  readonly kind: HoldingKind;
  readonly id: string;
  /** The OAuth grant it was created under ('' when the principal has no grants: AUTH=jwt). */
  readonly grant: string;
  readonly createdAt: number;
  /** When a task expires; null for a session (which expires when idle, unknown here). */
  readonly expiresAt: number | null;
}

export interface AdmissionState {
  readonly kind: HoldingKind;
  /** The most the principal may hold of `kind`; 0 = unbounded. */
  readonly limit: number;
  /** Its rows of `kind`, oldest first. */
  readonly held: readonly Holding[];
  readonly now: number;
  /** Whether the caller has probed the sessions this table asked it to (`probe`), this admission. */
  readonly probed: boolean;
  /** Where the sessions to probe start, any integer ≥ 0 (taken modulo the rows): drawn at random by the caller. */
  readonly probeFrom?: number;
}

export type Admission =
  /** Hold one more; `drop` are rows to delete on the way (expired tasks). */
  | { readonly kind: 'admit'; readonly drop: readonly string[] }
  /** Ask these sessions' objects whether they are still stored, then decide again. */
  | { readonly kind: 'probe'; readonly sessions: readonly string[] }
  /** At the limit. For tasks, `retryAt` is when the first of them expires. */
  | { readonly kind: 'refuse'; readonly drop: readonly string[]; readonly retryAt: number | null };

/**
 * Rows of one kind past which an unbounded principal's registry is swept all the same (so its
 * storage stays bounded, and so does what a revocation reads).
 */
export const SWEEP_ROWS = 1_000;

/** Sessions probed per admission: each probe is a subrequest of the request creating a session. */
export const PROBE_BATCH = 32;

export function decideAdmission({ kind, limit, held, now, probed, probeFrom = 0 }: AdmissionState): Admission {
  const sweepAt = limit > 0 ? limit : SWEEP_ROWS;
  if (held.length < sweepAt) return { kind: 'admit', drop: [] };
  if (kind === 'session') {
    // Rows are swept by their objects' answers (the caller then drops what is gone and asks
    // again); what is left is live, or at least not yet known not to be.
    if (!probed) return { kind: 'probe', sessions: probeWindow(held, probeFrom).map((h) => h.id) };
    return limit > 0 ? { kind: 'refuse', drop: [], retryAt: null } : { kind: 'admit', drop: [] };
  }
  const expired = held.filter((h) => h.expiresAt !== null && h.expiresAt <= now).map((h) => h.id);
  const live = held.length - expired.length;
  if (limit === 0 || live < limit) return { kind: 'admit', drop: expired };
  const retryAt = Math.min(...held.filter((h) => h.expiresAt !== null && h.expiresAt > now).map((h) => h.expiresAt!));
  return { kind: 'refuse', drop: expired, retryAt: Number.isFinite(retryAt) ? retryAt : null };
}

/** PROBE_BATCH rows (or all) from `from`, wrapping past the last to the first. */
function probeWindow(held: readonly Holding[], from: number): readonly Holding[] {
  if (held.length <= PROBE_BATCH) return held;
  const start = from % held.length;
  return [...held.slice(start, start + PROBE_BATCH), ...held.slice(0, Math.max(0, start + PROBE_BATCH - held.length))];
}
