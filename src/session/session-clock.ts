/**
 * The object's alarm is the session's idle expiry. An idle session — no request for
 * SESSION_TTL_MS, no client attached, no call running here — is deleted whole, so it answers
 * 404 from then on and is never re-created. It is the only cleanup: events are not removed one
 * by one when their stream ends (each delete is a row written, dearer than months of storing
 * the event), they go with the rest of the session's storage.
 *
 * Activity costs no write on a call: a request that opens a stream records its time in the
 * stream's row (opened_at), which it writes anyway. Only a request that opens none (a resume,
 * a notification) records it in the session row, at most once a second (once per hundredth of
 * the TTL, for a TTL under 100 s).
 */
import { log } from '../core/log.ts';
import type { SessionStore } from './session-store.ts';

export interface AlarmState {
  readonly now: number;
  readonly lastActiveAt: number;
  /** A client attached, or a call running in this instance. */
  readonly busy: boolean;
  readonly sessionTtlMs: number;
}

/** Whether the session has been idle for its whole TTL, and so expires now. */
export const isExpired = ({ now, lastActiveAt, busy, sessionTtlMs }: AlarmState): boolean => !busy && now >= lastActiveAt + sessionTtlMs;

/** When the alarm should fire next: the session's expiry, postponed by a whole TTL while it is busy. */
export const nextAlarm = ({ now, lastActiveAt, busy, sessionTtlMs }: AlarmState): number =>
  busy ? now + sessionTtlMs : lastActiveAt + sessionTtlMs;

export class SessionClock {
  /** When this instance last wrote the session's activity time. */
  #touchedAt = 0;
  /** The scheduled alarm (ms), null for none, undefined until read from storage. */
  #alarmAt: number | null | undefined;
  #arming: Promise<void> = Promise.resolve();

  readonly #storage: DurableObjectStorage;
  readonly #sessions: SessionStore;
  readonly #sessionTtlMs: number;

  constructor(storage: DurableObjectStorage, sessions: SessionStore, sessionTtlMs: number) {
    this.#storage = storage;
    this.#sessions = sessions;
    this.#sessionTtlMs = sessionTtlMs;
  }

  /**
   * Records the activity of a request that opened no stream, at most once a second (once per
   * hundredth of a TTL under 100 s): a staleness the expiry cannot notice, for one write less
   * on nearly every such request.
   */
  touch(): void {
    const now = Date.now();
    if (now - this.#touchedAt < Math.min(1_000, this.#sessionTtlMs / 100)) return;
    this.#touchedAt = now;
    this.#sessions.touch(now);
  }

  /**
   * The session was just created, in an object that held nothing. Any alarm such an object may
   * still hold (the session's end removes its alarm first, so at most one left by a crash)
   * belongs to no session: the first `arm` replaces it without reading it.
   */
  created(at: number): void {
    this.recorded(at);
    this.#alarmAt = null;
  }

  /** The session was recorded active at `at` by a write of its own (created, a stream opened). */
  recorded(at: number): void {
    this.#touchedAt = Math.max(this.#touchedAt, at);
  }

  /**
   * Moves the alarm earlier if `at` is sooner than what is scheduled. Calls are chained, so
   * two of them can never interleave between reading and setting the alarm.
   */
  arm(at: number): void {
    this.#setAlarmIf(at, (scheduled) => scheduled === null || scheduled > at);
  }

  /**
   * Sets the alarm at `at` only if none is scheduled: a revived session whose alarm was lost
   * (a `setAlarm` that failed) would otherwise never expire. One read when an alarm is set, as
   * it nearly always is; `at` may be past (its expiry is then checked at once, and re-armed).
   */
  ensureArmed(at: number): void {
    this.#setAlarmIf(at, (scheduled) => scheduled === null);
  }

  /** Sets the alarm at `at` if `due` says so of the scheduled one (read once), chained after any setting before. */
  #setAlarmIf(at: number, due: (scheduled: number | null) => boolean): void {
    this.#arming = this.#arming
      .then(async () => {
        if (this.#alarmAt === undefined) this.#alarmAt = await this.#storage.getAlarm();
        if (!due(this.#alarmAt)) return;
        this.#alarmAt = at;
        await this.#storage.setAlarm(at);
      })
      .catch((error: unknown) => {
        // Not known to be set: the next setting reads the alarm again rather than trusting `at`.
        this.#alarmAt = undefined;
        log({ msg: 'mcp.session.alarm_error', error: String(error) });
      });
  }

  /** The alarm fired: nothing is scheduled until it is armed again. */
  fired(): void {
    this.#alarmAt = null;
  }

  /** The session is gone: no alarm any more. */
  async disarm(): Promise<void> {
    await this.#storage.deleteAlarm();
    this.#alarmAt = null;
  }
}
