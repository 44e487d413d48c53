/**
 * What one principal holds (its live sessions, its unexpired tasks) and whether it may hold
 * one more: the decision table of the principal registry (principals/principal-registry.ts),
 * pure, so every case is tested without storage.
 *
 * The registry is told of a session when it is created and when it is ended by a DELETE or
 * an operator, but not when it expires idle (an expiring session knows no principal, and
 * telling would cost a request per session for a row the registry can drop later for free).
 * So its rows may include expired sessions; only when they would refuse a creation does it
 * find out which, by asking their objects (`probe`). A session's object answers 404 when it is
 * gone, else how long it lives at least (it expires idle no sooner than a TTL after its last
 * activity), which its row keeps (`expiresAt`): until then it is known live and not asked
 * again. At the bound every session not known live is asked — PROBE_BATCH at a time, those
 * never asked first, then those whose known life ran out soonest — before the creation is
 * refused, so that no expired session anywhere among the rows keeps its place: an earlier
 * window of 32 rows let live ones hide the expired ones beyond it. What that costs is bounded:
 * a live session is asked at most once per TTL, while its principal is at its bound, and its
 * answer is one row written. A task's expiry is known when it is created (`createdAt + ttlMs`),
 * so expired tasks are simply not counted, wherever they are among the rows.
 */

/**
 * A webhook subscription (issue 47) is held as a session is: its life is extended by refreshes
 * the registry is not told of, so its row's `expiresAt` is only what its object last told a
 * probe, and at the bound the rows not known live are probed the same way.
 */
export type HoldingKind = 'session' | 'task' | 'webhook';

export interface Holding {
  readonly kind: HoldingKind;
  readonly id: string;
  /** The OAuth grant it was created under ('' when the principal has no grants: AUTH=jwt). */
  readonly grant: string;
  readonly createdAt: number;
  /**
   * When a task expires. For a session, which expires when idle, or a webhook subscription,
   * which expires unless refreshed: the soonest it can, as its object last told a probe (it is
   * live until then); null while no probe has asked it.
   */
  readonly expiresAt: number | null;
}

export interface AdmissionState {
  readonly kind: HoldingKind;
  /** The most the principal may hold of `kind`; 0 = unbounded. */
  readonly limit: number;
  /** Its rows of `kind`, oldest first. */
  readonly held: readonly Holding[];
  readonly now: number;
  /** The sessions this admission has probed already (answered or not): none is asked twice by one admission. */
  readonly probed: readonly string[];
}

export type Admission =
  /** Hold one more; `drop` are rows to delete on the way (expired tasks). */
  | { readonly kind: 'admit'; readonly drop: readonly string[] }
  /** Ask these sessions' (or webhook subscriptions') objects whether they are still stored, then decide again. */
  | { readonly kind: 'probe'; readonly sessions: readonly string[] }
  /** At the limit. For tasks, `retryAt` is when the first of them expires. */
  | { readonly kind: 'refuse'; readonly drop: readonly string[]; readonly retryAt: number | null };

/**
 * Rows of one kind past which an unbounded principal's registry is swept all the same (so its
 * storage stays bounded, and so does what a revocation reads).
 */
export const SWEEP_ROWS = 1_000;

/**
 * Sessions probed at once. Each probe is a subrequest of the request creating a session; an
 * admission at the bound asks batch after batch until one is gone or none is left to ask, so
 * at most its bound's worth of probes (each live session once per TTL: then it is known live).
 */
export const PROBE_BATCH = 32;

export function decideAdmission({ kind, limit, held, now, probed }: AdmissionState): Admission {
  const sweepAt = limit > 0 ? limit : SWEEP_ROWS;
  if (held.length < sweepAt) return { kind: 'admit', drop: [] };
  if (kind === 'session' || kind === 'webhook') {
    // Rows are swept by their objects' answers (the caller then drops what is gone and asks
    // again); what is left is live, or at least not known not to be. Unbounded, one batch.
    const unknown = unknownSessions(held, now, probed);
    if (limit === 0) return probed.length === 0 && unknown.length > 0 ? probeOf(unknown) : { kind: 'admit', drop: [] };
    return unknown.length > 0 ? probeOf(unknown) : { kind: 'refuse', drop: [], retryAt: null };
  }
  const expired = held.filter((h) => h.expiresAt !== null && h.expiresAt <= now).map((h) => h.id);
  const live = held.length - expired.length;
  if (limit === 0 || live < limit) return { kind: 'admit', drop: expired };
  const retryAt = Math.min(...held.filter((h) => h.expiresAt !== null && h.expiresAt > now).map((h) => h.expiresAt!));
  return { kind: 'refuse', drop: expired, retryAt: Number.isFinite(retryAt) ? retryAt : null };
}

/**
 * The sessions not known live at `now` and not probed by this admission: those never asked
 * first, then by how long ago their known life ran out, then oldest first (`held`'s order).
 */
function unknownSessions(held: readonly Holding[], now: number, probed: readonly string[]): readonly Holding[] {
  const asked = new Set(probed);
  return (
    held
      .filter((h) => (h.expiresAt === null || h.expiresAt <= now) && !asked.has(h.id))
      // Stable: equals (two never asked: -Infinity twice, NaN, which sorts as 0) keep `held`'s order.
      .sort((a, b) => (a.expiresAt ?? -Infinity) - (b.expiresAt ?? -Infinity))
  );
}

const probeOf = (unknown: readonly Holding[]): Admission => ({ kind: 'probe', sessions: unknown.slice(0, PROBE_BATCH).map((h) => h.id) });
