/**
 * Server-Sent Events parsing (WHATWG HTML, "Server-sent events", interpretation rules), for
 * whoever reads an SSE stream: the fork-safe client, which must know each event's id (the id of
 * the last *complete* event is the cursor to resume from), and a task's object reading the SDK's
 * answer to the round it runs (its data only).
 *
 * An event counts only once its blank line arrives: text cut mid-event (a broken connection) is
 * never dispatched, so the cursor never names an event the client did not fully receive.
 */

export interface SseFrame {
  /** The event's `id` field, if it had one. */
  readonly id?: string;
  /** The data lines joined with LF; undefined when the event had no `data` field. */
  readonly data?: string;
  /** A valid `retry:` field (ASCII digits only). */
  readonly retry?: number;
  /** The `event` field: MCP messages come as the default type (none, or `message`). */
  readonly event?: string;
}

export class SseParser {
  /** The text after the last line break: an incomplete line. */
  #pending = '';
  #id: string | undefined;
  #data: string[] | undefined;
  #retry: number | undefined;
  #event: string | undefined;

  /** Feeds decoded text; returns the events its blank lines completed. */
  push(text: string): SseFrame[] {
    this.#pending += text;
    // A CR at the very end may be the first half of a CRLF split across chunks: it waits.
    const lines = this.#pending.split(/\r\n|\r(?!$)|\n/);
    this.#pending = lines.pop() ?? '';
    const frames: SseFrame[] = [];
    for (const line of lines) {
      if (line === '') {
        const frame = this.#dispatch();
        if (frame !== undefined) frames.push(frame);
      } else {
        this.#field(line);
      }
    }
    return frames;
  }

  /** The stream ended: a last line ended by a lone CR (held back in case an LF followed) was complete. */
  end(): SseFrame[] {
    const rest = this.#pending;
    this.#pending = '';
    return rest.endsWith('\r') ? this.push(`${rest.slice(0, -1)}\n`) : [];
  }

  #field(line: string): void {
    if (line.startsWith(':')) return; // a comment (the server's keepalive)
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data') {
      this.#data ??= [];
      this.#data.push(value);
    }
    // The standard ignores an id containing NUL, keeping the previous one.
    else if (name === 'id' && !value.includes('\0')) this.#id = value;
    else if (name === 'retry' && /^[0-9]+$/.test(value)) this.#retry = Number(value);
    else if (name === 'event') this.#event = value;
  }

  #dispatch(): SseFrame | undefined {
    const id = this.#id;
    const data = this.#data;
    const retry = this.#retry;
    const event = this.#event;
    this.#id = undefined;
    this.#data = undefined;
    this.#retry = undefined;
    this.#event = undefined;
    if (id === undefined && data === undefined && retry === undefined) return undefined;
    return {
      ...(id !== undefined && { id }),
      ...(data !== undefined && { data: data.join('\n') }),
      ...(retry !== undefined && { retry }),
      ...(event !== undefined && { event }),
    };
  }
}
