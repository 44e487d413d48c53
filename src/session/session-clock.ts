/**
 * The object's one alarm serves both of a session's clocks: idle expiry and event retention.
 * An idle session — no request for SESSION_TTL_MS, no client attached, no call running here —
 * is deleted whole, so it answers 404 from then on and is never re-created.
 */
import { log } from '../core/log.ts';
import type { SessionStore } from './session-store.ts';

export interface AlarmState {
  readonly now: number;
  readonly lastActiveAt: number;
  /** A client attached, or a call running in this instance. */
  readonly busy: boolean;
  readonly sessionTtlMs: number;
  readonly retentionMs: number;
}

/** Whether the session has been idle for its whole TTL, and so expires now. */
export const isExpired = ({ now, lastActiveAt, busy, sessionTtlMs }: AlarmState): boolean => !busy && now >= lastActiveAt + sessionTtlMs;

/**
 * When the alarm should fire next: the session's expiry (postponed by a whole TTL while it is
 * busy), or the end of the retention of the oldest ended stream that still holds events.
 */
export function nextAlarm(
  { now, lastActiveAt, busy, sessionTtlMs, retentionMs }: AlarmState,
  oldestUnprunedEnd: number | undefined,
): number {
  const expiry = busy ? now + sessionTtlMs : lastActiveAt + sessionTtlMs;
  return Math.min(expiry, oldestUnprunedEnd === undefined ? Infinity : oldestUnprunedEnd + retentionMs);
}

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
   * Records activity for idle expiry, at most once per hundredth of the TTL (and per second):
   * a staleness the expiry cannot notice, for one write less on nearly every request.
   */
  touch(): void {
    const now = Date.now();
    if (now - this.#touchedAt < Math.min(1_000, this.#sessionTtlMs / 100)) return;
    this.#touchedAt = now;
    this.#sessions.touch(now);
  }

  /**
   * Moves the alarm earlier if `at` is sooner than what is scheduled. Calls are chained, so
   * two of them can never interleave between reading and setting the alarm.
   */
  arm(at: number): void {
    this.#arming = this.#arming
      .then(async () => {
        if (this.#alarmAt === undefined) this.#alarmAt = await this.#storage.getAlarm();
        if (this.#alarmAt !== null && this.#alarmAt <= at) return;
        this.#alarmAt = at;
        await this.#storage.setAlarm(at);
      })
      .catch((error: unknown) => log({ msg: 'mcp.session.alarm_error', error: String(error) }));
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
