/**
 * An event log's webhook subscribers (docs/events.md, *Webhooks*, how occurrences arrive: the log's side):
 * the rows of the subscriptions that read this log, one each, so that the log can poke them
 * after an append. The log keeps WHO reads it, never WHERE each reader stands: a subscription's
 * position is its own object's (webhook-object.ts), so an occurrence costs the log no row per
 * subscriber.
 *
 * The table (`webhook_subscriber`) is created at the first subscriber of a log's life, checked
 * once per wake in `sqlite_master`, not by a schema version of event-log-store.ts: a version bump
 * would write its rows into every existing log at its next open, subscribers or not. Rows, each
 * counted: the table once per log (its CREATE, at the first add), 1 per subscriber added,
 * 1 per subscriber dropped; nothing per append.
 *
 * Which subscriber is poked with what, and when the check alarm is due, is core/webhook-fanout.ts
 * (pure); sending the pokes is event-log-object.ts's.
 */

import {
  type FanoutState,
  owes,
  type PokeOutcome,
  type PokePlan,
  planPoke,
  sent,
  settle,
  type TailRange,
  tailOverflow,
  UNKNOWN,
} from '../core/webhook-fanout.ts';
import type { EventCursor, StartDecision } from '../core/event-cursor.ts';
import type { EventsError } from '../core/events-wire.ts';
import type { LogName, StoredOccurrence } from './event-log-store.ts';
import type { Retention } from './event-retention.ts';
import type { Poke, PokeAnswer } from './webhook-subscriptions.ts';

/** A webhook subscription joining its log. */
export interface AddSubscriberRequest extends LogName {
  readonly retention: Retention;
  /** The subscription's id, and the env key of its namespace: what the log pokes (webhook-subscriptions.ts). */
  readonly subscriber: { readonly id: string; readonly binding: string };
  readonly cursor: EventCursor | null;
  readonly maxAgeMs?: number;
}

export type AddSubscriberAnswer =
  | { readonly refusal: EventsError }
  | {
      readonly logId: string;
      readonly nextSeq: number;
      readonly earliestSeq: number;
      readonly decision: Exclude<StartDecision, { kind: 'refused' }>;
    };

/** A subscriber: its subscription's id, and the env key of the namespace its object is reached by. */
export interface SubscriberRow {
  readonly id: string;
  readonly binding: string;
}

/** How an add went: a new row, the id's row kept (idempotent), or refused at the bound. */
export type SubscriberAdded = 'added' | 'kept' | 'full';

const TABLE = 'webhook_subscriber';

export class LogSubscribers {
  readonly #sql: SqlStorage;
  /** The rows, read once per wake (the object is their only writer); undefined until first asked. */
  #rows: Map<string, string> | undefined;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** Every subscriber, in no promised order (0 rows read after the first call of a wake). */
  list(): SubscriberRow[] {
    return [...this.#loaded()].map(([id, binding]) => ({ id, binding }));
  }

  get size(): number {
    return this.#loaded().size;
  }

  has(id: string): boolean {
    return this.#loaded().has(id);
  }

  /**
   * Adds `id` (1 row; and the table at the log's first subscriber), or keeps its row if it
   * is already there (INSERT OR IGNORE: 0 rows, its binding unchanged); a new id past `max`
   * subscribers is refused and nothing is written. Synchronous, so the caller's start decision
   * and this row share one turn.
   */
  add(row: SubscriberRow, max: number): SubscriberAdded {
    const rows = this.#loaded();
    if (rows.has(row.id)) return 'kept';
    if (rows.size >= max) return 'full';
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (id TEXT PRIMARY KEY, binding TEXT NOT NULL) WITHOUT ROWID`);
    this.#sql.exec(`INSERT OR IGNORE INTO ${TABLE} (id, binding) VALUES (?, ?)`, row.id, row.binding);
    rows.set(row.id, row.binding);
    return 'added';
  }

  /** Drops `id`'s row (1 row; 0 when it is not there). Answers whether one was dropped. */
  remove(id: string): boolean {
    const rows = this.#loaded();
    if (!rows.has(id)) return false;
    this.#sql.exec(`DELETE FROM ${TABLE} WHERE id = ?`, id);
    rows.delete(id);
    return true;
  }

  #loaded(): Map<string, string> {
    if (this.#rows === undefined) {
      const exists = this.#sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`, TABLE).toArray().length > 0;
      this.#rows = new Map(
        exists
          ? this.#sql
              .exec<{ id: string; binding: string }>(`SELECT id, binding FROM ${TABLE}`)
              .toArray()
              .map(({ id, binding }) => [id, binding])
          : [],
      );
    }
    return this.#rows;
  }
}

/** How the fan-out reaches a subscriber and keeps its object alive meanwhile (the log object's). */
export interface PokeSender {
  send(row: SubscriberRow, poke: Poke): Promise<PokeAnswer>;
  /** The row of a subscriber that answered `gone` is dropped. */
  drop(id: string): void;
  keepAlive(promise: Promise<unknown>): void;
}

