/**
 * Reads SSE frames from a response body, one event at a time, with explicit timeouts.
 * Always `cancel()` in a `finally`: an unread body keeps the stream (and the object) busy.
 */
export interface ReadEvent {
  readonly id?: string;
  readonly data: string;
  readonly retry?: number;
  /** The exact bytes of the frame, for framing assertions. */
  readonly raw: string;
}

export const TIMED_OUT = Symbol('timed out');
export const ENDED = Symbol('ended');

export class SseReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  /** Received text that frames are taken from. */
  #buffer = '';
  /**
   * Text received after #buffer, kept in pieces until a frame ends in it: appending every
   * piece to #buffer and searching it again made reading a multi-megabyte event quadratic.
   */
  #pieces: string[] = [];
  #piecesEndFrame = false;
  #cancelled = false;
  #pendingRead: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  /** Everything received, including comments, in order. */
  raw = '';

  constructor(response: Response) {
    if (response.body === null) throw new Error('response has no body');
    this.#reader = response.body.getReader();
  }

  /** The next event (comments skipped), ENDED when the stream closes, TIMED_OUT after `ms`. */
  async next(ms = 5_000): Promise<ReadEvent | typeof ENDED | typeof TIMED_OUT> {
    const deadline = Date.now() + ms;
    for (;;) {
      if (this.#cancelled) return ENDED;
      const frame = this.#takeFrame();
      if (frame !== undefined) {
        if (frame.split('\n').every((line) => line.startsWith(':'))) continue;
        return parseFrame(frame);
      }
      // Even with no time left, what is already queued is read: a 0 ms timer fires only
      // after the read's microtasks have run.
      const remaining = Math.max(0, deadline - Date.now());
      // A native stream rejects the read pending when its reader cancels (a JavaScript one
      // resolves it as done): either way, the client that left has read its last.
      this.#pendingRead ??= this.#reader.read().catch((error: unknown) => {
        if (this.#cancelled) return { done: true as const, value: undefined };
        throw error;
      });
      let timer: number | undefined;
      const result = await Promise.race([
        this.#pendingRead,
        new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), remaining))),
      ]);
      if (timer !== undefined) clearTimeout(timer);
      if (result === TIMED_OUT) return TIMED_OUT;
      this.#pendingRead = undefined;
      if (result.done) return ENDED;
      const text = this.#decoder.decode(result.value, { stream: true });
      this.raw += text;
      const before = this.#pieces.at(-1) ?? this.#buffer;
      if (text.includes('\n\n') || (before.endsWith('\n') && text.startsWith('\n'))) this.#piecesEndFrame = true;
      this.#pieces.push(text);
    }
  }

  /** Reads events until the stream ends; fails if it does not end within `ms`. */
  async all(ms = 5_000): Promise<ReadEvent[]> {
    const events: ReadEvent[] = [];
    for (;;) {
      const event = await this.next(ms);
      if (event === ENDED) return events;
      if (event === TIMED_OUT) throw new Error(`stream did not end; got ${events.length} events`);
      events.push(event);
    }
  }

  /** Reads exactly `n` events. */
  async take(n: number, ms = 5_000): Promise<ReadEvent[]> {
    const events: ReadEvent[] = [];
    while (events.length < n) {
      const event = await this.next(ms);
      if (typeof event === 'symbol') throw new Error(`expected ${n} events, got ${events.length} then ${String(event)}`);
      events.push(event);
    }
    return events;
  }

  /** The client leaves: nothing more is read (a read pending meanwhile ends as ENDED). */
  async cancel(): Promise<void> {
    this.#cancelled = true;
    await this.#reader.cancel().catch(() => undefined);
  }

  #takeFrame(): string | undefined {
    let end = this.#buffer.indexOf('\n\n');
    if (end < 0 && this.#piecesEndFrame) {
      this.#buffer += this.#pieces.join('');
      this.#pieces = [];
      this.#piecesEndFrame = false;
      end = this.#buffer.indexOf('\n\n');
    }
    if (end < 0) return undefined;
    const frame = this.#buffer.slice(0, end);
    this.#buffer = this.#buffer.slice(end + 2);
    return frame;
  }
}

function parseFrame(frame: string): ReadEvent {
  let id: string | undefined;
  let retry: number | undefined;
  const data: string[] = [];
  for (const line of frame.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'retry') retry = Number(value);
    else if (field === 'data') data.push(value);
  }
  return { ...(id !== undefined && { id }), ...(retry !== undefined && { retry }), data: data.join('\n'), raw: `${frame}\n\n` };
}

/** The JSON-RPC message an event carries. */
export function message(event: ReadEvent): Record<string, unknown> {
  return JSON.parse(event.data) as Record<string, unknown>;
}
