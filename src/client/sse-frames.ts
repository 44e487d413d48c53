/**
 * Reading an SSE answer, for both followers (stream-follower.ts, task-follower.ts): its frames
 * as they complete, one batch per chunk received — only events whose blank line arrived, so
 * text cut mid-frame is never handed on. The body is closed when the reader stops (returns,
 * throws) or `signal` aborts: over HTTP, closing the response is how a stream is cancelled, and
 * the server learns the client left.
 */
import { SseParser, type SseFrame } from '../core/sse-parser.ts';
import { HttpStatusError } from './errors.ts';
import { mediaType } from './http.ts';
import { readWithin } from './idle-limit.ts';

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
