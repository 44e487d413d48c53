/**
 * Running calls keep their session object resident, whether or not a client is connected.
 *
 * A call outlives its POST: the client may drop the connection and resume the stream later,
 * and the call must still be running then, or finished with its result stored — never cut off
 * because the runtime reclaimed an object that no request was using. On the platform, from
 * compatibility date 2026-10-01, "promises passed to this.ctx.waitUntil() and pending
 * setTimeout() and setInterval() timers" keep a Durable Object running with no client
 * connected. A tool may be waiting on anything else (an outbound fetch, a promise another
 * request settles), so each call's stream hands `waitUntil` a promise that settles when the
 * stream ends: residency follows the call, not what its code happens to await.
 *
 * Keyed by stream: one request stream carries one call, or one 2025-03-26 batch of them.
 */
export class Residency {
  /** Open request streams of this instance → settles the promise that keeps the object resident. */
  readonly #held = new Map<number, () => void>();

  readonly #waitUntil: (until: Promise<void>) => void;

  constructor(waitUntil: (until: Promise<void>) => void) {
    this.#waitUntil = waitUntil;
  }

  /** Keeps the object resident until `release(stream)` (or `releaseAll`). */
  hold(stream: number): void {
    if (this.#held.has(stream)) return;
    this.#waitUntil(new Promise<void>((settle) => this.#held.set(stream, settle)));
  }

  release(stream: number): void {
    this.#held.get(stream)?.();
    this.#held.delete(stream);
  }

  /** The session is gone: nothing it ran needs the object any more. */
  releaseAll(): void {
    for (const settle of this.#held.values()) settle();
    this.#held.clear();
  }

  /** The lowest-numbered stream that holds the object resident, if any: the oldest call running here. */
  get lowest(): number | undefined {
    let lowest: number | undefined;
    for (const stream of this.#held.keys()) if (lowest === undefined || stream < lowest) lowest = stream;
    return lowest;
  }

  /** How many streams hold the object resident. */
  get size(): number {
    return this.#held.size;
  }
}
