/**
 * Server-Sent Events framing (WHATWG HTML, "Server-sent events"), kept apart from I/O so
 * the exact bytes are testable. Every frame ends with the blank line that dispatches it.
 */
export interface SseEvent {
  /** Omitted: a frame with no `id:` field, which leaves the client's last event id as it was. */
  readonly id?: string;
  /** The event's data; may be empty (the priming event). */
  readonly data: string;
  /** Reconnection delay the client should use, in milliseconds. */
  readonly retry?: number;
}

export function encodeEvent({ id, data, retry }: SseEvent): string {
  if (id !== undefined && /[\r\n]/.test(id)) throw new TypeError('an SSE event id cannot contain a line break');
  let frame = id === undefined ? '' : `id: ${id}\n`;
  if (retry !== undefined) {
    if (!Number.isSafeInteger(retry) || retry < 0) throw new RangeError(`retry must be a non-negative integer, got ${retry}`);
    frame += `retry: ${retry}\n`;
  }
  // A data line cannot contain a line break; each line of the payload gets its own field.
  // Serialized JSON never contains a raw line break, so the split is rarely needed.
  if (!/[\r\n]/.test(data)) return `${frame}data: ${data}\n\n`;
  for (const line of data.split(/\r\n|\r|\n/)) frame += `data: ${line}\n`;
  return `${frame}\n`;
}

/** A comment line: ignored by clients, keeps intermediaries from timing the connection out. */
export function encodeComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}
