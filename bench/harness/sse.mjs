// A streaming text/event-stream parser (WHATWG HTML, "Interpreting an event stream"), fed
// chunk by chunk: lines may end in CRLF, LF or CR, and any boundary (inside a UTF-8 sequence,
// between CR and LF, inside a field) may fall between two chunks.
//
// One deliberate difference from the EventSource algorithm: a block with an `id` but no `data`
// (an MCP priming event: `id: …`, `retry: …`, `data:` empty) is reported too, with data '', because
// a resuming client needs its id. Blocks with neither `id` nor `data` (a lone `retry:`) only update
// `retry`; comments only count.

export class SseParser {
  #decoder = new TextDecoder();
  #buffer = '';
  #sawBom = false;
  #data = '';
  #hasData = false;
  #hasId = false;
  #type = '';
  /** The last event id buffer: persists across events, as in EventSource. */
  lastEventId = '';
  /** The last valid `retry:` value in ms, if any. */
  retry = undefined;
  comments = 0;

  /** Feeds bytes (or text) and returns the events completed by them, in order. */
  push(chunk) {
    const text = typeof chunk === 'string' ? chunk : this.#decoder.decode(chunk, { stream: true });
    return this.#feed(text, false);
  }

  /** Ends the stream: a last line is still interpreted, an event not closed by a blank line is dropped. */
  end() {
    return this.#feed(this.#decoder.decode(), true);
  }

  #feed(text, final) {
    let buffer = this.#buffer + text;
    if (!this.#sawBom && buffer.length > 0) {
      this.#sawBom = true;
      if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
    }
    const events = [];
    let start = 0;
    // Next CR and LF positions, searched again only once passed (a CR-free stream stays linear).
    let lf = -2;
    let cr = -2;
    for (;;) {
      if (lf !== -1 && lf < start) lf = buffer.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = buffer.indexOf('\r', start);
      let end;
      let next;
      if (cr >= 0 && (lf < 0 || cr < lf)) {
        // A CR at the very end may be the first half of a CRLF split across chunks.
        if (cr === buffer.length - 1 && !final) break;
        end = cr;
        next = buffer.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
      } else if (lf >= 0) {
        end = lf;
        next = lf + 1;
      } else {
        break;
      }
      const event = this.#line(buffer.slice(start, end));
      if (event) events.push(event);
      start = next;
    }
    this.#buffer = buffer.slice(start);
    if (final) {
      if (this.#buffer.length > 0) this.#line(this.#buffer);
      this.#buffer = '';
      this.#reset();
    }
    return events;
  }

  #line(line) {
    if (line === '') return this.#dispatch();
    if (line.charCodeAt(0) === 58 /* ':' */) {
      this.comments++;
      return undefined;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    switch (field) {
      case 'data':
        this.#data += this.#hasData ? `\n${value}` : value;
        this.#hasData = true;
        break;
      case 'event':
        this.#type = value;
        break;
      case 'id':
        if (!value.includes('\0')) {
          this.lastEventId = value;
          this.#hasId = true;
        }
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.retry = Number(value);
        break;
      default:
        break; // unknown fields are ignored
    }
    return undefined;
  }

  #dispatch() {
    const event =
      this.#hasData || this.#hasId
        ? { id: this.lastEventId, type: this.#type || 'message', data: this.#data, hasData: this.#hasData }
        : undefined;
    this.#reset();
    return event;
  }

  #reset() {
    this.#data = '';
    this.#hasData = false;
    this.#hasId = false;
    this.#type = '';
  }
}
