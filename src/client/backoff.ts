/**
 * When to reconnect a broken stream, and when to give up. Pure: the transport asks, a table
 * test checks the answers.
 *
 * The server's `retry:` (the priming event's, RETRY_MS on this server) is the base delay: it is
 * the server's own statement of how soon a reconnect is welcome. Each further attempt without
 * progress waits `factor` times longer, up to `maxDelayMs`. Attempts count only while nothing is
 * gained: an event that advances the cursor starts the count again, so a call survives any
 * number of breaks as long as each resume gets somewhere — and so does a connection the server
 * accepted and kept open STEADY_CONNECTION_MS or more, though it carried nothing new.
 */

/**
 * How long an accepted connection must have stayed open for its end to count as progress, not
 * as a failed attempt: a server ends connections on purpose (a maximum connection age — SEP-1699
 * polling —, a deploy), and a call or task that waits quietly through a few of them is not
 * failing. One that ends sooner, again and again, still exhausts the attempts.
 */
export const STEADY_CONNECTION_MS = 1_000;
export interface ReconnectOptions {
  /** The base delay when the server sent no `retry:`. */
  readonly initialDelayMs: number;
  /** No wait is longer than this, the server's `retry:` and an answer's `Retry-After` included. */
  readonly maxDelayMs: number;
  readonly factor: number;
  /** Consecutive attempts without progress before the call fails with ReconnectExhaustedError. */
  readonly maxAttempts: number;
}

export const DEFAULT_RECONNECT: ReconnectOptions = {
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  factor: 1.5,
  maxAttempts: 8,
};

export function reconnectOptions(overrides: Partial<ReconnectOptions> = {}): ReconnectOptions {
  const options = { ...DEFAULT_RECONNECT, ...overrides };
  const { initialDelayMs, maxDelayMs, factor, maxAttempts } = options;
  if (![initialDelayMs, maxDelayMs].every((ms) => Number.isFinite(ms) && ms >= 0)) throw new RangeError('delays must be non-negative');
  if (!(Number.isFinite(factor) && factor >= 1)) throw new RangeError(`factor must be at least 1, got ${factor}`);
  if (!(Number.isInteger(maxAttempts) && maxAttempts >= 0))
    throw new RangeError(`maxAttempts must be a non-negative integer, got ${maxAttempts}`);
  return options;
}

/**
 * The wait before reconnect number `attempt` (0 for the first after a break), or undefined when
 * `attempt` is past the limit and the call should fail.
 */
export function reconnectDelay(
  attempt: number,
  serverRetryMs: number | undefined,
  options: ReconnectOptions,
  retryAfterMs?: number,
): number | undefined {
  if (attempt >= options.maxAttempts) return undefined;
  const base = serverRetryMs ?? options.initialDelayMs;
  // An answer's Retry-After (a 429, a 503) is the server's word for this attempt: never sooner.
  return Math.min(options.maxDelayMs, Math.max(base * options.factor ** attempt, retryAfterMs ?? 0));
}
