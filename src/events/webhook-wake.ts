/**
 * What a webhook subscription's object does when it wakes (a poke, its alarm, the backlog after
 * its creation): deliver new occurrences from its position (the poke's, else log pages), retry
 * what is due, settle the `gap` owed, follow a reset of its log, and set its one alarm. The RPC
 * surface, the order of runs and the end are webhook-object.ts's; attempts and what each leads to,
 * webhook-delivery.ts's; where pages come from, webhook-feed.ts's.
 */
import type { CursorKeys } from '../core/event-cursor.ts';
import type { JsonObject } from '../core/events-wire.ts';
import { gapEnvelope } from '../core/events-webhook-wire.ts';
import { alarmTime } from '../core/webhook-schedule.ts';
import type { EventLogNamespace } from './event-logs.ts';
import type { EventType } from './event-type.ts';
import type { WebhookConfig } from './webhook-config.ts';
import { type Deliverer, newEnvelope } from './webhook-delivery.ts';
import { type Page, pokedPage, readPage } from './webhook-feed.ts';
import { sealPosition } from './webhook-send.ts';
import type { SubscriptionRecord, WebhookStore } from './webhook-store.ts';
import type { Poke } from './webhook-subscriptions.ts';

export interface WakeOptions {
  readonly store: WebhookStore;
  readonly deliverer: Deliverer;
  readonly config: WebhookConfig;
  readonly storage: DurableObjectStorage;
  readonly type: (name: string) => EventType | undefined;
  readonly logs: (binding: string) => EventLogNamespace;
  readonly keys: (origin: string) => Promise<CursorKeys>;
  /** true while an unsubscribe waits its turn: no POST starts. */
  readonly ending: () => boolean;
}

export class SubscriptionWake {
  readonly #o: WakeOptions;
  /** The alarm as this instance last read or set it (undefined: not read yet; null: none). */
  #alarmAt: number | null | undefined;

  constructor(options: WakeOptions) {
    this.#o = options;
  }

  /** The alarm fired (it is no longer set), or the storage was emptied. */
  alarmGone(): void {
    this.#alarmAt = null;
  }

  /** An active subscription's alarm run: due retries, the `gap` owed, then held occurrences from the position. */
  async retryAndCatchUp(now: number): Promise<void> {
    const { more } = await this.#o.deliverer.retryDue(now);
    this.#o.store.flushHealth();
    await this.settleGap();
    if (more) {
      await this.#o.storage.setAlarm(Date.now());
      this.#alarmAt = Date.now();
    }
    // Held occurrences (the breaker, a suspension just lifted) flow again from the position, by log pages.
    await this.deliverNew();
  }

  /**
   * New occurrences from the position on: the poke's, else log pages, until the head, the
   * breaker, a suspension or the end stops it. One UPDATE of the position per batch that moved it.
   */
  async deliverNew(poke?: Poke): Promise<void> {
    for (let pokeUnused = poke; ; pokeUnused = undefined) {
      const record = this.#o.store.record;
      if (record === null || record.state !== 'active' || this.#o.deliverer.startMode() === 'hold') {
        if (pokeUnused !== undefined && record !== null && this.#holds(pokeUnused, record)) {
          this.#o.deliverer.noteHeld();
          // Held by the breaker: the alarm carries its probe's time.
          await this.schedule();
        }
        return;
      }
      const type = this.#o.type(record.name);
      if (type === undefined) return;
      const from = record.scannedTo;
      if (pokeUnused !== undefined && pokeUnused.head <= from) return;
      const poked = pokeUnused === undefined ? undefined : pokedPage(pokeUnused, from);
      const page: Page = poked ?? (await readPage(this.#o.logs(record.bindings.logs), record, type.retention, from));
      if (page.kind === 'reset') {
        await this.reset(page.logId, page.earliestSeq);
        continue;
      }
      let start = from;
      if (page.lostTo !== undefined && page.lostTo > from) {
        // The log no longer keeps [from, lostTo): an abandoned marker row holds the watermark there until a `gap` announces the loss.
        this.#o.store.failing.insert({
          seq: from,
          occurrence: 'null',
          attempts: 0,
          firstAttemptAt: 0,
          pausedAtFirst: 0,
          nextAt: 0,
          state: 'abandoned',
        });
        start = page.lostTo;
      }
      const args = JSON.parse(record.args) as JsonObject;
      const end = await this.#o.deliverer.deliverNew(start, page.occurrences, (data) => type.matches(args, data));
      const last = page.occurrences.at(-1);
      const scanned = last === undefined ? start : end;
      if (scanned !== from) this.#o.store.writeProgress(scanned);
      await this.settleGap();
      await this.schedule();
      if (last === undefined || end <= last.seq || poked !== undefined || end >= page.head) return;
    }
  }

