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
 * Keyed by stream: one request stream carries one call, or one 2025-03-26 batch of them, and
 * counts as the requests it carries (a batch's until its stream ends), which MAX_RUNNING_CALLS
 * bounds.
 *
 * While the request that opened a stream is being served, that request keeps the object: a
 * stream is handed to `waitUntil` only if it is still open when its request is answered
 * (`detach`). A call answered within its own request (an echo) never needs it.
 */
export class Residency {
  /**
   * Open request streams of this instance → the requests each carries, and what settles the
   * promise `waitUntil` was given for it (none while its own request is still being served).
   */
  readonly #held = new Map<number, { readonly requests: number; settle: (() => void) | undefined }>();
  #requests = 0;

  readonly #waitUntil: (until: Promise<void>) => void;

  constructor(waitUntil: (until: Promise<void>) => void) {
    this.#waitUntil = waitUntil;
  }

  /** Keeps the object resident until `release(stream)` (or `releaseAll`): a stream carrying `requests`, opened by the request being served. */
  hold(stream: number, requests = 1): void {
    if (this.#held.has(stream)) return;
    this.#held.set(stream, { requests, settle: undefined });
    this.#requests += requests;
  }

  /**
   * The request being served is answered: every stream still open goes on keeping the object
   * resident by itself, until it ends.
   */
  detach(): void {
    for (const held of this.#held.values()) {
      if (held.settle === undefined) this.#waitUntil(new Promise<void>((settle) => (held.settle = settle)));
    }
  }

  release(stream: number): void {
    const held = this.#held.get(stream);
    if (held === undefined) return;
    held.settle?.();
    this.#held.delete(stream);
    this.#requests -= held.requests;
  }

  /** The session is gone: nothing it ran needs the object any more. */
  releaseAll(): void {
    for (const { settle } of this.#held.values()) settle?.();
    this.#held.clear();
    this.#requests = 0;
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

  /** How many requests the streams that hold it carry: the calls running here. */
  get requests(): number {
    return this.#requests;
  }
}
