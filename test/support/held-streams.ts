/**
 * Streams the Worker holds for a client (listens, task streams, a session's SSE responses),
 * opened and told apart for the tests of the per-principal shares: a stream served is kept
 * (its reader, to cancel in a `finally`), a refusal is reduced to what the client can act on.
 */
import { SseReader } from './sse-reader.ts';

/** A refusal as the client sees it: the HTTP status and the JSON-RPC error's code, reason and limit. */
export interface Refusal {
  readonly status: number;
  readonly code: number;
  readonly message: string;
  readonly reason?: string;
  readonly limit?: number;
}

export type Outcome = 'served' | Refusal;

/** Holds what was served, to be let go at the end of a test. */
export class HeldStreams {
  readonly readers: SseReader[] = [];

  /** What `response` was: 'served' (an SSE stream, kept) or its refusal. */
  async outcome(response: Response): Promise<Outcome> {
    if (response.headers.get('Content-Type')?.startsWith('text/event-stream') && response.status === 200) {
      this.readers.push(new SseReader(response));
      return 'served';
    }
    return refusalOf(response);
  }

  /** The outcome of each of `count` requests made one after the other. */
  async outcomes(count: number, open: () => Promise<Response>): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    for (let i = 0; i < count; i++) outcomes.push(await this.outcome(await open()));
    return outcomes;
  }

  /** Cancels the stream served `index`-th (of those kept), as a client that leaves. */
  async leave(index: number): Promise<void> {
    const [reader] = this.readers.splice(index, 1);
    await reader?.cancel();
  }

  async close(): Promise<void> {
    await Promise.all(this.readers.splice(0).map((reader) => reader.cancel()));
  }
}

export async function refusalOf(response: Response): Promise<Refusal> {
  const text = await response.text();
  let error: { code?: number; message?: string; data?: { reason?: string; limit?: number } } | undefined;
  try {
    error = (JSON.parse(text) as { error?: typeof error }).error;
  } catch {
    throw new Error(`not a JSON-RPC answer (${response.status}): ${text.slice(0, 300)}`);
  }
  return {
    status: response.status,
    code: error?.code ?? 0,
    message: error?.message ?? '',
    ...(error?.data?.reason !== undefined && { reason: error.data.reason }),
    ...(error?.data?.limit !== undefined && { limit: error.data.limit }),
  };
}

/**
 * `open` tried until it is served (a released slot is free once the client's leaving has
 * reached the Worker, a moment after its cancel), at most `attempts` times `ms` apart.
 */
export async function servedAgain(held: HeldStreams, open: () => Promise<Response>, attempts = 20, ms = 25): Promise<Outcome> {
  let last: Outcome = { status: 0, code: 0, message: 'never tried' };
  for (let attempt = 0; attempt < attempts; attempt++) {
    last = await held.outcome(await open());
    if (last === 'served') return last;
    await scheduler.wait(ms);
  }
  return last;
}