  /** Whether `poke` brought an occurrence past the position that the subscription matches (not attempted: held). */
  #holds(poke: Poke, record: SubscriptionRecord): boolean {
    const type = this.#o.type(record.name);
    if (type === undefined) return false;
    const args = JSON.parse(record.args) as JsonObject;
    return (poke.occurrences ?? []).some(({ seq, data }) => seq >= record.scannedTo && type.matches(args, JSON.parse(data) as JsonObject));
  }

  /** The `gap` owed, drawn and attempted when due (abandoned rows, a loss of the log). */
  async settleGap(): Promise<void> {
    const now = Date.now();
    await this.#o.deliverer.drawGap(now);
    const gap = this.#o.store.record?.gap;
    if (gap != null && gap.nextAt <= now && this.#o.store.record?.state === 'active' && !this.#o.ending()) {
      if ((await this.#o.deliverer.attemptGap()) === 'delivered') await this.#o.deliverer.drawGap(Date.now());
    }
  }

  /**
   * The log was reset: the old generation's pending rows are abandoned and a `gap` announces the
   * loss; the subscription moves to the new log (delivery resuming at its earliest kept) only
   * once that gap is acknowledged (webhook-delivery.ts `attemptGap`). Until then no occurrence of
   * the new generation is attempted (`startMode`) and every cursor handed out (a refresh's)
   * is the old log's watermark: docs/events.md's rule, a cursor never passes an occurrence the
   * client was not told it lost. A reset already announced-in-waiting for this log is not drawn
   * again; a second reset before the first gap was acknowledged replaces it (its cursor would
   * name a log that is gone too).
   */
  async reset(logId: string, earliestSeq: number): Promise<void> {
    const record = this.#o.store.record!;
    if (record.gap?.reset?.logId !== logId) {
      const cursor = await sealPosition(await this.#o.keys(record.origin), { ...record, logId }, earliestSeq);
      this.#o.store.resetLog({ ...newEnvelope('gap', JSON.stringify(gapEnvelope(cursor)), Date.now()), reset: { logId, earliestSeq } });
    }
    await this.settleGap();
    // The gap's next attempt (nothing else of this wake sets the alarm while the new generation waits).
    await this.schedule();
  }

  /** The alarm at the earliest time the schedule needs, set when that is earlier than the one set (a setAlarm is a row). */
  async schedule(): Promise<void> {
    const record = this.#o.store.record;
    if (record === null) return;
    const pending = this.#o.store.failing.rows().filter((row) => row.state === 'pending');
    const at = alarmTime(
      {
        state: record.state,
        earliestPendingAt: pending.length === 0 ? null : Math.min(...pending.map((row) => row.nextAt)),
        envelopeAt: (record.state === 'terminating' ? record.terminated : record.gap)?.nextAt ?? null,
        expiresAt: record.expiresAt,
        suspendedAt: record.suspendedAt,
        probeAt: this.#o.deliverer.probeAt(),
      },
      this.#o.config.retry,
    );
    this.#alarmAt ??= await this.#o.storage.getAlarm();
    if (at === null || (this.#alarmAt !== null && this.#alarmAt <= at)) return;
    await this.#o.storage.setAlarm(at);
    this.#alarmAt = at;
  }
}
