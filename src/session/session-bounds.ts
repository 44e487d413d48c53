/**
 * The per-session bounds on stored events (`MAX_SESSION_EVENTS`, `MAX_SESSION_BYTES`). The
 * stored totals are read from storage before an instance's first write, then kept in step
 * with every write; what a rolled-back transaction changed is forgotten with `forget`.
 */
import type { EventLog } from './event-log.ts';

export interface Limits {
  readonly maxSessionEvents: number;
  readonly maxSessionBytes: number;
}

export class SessionBounds {
  /** Stored events and their size in UTF-8 bytes; undefined until read. */
  #stored: { events: number; bytes: number } | undefined;

  readonly #log: EventLog;
  readonly #limits: Limits;

  constructor(log: EventLog, limits: Limits) {
    this.#log = log;
    this.#limits = limits;
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
    const { maxSessionEvents, maxSessionBytes } = this.#limits;
    const excess = { events: Math.max(0, totals.events - maxSessionEvents), bytes: Math.max(0, totals.bytes - maxSessionBytes) };
    if (excess.events === 0 && excess.bytes === 0) return;
    const removed = this.#log.pruneOldest(excess, newest);
    totals.events -= removed.events;
    totals.bytes -= removed.bytes;
  }

  /** Stored totals, read from storage before this instance's first write. */
  totals(): { events: number; bytes: number } {
    this.#stored ??= { ...this.#log.totals() };
    return this.#stored;
  }

  /** Read the totals from storage again: what this instance counted may have rolled back. */
  forget(): void {
    this.#stored = undefined;
  }
}
