/**
 * How long and how many occurrences an event type's log keeps (docs/events.md, *Retention*):
 * declared with the type (event-type.ts), applied by its log's object (event-log-object.ts). A
 * cursor behind what is kept is answered `truncated: true` with a fresh cursor, never a skip.
 */
export interface Retention {
  /** Occurrences older than this (by the time the log stored them) are deleted, at most RETENTION_SWEEP_MS late. */
  readonly maxAgeMs: number;
  /** At most this many occurrences are kept (up to an eighth more between deletes: they are batched). */
  readonly maxCount: number;
}

export const DEFAULT_RETENTION: Retention = { maxAgeMs: 7 * 24 * 3_600_000, maxCount: 1_000 };
/** The most a type may keep: the first deduplicating emit after its log wakes reads each retained author's id once. */
export const MAX_RETAINED_COUNT = 100_000;

/** `retention` over the defaults, checked: a declaration error names the type. */
export function retentionOf(type: string, retention: Partial<Retention> | undefined): Retention {
  const { maxAgeMs, maxCount } = { ...DEFAULT_RETENTION, ...retention };
  if (!Number.isSafeInteger(maxAgeMs) || maxAgeMs < 1) throw new TypeError(`event type ${type}: retention.maxAgeMs is a positive integer`);
  if (!Number.isSafeInteger(maxCount) || maxCount < 1 || maxCount > MAX_RETAINED_COUNT) {
    throw new TypeError(`event type ${type}: retention.maxCount is an integer from 1 to ${MAX_RETAINED_COUNT}`);
  }
  return { maxAgeMs, maxCount };
}
