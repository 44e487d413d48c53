/**
 * Slots of a pool an isolate holds (the listens it serves, the SSE streams it relays), counted
 * per key — a principal, or under AUTH=none a client address — and in all. A stream takes a
 * slot before anything of it is opened and gives it back once when it ends, however it ends
 * and however often its ending is reported, so a pool never counts a stream twice or keeps one
 * that is gone. Pure: no clock, no I/O; the Worker keeps one pool of each kind per isolate.
 *
 * Why per key: a pool bounded only in all is one that one client can fill, and then every
 * other client is refused until it lets go (issue 42: one user held an isolate's 1,024 listen
 * slots). A key's bound below the total leaves the rest to others.
 */

/** Gives a slot back; only its first call counts. */
export type Release = () => void;

/** Why no slot was given: the key holds its bound, or the pool holds its total. */
export type SlotRefusal = 'key' | 'total';

export class SlotPool {
  readonly #perKey: number;
  readonly #total: number;
  readonly #held = new Map<string, number>();
  #open = 0;

  /** `perKey`, `total`: the bounds; 0 leaves that one unbounded. */
  constructor(perKey: number, total = 0) {
    if (!Number.isSafeInteger(perKey) || perKey < 0 || !Number.isSafeInteger(total) || total < 0) {
      throw new RangeError('a slot bound is a non-negative integer (0: unbounded)');
    }
    this.#perKey = perKey;
    this.#total = total;
  }

  /** The bound per key (0: none). */
  get perKey(): number {
    return this.#perKey;
  }

  /** The slots held, in all. */
  get open(): number {
    return this.#open;
  }

  /** The slots `key` holds. */
  heldBy(key: string): number {
    return this.#held.get(key) ?? 0;
  }

  /**
   * A slot for `key` and how to give it back, or why there is none. The key's bound is
   * checked first: a key at its bound is told so even when the pool is full too, since what
   * it can do about it (end one of its own) does not depend on others.
   */
  take(key: string): Release | SlotRefusal {
    const held = this.heldBy(key);
    if (this.#perKey > 0 && held >= this.#perKey) return 'key';
    if (this.#total > 0 && this.#open >= this.#total) return 'total';
    this.#held.set(key, held + 1);
    this.#open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#open--;
      const left = this.heldBy(key) - 1;
      // A key that holds nothing is forgotten: the map is as large as the keys holding slots.
      if (left > 0) this.#held.set(key, left);
      else this.#held.delete(key);
    };
  }
}
