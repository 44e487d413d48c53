/**
 * Reading an SSE answer, for both followers (stream-follower.ts, task-follower.ts): its frames
 * as they complete, one batch per chunk received — only events whose blank line arrived, so
 * text cut mid-frame is never handed on. The body is closed when the reader stops (returns,
 * throws) or `signal` aborts: over HTTP, closing the response is how a stream is cancelled, and
 * the server learns the client left.
 */
import { SseParser, type SseFrame } from '../core/sse-parser.ts';
import { HttpStatusError, IdleConnectionError } from './errors.ts';
import { mediaType } from './http.ts';

/** The body of `response`, which must be an SSE stream (else HttpStatusError, its body discarded). */
export async function sseBody(response: Response): Promise<ReadableStream<Uint8Array>> {
  const type = mediaType(response);
  if (type !== 'text/event-stream' || response.body === null) {
    await response.body?.cancel().catch(() => undefined);
    throw new HttpStatusError(response.status, undefined, `unexpected content type ${JSON.stringify(type)}`);
  }
  return response.body;
}

/**
 * How long a connection may carry nothing at all — no event, not even a heartbeat comment —
 * before the client takes it as dead and resumes. A connection can die without a word (a NAT or
 * a proxy that drops it, a peer that vanished: no FIN, no RST reaches the client), and then a
 * read waits forever. This server writes `: keepalive` every HEARTBEAT_MS (15 s by default), so
 * three missed heartbeats are a dead connection, not a quiet one.
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 45_000;
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The idle limit a connection gets (a RangeError for one no timer can keep): the caller's (0: none), else the default where a resume is
 * always safe (`resumeIsSafe`: a fork-safe server's streams, any task stream); else none — on a
 * plain server a POST cut before its first event cannot be resumed, and its quiet call may be
 * quiet on purpose.
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
 * The frames of `body`, a batch per chunk, until it ends (the generator returns: the caller
 * decides what an end there means). A read that fails rejects with `broken(cause)`, and so does
 * one that waits more than `idleMs` for a chunk (undefined or 0: it waits as long as it takes);
 * the frame a dead connection cut short is not handed on.
 */
export async function* sseFrames(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  broken: (cause: unknown) => Error,
  idleMs?: number,
): AsyncGenerator<SseFrame[], void, undefined> {
  const reader = body.getReader();
  const leave = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', leave, { once: true });
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      const chunk = await readWithin(reader, idleMs).catch((error: unknown) => {
        throw broken(error);
      });
      if (chunk.done) {
        yield parser.push(decoder.decode()).concat(parser.end());
        return;
      }
      yield parser.push(decoder.decode(chunk.value, { stream: true }));
    }
  } finally {
    signal.removeEventListener('abort', leave);
    leave(); // whatever the stream still has is not wanted
  }
}

/**
 * `request`, for an answer the server gives at once (a resume's first bytes, a task's state, a
 * notification's 202): one that has not begun within `idleMs` went down a dead connection, and
 * its request is aborted with IdleConnectionError. Undefined `idleMs`: as long as it takes.
 */
export async function answeredWithin<T>(
  idleMs: number | undefined,
  signal: AbortSignal,
  request: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  if (idleMs === undefined) return request(signal);
  const waited = new AbortController();
  const timer = setTimeout(() => waited.abort(new IdleConnectionError(idleMs)), idleMs);
  try {
    return await request(AbortSignal.any([signal, waited.signal]));
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A whole body as text (a JSON answer), each chunk within `idleMs` as sseFrames reads them:
 * one that stops coming rejects with IdleConnectionError, and the body is closed.
 */
export async function bodyText(response: Response, idleMs: number | undefined): Promise<string> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const chunk = await readWithin(reader, idleMs);
      if (chunk.done) return text + decoder.decode();
      text += decoder.decode(chunk.value, { stream: true });
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/** The next chunk, or IdleConnectionError once `idleMs` pass without one (the read is left to the cancel). */
function readWithin(
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
