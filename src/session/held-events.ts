/**
 * Events held for a moment on the hot path. Every outgoing message is stored before it is
 * delivered (session-streams.ts), one transaction each — but for throughput, an event on the
 * hot path (a notification within bounds) is held here and stored with the events around it
 * in one multi-row INSERT (EventLog.appendMany, at most APPEND_BATCH rows), then delivered.
 *
 * Held events are stored before anything else reads or changes the log, so no reader can
 * tell: every SessionStreams method starts by storing them (`store`), and its `log` stores
 * them before it is handed out. None is delivered before it is stored. What decides that an
 * event may be held, and what it counts towards the session's bounds, is SessionStreams'
 * (emit); this file holds them, stores them, and undoes what a failed store believed.
 */
import { log } from '../core/log.ts';
import type { ConnectionTable } from './connection-table.ts';
import type { EventLog } from './event-log.ts';
import { APPEND_BATCH, type StoredRow } from './event-rows.ts';
import type { SessionBounds } from './session-bounds.ts';
import type { StreamCache } from './stream-cache.ts';

/** An event held, with what its delivery needs: its event id and its size in UTF-8 bytes. */
export type HeldEvent = StoredRow & { readonly id: string; readonly bytes: number };

export class HeldEvents {
  /** Hot-path events not yet stored, in emission order; none was delivered. Stored when the turn ends. */
  #held: HeldEvent[] = [];
  #storeTimer: number | undefined;

  readonly #log: EventLog;
  readonly #cache: StreamCache;
  readonly #connections: ConnectionTable;
  readonly #bounds: SessionBounds;

  constructor(log: EventLog, cache: StreamCache, connections: ConnectionTable, bounds: SessionBounds) {
    this.#log = log;
    this.#cache = cache;
    this.#connections = connections;
    this.#bounds = bounds;
  }

  /** Holds `event` (its stream's next, counted already), to be stored with its neighbours. */
  hold(event: HeldEvent): void {
    this.#held.push(event);
    if (this.#storeTimer === undefined) {
      // The first event of a turn is stored at once, so it commits, and can leave, as soon
      // as the turn ends; those after it wait for company until the turn is over.
      this.#storeTimer = setTimeout(() => this.#storeLater(), 0);
      this.store();
    } else if (this.#held.length >= APPEND_BATCH) {
      this.store();
    }
  }

  /**
   * Stores the held events in one statement, then delivers them. If storing fails, none was
   * stored or delivered: what this instance believed about those streams is forgotten (and
   * read again from storage), and their connections end, so each client resumes from the
   * last event it really received — never across a gap.
   */
  store(): void {
    if (this.#held.length === 0) return;
    const held = this.#held;
    this.#held = [];
    try {
      this.#log.appendMany(held);
    } catch (error) {
      for (const { stream } of held) {
        this.#cache.drop(stream);
        this.#connections.close(stream);
      }
      this.#bounds.forget();
      throw error;
    }
    for (const { stream, seq, id, message, bytes } of held) this.#connections.deliver(stream, { seq, id, data: message, bytes });
  }

  /** The end of the turn that emitted held events: nobody to throw to, so the failure is logged. */
  #storeLater(): void {
    this.#storeTimer = undefined;
    try {
      this.store();
    } catch (error) {
      log({ msg: 'mcp.session.store_error', error: String(error) });
    }
  }

  /** The session is being deleted: held events are dropped with the rest of its storage, never stored. */
  drop(): void {
    this.#held = [];
    if (this.#storeTimer !== undefined) clearTimeout(this.#storeTimer);
    this.#storeTimer = undefined;
  }
}
