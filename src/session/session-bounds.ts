/**
 * The per-session bounds: on stored events (`MAX_SESSION_EVENTS`, `MAX_SESSION_BYTES`), and on
 * what a session may ask for — requests in its life (`MAX_SESSION_REQUESTS`) and calls running
 * at once (`MAX_RUNNING_CALLS`), refused before anything is stored (`admit`, `admitCalls`).
 * SessionStreams asks here before it opens a stream or holds an event; what it stores and
 * delivers is its own.
 *
 * The stored events: an instance learns the stored totals before its first write, then keeps
 * them in step with every write; what a rolled-back transaction changed is forgotten with
 * `forget`.
 *
 * Counting every event at each wake would read the whole log: a session of 10,000 events
 * woken once a minute would read more, at a thousandth of a write a row, than its calls
 * write. So an instance starts from a bound (EventLog.totalsBound: the newest stream's record
 * and the events of the streams opened since the oldest call then running), at least the
 * totals, and counts exactly only once the bound says a limit is reached — so what is pruned
 * is exactly what the bounds demand. Each new stream records what the instance holds.
 */
import { httpErrors, type JsonRpcId } from '../core/errors.ts';
import type { EventLog } from './event-log.ts';

export interface Limits {
  readonly maxSessionEvents: number;
  readonly maxSessionBytes: number;
  /** Requests with an id and GET streams the session may make in its life (MAX_SESSION_REQUESTS). */
  readonly maxSessionRequests: number;
  /** Requests the session's open request streams may carry at once, a batch's counted whole until its stream ends (MAX_RUNNING_CALLS). */
  readonly maxRunningCalls: number;
}

export class SessionBounds {
  /** Stored events and their size in UTF-8 bytes, or at least them (until #exact); undefined until read. */
  #stored: { events: number; bytes: number } | undefined;
  #exact = false;

  readonly #log: EventLog;
  readonly #limits: Limits;

  constructor(log: EventLog, limits: Limits) {
    this.#log = log;
    this.#limits = limits;
  }

  /**
   * Refuses `requests` more if the session would pass MAX_SESSION_REQUESTS: every request id
   * stays stored for the session's life (never reused; a re-sent request is recognised, not
   * run again), so their number is the session's to bound — forgetting any would break that.
   */
  admit(requests: number, id: JsonRpcId | null): void {
    const { maxSessionRequests } = this.#limits;
    if (this.#log.requestsMade() + requests > maxSessionRequests) throw httpErrors.sessionFull(maxSessionRequests, id);
  }

  /**
   * Refuses `requests` more calls if, with the `running` ones, they would pass
   * MAX_RUNNING_CALLS. Every call runs at once, and keeps the object resident until it ends:
   * bounded per session, counted in calls (a 2025-03-26 batch as the requests it carries), not
   * in streams.
   */
  admitCalls(running: number, requests: number, id: JsonRpcId | null): void {
    const { maxRunningCalls } = this.#limits;
    if (running + requests > maxRunningCalls) throw httpErrors.tooManyRunningCalls(maxRunningCalls, id);
  }

  /** Whether an event of `bytes` can be stored within both bounds on stored events, pruning nothing. */
  fits(totals: { readonly events: number; readonly bytes: number }, bytes: number): boolean {
    return totals.events < this.#limits.maxSessionEvents && totals.bytes + bytes <= this.#limits.maxSessionBytes;
  }

  /**
   * Counts events stored (`newest` among them) or removed, and keeps the stored events within
   * the session's bounds: past either bound, exactly as many events as it takes to get back
   * within it are pruned (ended streams' events first, then open streams', the oldest stream's
   * oldest first; EventLog.pruneOldest). The event just stored always stays.
   * Cursors into pruned events are then refused with 410 `events_pruned`.
   */
  account(totals: { events: number; bytes: number }, events: number, bytes: number, newest?: { stream: number; seq: number }): void {
    totals.events += events;
    totals.bytes += bytes;
    if (newest === undefined) return; // nothing was added
    let excess = this.#excess(totals);
    if (excess === undefined) return;
    if (!this.#exact) {
      // Past a limit by the bound: count, then prune only what the real totals demand.
      Object.assign(totals, this.#log.totals());
      this.#exact = true;
      excess = this.#excess(totals);
      if (excess === undefined) return;
    }
    const removed = this.#log.pruneOldest(excess, newest);
    totals.events -= removed.events;
    totals.bytes -= removed.bytes;
  }

  /** What `totals` hold past the bounds on stored events, or undefined if they are within both. */
  #excess({ events, bytes }: { readonly events: number; readonly bytes: number }): { events: number; bytes: number } | undefined {
    const { maxSessionEvents, maxSessionBytes } = this.#limits;
    if (events <= maxSessionEvents && bytes <= maxSessionBytes) return undefined;
    return { events: Math.max(0, events - maxSessionEvents), bytes: Math.max(0, bytes - maxSessionBytes) };
  }

  /**
   * The stored totals, or at least them, read from storage before this instance's first write
   * (the object is the caller's to keep in step, through `account`).
   */
  totals(): { events: number; bytes: number } {
    if (this.#stored === undefined) {
      const bound = this.#log.totalsBound();
      this.#exact = bound === undefined;
      this.#stored = { ...(bound ?? this.#log.totals()) };
    }
    return this.#stored;
  }

  /** The schema was just created: no event is stored, exactly. */
  created(): void {
    this.#stored = { events: 0, bytes: 0 };
    this.#exact = true;
  }

  /** Read the totals from storage again: what this instance counted may have rolled back. */
  forget(): void {
    this.#stored = undefined;
    this.#exact = false;
  }
}
