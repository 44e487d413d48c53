/**
 * The eventIds a follower (event-follower.ts) handed to its application most recently, so that an
 * occurrence delivered again is dropped: "`eventId` enables client-side deduplication, for example
 * across polls after a crash and restart." Delivery is at-least-once (a cursor is persisted only
 * after the occurrences before it were handed over, so a reconnect may repeat some); this set
 * removes the repeats the follower can see. Bounded: the oldest id leaves when a new one would
 * pass `capacity`, so a follow of any length holds at most `capacity` ids. Repeats older than the
 * window (or from before a process restart) are the application's to drop, by the same eventId.
 */

/** How many recent eventIds a follower remembers unless told otherwise. */
export const DEFAULT_DEDUP_WINDOW = 1_000;

export class RecentEventIds {
  readonly #capacity: number;
  /** Insertion order is age: the first is the oldest. */
  readonly #ids = new Set<string>();

  constructor(capacity: number = DEFAULT_DEDUP_WINDOW) {
    if (!(Number.isSafeInteger(capacity) && capacity >= 1)) throw new RangeError(`dedupWindow must be a positive integer, got ${capacity}`);
    this.#capacity = capacity;
  }

  has(eventId: string): boolean {
    return this.#ids.has(eventId);
  }

  add(eventId: string): void {
    this.#ids.delete(eventId);
    this.#ids.add(eventId);
    if (this.#ids.size > this.#capacity) this.#ids.delete(this.#ids.values().next().value as string);
  }
}
