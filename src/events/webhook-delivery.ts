/**
 * A webhook subscription's attempts and what each leads to (MCP Events, SEP-3415, *Webhook event
 * delivery*; docs/events.md, *Webhooks*): first attempts of new occurrences, retries of failing
 * rows, and the `gap` and `terminated` envelopes, each judged by core/webhook-retry.ts
 * `nextAttempt` and its decision stored (webhook-store.ts says the rows). Where occurrences come
 * from (a poke, log pages) is webhook-feed.ts's; when the object wakes, webhook-object.ts's.
 *
 * - At most MAX_IN_FLIGHT POSTs at once, completing in any order: the body's `cursor` is the safe
 *   watermark at send time (core/webhook-watermark.ts), counting what is in flight as pending,
 *   so "It does not include `cursor_N` in event N's payload until the events at positions before
 *   N have been acknowledged or given up on" holds whatever the order of answers.
 * - `webhook-id` is the occurrence's `eventId` on every attempt ("the stable identifier for
 *   deduplication"); a control envelope's is drawn once and stored with it.
 * - delivered (2xx) or declined (410: "MUST treat `410` as a non-retryable failure for that
 *   delivery … without affecting the subscription itself") → nothing stored for a first attempt,
 *   the row deleted for a retry; retry → the row inserted or updated with its time; give up →
 *   the row `abandoned`: the watermark stops there until a `gap` envelope announcing it is
 *   acknowledged; suspend → the subscription suspended, the row kept pending (held).
 * - The breaker (core/webhook-schedule.ts) stops first attempts of new occurrences but for its
 *   probe: the earliest held one, first-attempted a step after the last failure (the step
 *   doubling per failure since the breaker opened, at most PROBE_MAX_MS), alone, its outcome
 *   awaited before anything else starts; a terminating or ending subscription starts no POST of
 *   an event.
 * - Every attempt, of an event or an envelope, is judged in one place (`#judge`), which writes
 *   its `webhook_attempt` point (core/metrics.ts webhookAttemptEvent: no URL, no host, no id):
 *   no row, an Analytics Engine point, nothing where MCP_METRICS is not bound. A scan stopped by
 *   a suspension or the breaker writes one `held` point (attempt 0), not one per occurrence.
 */
import type { CursorKeys } from '../core/event-cursor.ts';
import type { JsonObject } from '../core/events-wire.ts';
import { controlWebhookId, deliveryBody, gapEnvelope } from '../core/events-webhook-wire.ts';
import { nextAttempt, type AttemptOutcome, type DeliveryDecision, type DeliveryProgress } from '../core/webhook-retry.ts';
import { ALARM_BATCH, BREAKER_STREAK, MAX_IN_FLIGHT, probeDelay, type StartMode, startMode } from '../core/webhook-schedule.ts';
import { gapToAnnounce, type TrackedOccurrence, watermark } from '../core/webhook-watermark.ts';
import { WEBHOOK_HELD, webhookAttemptEvent } from '../core/metrics.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { WebhookConfig } from './webhook-config.ts';
import { sealPosition, sendAttempt } from './webhook-send.ts';
import type { FailingRow, PendingEnvelope, SubscriptionRecord, WebhookStore } from './webhook-store.ts';

/** An occurrence as delivered: its seq in the log, and what its body carries. */
export interface Occurrence {
  readonly seq: number;
  /** When the log stored it: a first attempt's lag is measured from it. */
  readonly storedAt: number;
  readonly eventId: string;
  readonly timestamp: string;
  readonly data: JsonObject;
}

export interface DelivererOptions {
  readonly store: WebhookStore;
  readonly config: WebhookConfig;
  readonly keys: () => Promise<CursorKeys>;
  /** true once no event POST may start: the subscription is terminating or ending. */
  readonly stopped: () => boolean;
  /** Where each attempt's point goes (Metrics.off where MCP_METRICS is not bound). */
  readonly metrics: Metrics;
  readonly random?: () => number;
}

