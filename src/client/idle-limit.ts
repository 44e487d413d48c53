/**
 * How long the client waits for the server before it takes a connection as dead, for both
 * followers (stream-follower.ts, task-follower.ts) and the transport: a connection can die
 * without a word — a NAT or a proxy that drops it, a peer that vanished: no FIN, no RST reaches
 * the client — and then a read, or a request down it, waits forever. The limit bounds each wait
 * for the next bytes: of an SSE stream (sse-frames.ts), of a JSON body, and of the answer to a
 * request the server answers at once.
 */
import { IdleConnectionError } from './errors.ts';

/**
 * How long a connection may carry nothing at all — no event, not even a heartbeat comment —
 * before the client takes it as dead and resumes. This server writes `: keepalive` every
 * HEARTBEAT_MS (15 s by default), so three missed heartbeats are a dead connection, not a quiet one.
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 45_000;
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The idle limit a connection gets: the caller's (0: none; a RangeError for one no timer can
 * keep), else the default where a resume is always safe (`resumeIsSafe`: a fork-safe server's
 * streams, any task stream); else none — on a plain server a POST cut before its first event
 * cannot be resumed, and its quiet call may be quiet on purpose.
 */
export function idleLimit(chosen: number | undefined, resumeIsSafe: boolean): number | undefined {
  // Past 2^31 − 1 ms a timer fires at once (it is clamped to 1 ms): every read would break.
  if (chosen !== undefined && !(Number.isFinite(chosen) && chosen >= 0 && chosen <= MAX_TIMER_MS)) {
    throw new RangeError(`idleTimeoutMs must be between 0 and ${MAX_TIMER_MS}, got ${chosen}`);
  }
  if (chosen !== undefined) return chosen > 0 ? chosen : undefined;
  return resumeIsSafe ? DEFAULT_IDLE_TIMEOUT_MS : undefined;
}

/**
 * `request`, for an answer the server gives at once (a resume's first bytes, a task's state, a
 * notification's 202): one that has not begun within `idleMs` went down a dead connection, and
 * its request is aborted with IdleConnectionError. Undefined `idleMs`: as long as it takes.
 */
export async function answeredWithin<T, S extends AbortSignal | undefined>(
  idleMs: number | undefined,
  signal: S,
  request: (signal: S | AbortSignal) => Promise<T>,
): Promise<T> {
  if (idleMs === undefined) return request(signal);
  const waited = new AbortController();
  const timer = setTimeout(() => waited.abort(new IdleConnectionError(idleMs)), idleMs);
  try {
    return await request(signal === undefined ? waited.signal : AbortSignal.any([signal, waited.signal]));
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A whole body as text (a JSON answer), each chunk within `idleMs` as sseFrames (sse-frames.ts) reads them:
 * one that stops coming rejects with IdleConnectionError, and the body is closed. With `maxBytes`,
 * no more than its first `maxBytes` bytes are read (the rest is cancelled).
 */
export async function bodyText(response: Response, idleMs: number | undefined, maxBytes = Number.POSITIVE_INFINITY): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let left = maxBytes;
  try {
    while (left > 0) {
      const chunk = await readWithin(reader, idleMs);
      if (chunk.done) break;
      const bytes = chunk.value.byteLength > left ? chunk.value.subarray(0, left) : chunk.value;
      left -= bytes.byteLength;
      text += decoder.decode(bytes, { stream: true });
    }
    return text + decoder.decode();
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/** The next chunk, or IdleConnectionError once `idleMs` pass without one (the read is left to the cancel). */
export function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  idleMs: number | undefined,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  if (idleMs === undefined || idleMs <= 0) return reader.read();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new IdleConnectionError(idleMs)), idleMs);
    reader.read().then(
      (chunk) => {
        clearTimeout(timer);
        resolve(chunk);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