/** Where the log stands, as pokes tell it. */
export interface Head {
  readonly logId: string;
  readonly head: number;
  readonly earliestSeq: number;
}

interface Entry {
  state: FanoutState;
  /** Bumped at each addSubscriber of the id: a `gone` to a poke sent before the latest add is not believed. */
  epoch: number;
}

/**
 * The fan-out's memory (never stored, core/webhook-fanout.ts): what each subscriber confirmed,
 * which poke is in flight, and the tail of recently appended occurrences the pokes carry.
 */
export class Fanout {
  readonly #entries = new Map<string, Entry>();
  #tail: StoredOccurrence[] = [];
  #at: Head | undefined;

  /** A subscriber joined, starting at `fromSeq` of generation `logId`: pokes carry the occurrences from there when the tail has them. */
  joined(id: string, at: Head, fromSeq: number): void {
    this.#moveTo(at);
    const entry = this.#entry(id);
    entry.epoch++;
    entry.state = { confirmed: fromSeq, inFlight: entry.state.inFlight };
  }

  /** An occurrence was stored: it joins the tail (the oldest dropped past the tail's bounds). */
  appended(occurrence: StoredOccurrence, at: Head): void {
    this.#moveTo(at);
    if (this.#tail.length > 0 && this.#tail.at(-1)!.seq + 1 !== occurrence.seq) this.#tail = [];
    this.#tail.push(occurrence);
    this.#tail.splice(0, tailOverflow(this.#tail.map((o) => o.data.length)));
  }

  /** The log was reset (`at` its new generation): nothing of the old one is known, every subscriber is owed a poke. */
  reset(at: Head): void {
    this.#moveTo(at);
  }

  /** Whether any of `rows` is owed a confirmation to the head (in flight or not). */
  owedAny(rows: readonly SubscriberRow[], at: Head): boolean {
    this.#moveTo(at);
    return rows.some((row) => owes(this.#entry(row.id).state, at.head));
  }

  /**
   * Pokes every one of `rows` owed one and not in flight (after an append, and from the check
   * alarm); answers when each of them came back (the append does not wait: the alarm does).
   */
  pokeAll(rows: readonly SubscriberRow[], at: Head, sender: PokeSender): Promise<void> {
    this.#moveTo(at);
    const runs: Promise<void>[] = [];
    for (const row of rows) {
      const plan = planPoke(this.#entry(row.id).state, at.head, this.#range());
      if (plan !== null) runs.push(this.#poke(row, plan, sender));
    }
    return Promise.all(runs).then(() => undefined);
  }

  #poke(row: SubscriberRow, plan: PokePlan, sender: PokeSender): Promise<void> {
    const entry = this.#entry(row.id);
    const at = this.#at!;
    const { epoch } = entry;
    entry.state = sent(entry.state, plan);
    const occurrences = plan.from === null ? undefined : this.#tail.filter((o) => o.seq >= plan.from!);
    const poke: Poke = { logId: at.logId, head: plan.head, earliestSeq: at.earliestSeq, ...(occurrences && { occurrences }) };
    const run = (async () => {
      let outcome: PokeOutcome;
      try {
        outcome = await sender.send(row, poke);
      } catch {
        outcome = 'failed';
      }
      this.#settled(row, entry, epoch, poke, outcome, sender);
    })();
    sender.keepAlive(run);
    return run;
  }

  #settled(row: SubscriberRow, entry: Entry, epoch: number, poke: Poke, outcome: PokeOutcome, sender: PokeSender): void {
    if (this.#entries.get(row.id) !== entry) return; // forgotten meanwhile (a gone, a removal)
    const now = this.#at!;
    // A poke of an earlier generation confirms nothing of this one; a `gone` older than the latest add is stale.
    const judged =
      poke.logId !== now.logId && outcome === 'processed' ? 'failed' : outcome === 'gone' && epoch !== entry.epoch ? 'failed' : outcome;
    const after = settle(entry.state, poke.head, judged, now.head, this.#range());
    if (after === null) {
      this.#entries.delete(row.id);
      sender.drop(row.id);
      return;
    }
    entry.state = after.state;
    if (after.next !== null) void this.#poke(row, after.next, sender);
  }

  /** A subscriber's row was removed: its memory too. */
  forget(id: string): void {
    this.#entries.delete(id);
  }

  #moveTo(at: Head): void {
    if (this.#at !== undefined && this.#at.logId !== at.logId) {
      for (const entry of this.#entries.values()) entry.state = { confirmed: null, inFlight: entry.state.inFlight };
      this.#tail = [];
    }
    this.#at = at;
  }

  #range(): TailRange {
    const first = this.#tail[0];
    return first === undefined
      ? { from: this.#at?.head ?? 0, to: this.#at?.head ?? 0 }
      : { from: first.seq, to: this.#tail.at(-1)!.seq + 1 };
  }

  #entry(id: string): Entry {
    let entry = this.#entries.get(id);
    if (entry === undefined) {
      entry = { state: UNKNOWN, epoch: 0 };
      this.#entries.set(id, entry);
    }
    return entry;
  }
}