/** At most `size` promises running; `slot()` waits for room. */
class Window {
  readonly #running = new Set<Promise<void>>();
  constructor(readonly size: number) {}
  async slot(): Promise<void> {
    while (this.#running.size >= this.size) await Promise.race(this.#running);
  }
  run(task: Promise<void>): void {
    const running: Promise<void> = task.finally(() => this.#running.delete(running));
    this.#running.add(running);
  }
  async drain(): Promise<void> {
    await Promise.all(this.#running);
  }
}

export class Deliverer {
  readonly #o: DelivererOptions;
  /** Seqs of first attempts in flight (retries are tracked by their rows). */
  readonly #inFlight = new Set<number>();
  /** When the open breaker's next probe is due (null: at once — nothing failed in this instance yet). In memory: a restart probes at once. */
  #probeAt: number | null = null;
  /** Failures since the breaker opened: the probe's step doubles with each. */
  #failuresOpen = 0;
  /** A matching occurrence is held by the breaker or a suspension (the alarm then carries the probe's time). */
  #holding = false;

  constructor(options: DelivererOptions) {
    this.#o = options;
  }

  get #record(): SubscriptionRecord {
    const record = this.#o.store.record;
    if (record === null) throw new Error('webhook delivery: no subscription record');
    return record;
  }

  /** The safe watermark with every matching occurrence below `scanPos` attempted: failing rows and first attempts in flight block it. */
  watermarkAt(scanPos: number, rows: readonly FailingRow[] = this.#o.store.failing.rows()): number {
    return watermark(scanPos, this.#tracked(scanPos, rows));
  }

  #tracked(scanPos: number, rows: readonly FailingRow[]): TrackedOccurrence[] {
    const tracked: TrackedOccurrence[] = rows.map(({ seq, state }) => ({ seq, state: state === 'abandoned' ? 'abandoned' : 'pending' }));
    const known = new Set(rows.map(({ seq }) => seq));
    for (const seq of this.#inFlight) if (seq < scanPos && !known.has(seq)) tracked.push({ seq, state: 'pending' });
    return tracked;
  }

  /**
   * Whether a new occurrence may be first-attempted now (`start`), only as the open breaker's
   * probe (`probe`), or not (`hold`): active, not stopped, no log reset waiting for its `gap` to
   * be acknowledged (webhook-wake.ts `reset`), and the breaker (core/webhook-schedule.ts).
   */
  startMode(now: number = Date.now()): StartMode {
    const record = this.#o.store.record;
    if (record === null || record.state !== 'active' || this.#o.stopped() || record.gap?.reset !== undefined) return 'hold';
    const probing = this.#inFlight.size > 0 || record.gap !== null || this.#o.store.failing.rows().some((row) => row.state === 'pending');
    return startMode({ health: record.health, probing, inFlight: this.#inFlight.size, probeAt: this.#probeAt, now });
  }

  /** When the alarm must wake for the breaker's probe: only while a matching occurrence is held by it (null otherwise). */
  probeAt(now: number = Date.now()): number | null {
    if (!this.#holding || this.#o.store.record?.state !== 'active') return null;
    return this.#o.store.record.health.consecutiveFailures >= BREAKER_STREAK ? (this.#probeAt ?? now) : null;
  }

  /**
   * First attempts of the occurrences matching `matches`, from `from` on (in seq order). Returns
   * where the scan stopped: past the last occurrence, or at the first one not attempted (the
   * breaker opened, the subscription was suspended or stopped). Every matching occurrence below
   * it is delivered, declined or has its row when this returns.
   */
  async deliverNew(from: number, occurrences: readonly Occurrence[], matches: (data: JsonObject) => boolean): Promise<number> {
    let scanPos = from;
    let held = false;
    const window = new Window(MAX_IN_FLIGHT);
    try {
      for (const occurrence of occurrences) {
        if (occurrence.seq < scanPos) continue;
        if (this.startMode() === 'hold') {
          held = true;
          break;
        }
        if (!matches(occurrence.data)) {
          scanPos = occurrence.seq + 1;
          continue;
        }
        await window.slot();
        const mode = this.startMode();
        if (mode === 'hold') {
          held = true;
          break;
        }
        scanPos = occurrence.seq + 1;
        this.#inFlight.add(occurrence.seq);
        window.run(this.#firstAttempt(occurrence, scanPos));
        // The probe goes alone and its outcome decides what follows: the breaker closed, or still holding.
        if (mode === 'probe') await window.drain();
      }
    } finally {
      await window.drain();
    }
    if (held && occurrences.some(({ seq, data }) => seq >= scanPos && matches(data))) this.noteHeld();
    else if (!held) this.#holding = false;
    return scanPos;
  }

  /** One `held` point, if what stops new first attempts is a suspension or the breaker (not the end of the subscription). */
  noteHeld(): void {
    const record = this.#o.store.record;
    if (record === null || record.state === 'terminating' || this.#o.stopped()) return;
    this.#holding = true;
    this.#o.metrics.write(WEBHOOK_HELD, record.principal);
  }

  async #firstAttempt(occurrence: Occurrence, scanPos: number): Promise<void> {
    try {
      const firstAttemptAt = Date.now();
      const sent = await this.#post(occurrence, scanPos);
      const { decision, now } = this.#judge({ attempts: 1, firstAttemptAt, pausedMs: 0 }, sent, occurrence.storedAt);
      if (decision.kind === 'delivered' || decision.kind === 'declined') return;
      const row: FailingRow = {
        seq: occurrence.seq,
        occurrence: JSON.stringify({ eventId: occurrence.eventId, timestamp: occurrence.timestamp, data: occurrence.data }),
        attempts: 1,
        firstAttemptAt,
        pausedAtFirst: this.#record.pausedTotalMs,
        nextAt: decision.kind === 'retry' ? decision.at : now,
        state: decision.kind === 'give_up' ? 'abandoned' : 'pending',
      };
      // In the same turn as the in-flight mark is dropped (finally): the watermark never loses it.
      this.#o.store.failing.insert(row);
      if (decision.kind === 'suspend') this.#suspend(now);
    } finally {
      this.#inFlight.delete(occurrence.seq);
    }
  }

  /** Retries of the pending rows due by `now`, at most ALARM_BATCH: how many were attempted, and whether more are due. */
  async retryDue(now: number): Promise<{ readonly attempted: number; readonly more: boolean }> {
    const due = this.#o.store.failing
      .rows()
      .filter((row) => row.state === 'pending' && row.nextAt <= now)
      .sort((a, b) => a.nextAt - b.nextAt);
    const window = new Window(MAX_IN_FLIGHT);
    let attempted = 0;
    try {
      for (const row of due.slice(0, ALARM_BATCH)) {
        await window.slot();
        if (this.#record.state !== 'active' || this.#o.stopped()) break;
        attempted++;
        window.run(this.#retry(row));
      }
    } finally {
      await window.drain();
    }
    return { attempted, more: due.length > ALARM_BATCH };
  }

  async #retry(row: FailingRow): Promise<void> {
    const { eventId, timestamp, data } = JSON.parse(row.occurrence) as Omit<Occurrence, 'seq' | 'storedAt'>;
    const sent = await this.#post({ seq: row.seq, eventId, timestamp, data }, this.#record.scannedTo);
    const attempts = row.attempts + 1;
    const pausedMs = this.#record.pausedTotalMs - row.pausedAtFirst;
    const { decision, now } = this.#judge({ attempts, firstAttemptAt: row.firstAttemptAt, pausedMs }, sent);
    if (decision.kind === 'delivered' || decision.kind === 'declined') return this.#o.store.failing.delete([row.seq]);
    const nextAt = decision.kind === 'retry' ? decision.at : now;
    this.#o.store.failing.update({ ...row, attempts, nextAt, state: decision.kind === 'give_up' ? 'abandoned' : 'pending' });
    if (decision.kind === 'suspend') this.#suspend(now);
  }

  /**
   * Draws the `gap` envelope owed for abandoned rows, if none is pending: its cursor the
   * watermark with them counted as passed ("The client persists `cursor` and treats it as
   * `truncated: true`"), its id and body fixed for every attempt. Call with nothing in flight.
   */
  async drawGap(now: number): Promise<void> {
    const record = this.#record;
    if (record.gap !== null) return;
    const announce = gapToAnnounce(record.scannedTo, this.#tracked(record.scannedTo, this.#o.store.failing.rows()));
    if (announce === null) return;
    const cursor = await sealPosition(await this.#o.keys(), record, announce.cursorNext);
    this.#o.store.setGap(newEnvelope('gap', JSON.stringify(gapEnvelope(cursor)), now, announce.seqs));
  }

  /**
   * One attempt of the pending `gap`: acknowledged (or declined) → the rows it announces are
   * deleted (the watermark passes them now) and it is cleared, or, for a log reset's, the
   * subscription moves to the new log; a retry → its next attempt stored. The gap has the
   * policy of any delivery ("SHOULD NOT retry indefinitely"), but an unannounced loss is never
   * passed: when it is given up (attempts or window spent) the subscription is SUSPENDED with
   * the gap kept, its attempts counted afresh and due at once, so the refresh that reactivates
   * the subscription (the client's liveness signal) starts it again; a finite subscription not
   * refreshed ends at its TTL, a no-expiry one is dropped with `terminated` after the policy's
   * time. Written only if the gap is still the one attempted (a reset may have replaced it).
   */
  async attemptGap(): Promise<DeliveryDecision['kind']> {
    const gap = this.#record.gap;
    if (gap === null) return 'delivered';
    const { decision, now, firstAttemptAt } = await this.#attemptEnvelope(gap);
    if (this.#record.gap?.id !== gap.id) return decision.kind;
    if (decision.kind === 'delivered' || decision.kind === 'declined') {
      if (gap.reset !== undefined) {
        this.#o.store.moveToNewLog(gap.reset.logId, gap.reset.earliestSeq);
      } else {
        this.#o.store.failing.delete(gap.seqs ?? []);
        this.#o.store.setGap(null);
      }
    } else if (decision.kind === 'retry') {
      this.#o.store.setGap({ ...gap, attempts: gap.attempts + 1, firstAttemptAt, nextAt: decision.at });
    } else {
      this.#o.store.setGap({ ...gap, attempts: 0, firstAttemptAt: 0, nextAt: now });
      this.#suspend(now);
    }
    return decision.kind;
  }

  /** One attempt of the `terminated` envelope: true when the subscription may end (acknowledged, declined, or retries spent). */
  async attemptTerminated(): Promise<boolean> {
    const terminated = this.#record.terminated;
    if (terminated === null) return true;
    const { decision, firstAttemptAt } = await this.#attemptEnvelope(terminated);
    if (decision.kind !== 'retry') return true;
    this.#o.store.setTerminated({ ...terminated, attempts: terminated.attempts + 1, firstAttemptAt, nextAt: decision.at });
    return false;
  }

  async #attemptEnvelope(envelope: PendingEnvelope): Promise<{ decision: DeliveryDecision; now: number; firstAttemptAt: number }> {
    const firstAttemptAt = envelope.attempts === 0 ? Date.now() : envelope.firstAttemptAt;
    const sent = await this.#send(envelope.id, envelope.body);
    const { decision, now } = this.#judge({ attempts: envelope.attempts + 1, firstAttemptAt, pausedMs: 0 }, sent);
    return { decision, now, firstAttemptAt };
  }

  /** POSTs an occurrence, its body's cursor the watermark at this moment. */
  async #post(occurrence: Omit<Occurrence, 'storedAt'>, scanPos: number): Promise<Sent> {
    const record = this.#record;
    const cursor = await sealPosition(await this.#o.keys(), record, this.watermarkAt(scanPos));
    const { eventId, timestamp, data } = occurrence;
    const body = JSON.stringify(deliveryBody({ eventId, name: record.name, timestamp, data }, cursor));
    return this.#send(eventId, body);
  }

  /** One POST, timed: from its start to its answer or timeout. */
  async #send(webhookId: string, body: string): Promise<Sent> {
    const startedAt = Date.now();
    const outcome = await sendAttempt(this.#record, this.#o.config, webhookId, body);
    return { outcome, startedAt };
  }

  /** Every attempt's judgement, and its point (`storedAt`: an occurrence's first attempt, whose lag is counted). */
  #judge(delivery: DeliveryProgress, { outcome, startedAt }: Sent, storedAt?: number): { decision: DeliveryDecision; now: number } {
    const now = Date.now();
    const { decision, health } = nextAttempt(
      { delivery, health: this.#record.health, now },
      outcome,
      this.#o.random ?? Math.random,
      this.#o.config.retry,
    );
    this.#o.store.noteHealth(health);
    // The breaker's probe: a step after the last failure, doubling per failure while it is open; a 2xx closes it.
    if (health.consecutiveFailures === 0) {
      this.#failuresOpen = 0;
      this.#probeAt = null;
    } else if (health.consecutiveFailures >= BREAKER_STREAK) {
      this.#failuresOpen++;
      this.#probeAt = now + probeDelay(this.#failuresOpen, (this.#o.random ?? Math.random)(), this.#o.config.retry);
    }
    const judged = { attempt: delivery.attempts, outcome, decision: decision.kind, durationMs: now - startedAt, storedAt, now };
    this.#o.metrics.write(webhookAttemptEvent(judged), this.#record.principal);
    return { decision, now };
  }

  #suspend(now: number): void {
    if (this.#record.state === 'active') this.#o.store.suspend(now);
  }
}

/** An attempt's outcome, and when its POST started. */
interface Sent {
  readonly outcome: AttemptOutcome;
  readonly startedAt: number;
}

/** A control envelope owed, not yet attempted, due at `now`. */
export function newEnvelope(type: 'gap' | 'terminated', body: string, now: number, seqs?: readonly number[]): PendingEnvelope {
  return { id: controlWebhookId(type), body, attempts: 0, firstAttemptAt: 0, nextAt: now, ...(seqs === undefined ? {} : { seqs }) };
}
