/**
 * The client's half of the wire contract's promise: an event is accepted only if it continues,
 * gap-free, the exact point of the exact stream the client holds. Pure, so every case of the
 * decision is a row in a table test.
 */
import { formatEventId, parseEventId, type EventId } from '../core/event-id.ts';
import { HEADERS } from '../core/wire.ts';

/** Why an answer is not the continuation asked for. */
export type ForkReason =
  /** `Mcp-Stream-Resumed` is not `true` on a resume of a request stream. */
  | 'not_resumed'
  /** `Mcp-Stream-Id` names another stream than the cursor's. */
  | 'stream_mismatch'
  /** An event carrying a message has no id, so it could not be resumed after. */
  | 'missing_id'
  /** An event id that is not `<epoch>-<stream>-<seq>`. */
  | 'malformed_id'
  /** An event of another epoch or stream. */
  | 'other_stream'
  /** Events after the cursor are missing. */
  | 'gap'
  /** An event at or before the cursor: something already delivered, again. */
  | 'rewind';

/**
 * Where the client is in a stream. `epoch` and `stream` are undefined only before a new
 * stream's first event, when the response did not say which stream it is: the first event pins
 * them. `seq` 0 is the priming event's place, so a new stream starts at 0.
 */
export interface Position {
  readonly epoch: number | undefined;
  readonly stream: number | undefined;
  readonly seq: number;
}

/** The fields of one SSE event that decide whether it continues a stream. */
export interface EventFields {
  readonly id?: string;
  readonly data?: string;
}

export type Step =
  | { readonly ok: true; readonly position: Position; readonly advanced: boolean }
  | { readonly ok: false; readonly reason: ForkReason; readonly detail: string };

const refuse = (reason: ForkReason, detail: string): Step => ({ ok: false, reason, detail });

/** The position of a cursor the client received, or undefined if it is not an event id of this contract. */
export function positionOf(cursor: string): Position | undefined {
  return parseEventId(cursor);
}

/** A stream the client has not yet read an event of: `stream` from `Mcp-Stream-Id`, `epoch` from `Mcp-Session-Epoch`. */
export function newStream(stream: number | undefined, epoch: number | undefined): Position {
  return { epoch, stream, seq: 0 };
}

/** The start of the stream an answer opened, from its headers. */
export function streamStart(headers: Headers): Position {
  return newStream(headerNumber(headers.get(HEADERS.streamId)), headerNumber(headers.get(HEADERS.epoch)));
}

/** Whether `a` is a later stream than `b`: stream numbers only grow within a session, epochs too. */
export function isLaterStream(a: Position, b: Position): boolean {
  if (a.epoch === undefined || a.stream === undefined || b.epoch === undefined || b.stream === undefined) return false;
  return a.epoch > b.epoch || (a.epoch === b.epoch && a.stream > b.stream);
}

/** The event id at `position`, if its stream is known: a cursor to resume from. */
export function cursorAt(position: Position | undefined): string | undefined {
  if (position?.epoch === undefined || position.stream === undefined) return undefined;
  return formatEventId({ epoch: position.epoch, stream: position.stream, seq: position.seq });
}

export function formatPosition(position: Position): string {
  const { epoch, stream, seq } = position;
  return epoch === undefined || stream === undefined ? `a new stream (${stream ?? '?'})` : formatEventId({ epoch, stream, seq });
}

/**
 * Whether `event` continues `position`. `first`: the first event of this response, which may
 * restate the cursor itself with no message (the priming event of a resume, or of a new stream).
 * An event with neither id nor data (a lone `retry:`) moves nothing.
 */
export function continueAt(position: Position, event: EventFields, first: boolean): Step {
  const carriesMessage = event.data !== undefined && event.data !== '';
  if (event.id === undefined) {
    return carriesMessage ? refuse('missing_id', 'an event carrying a message has no id') : { ok: true, position, advanced: false };
  }
  const id: EventId | undefined = parseEventId(event.id);
  if (id === undefined) return refuse('malformed_id', `event id ${JSON.stringify(event.id)} is not <epoch>-<stream>-<seq>`);
  const epoch = position.epoch ?? id.epoch;
  const stream = position.stream ?? id.stream;
  if (id.epoch !== epoch || id.stream !== stream) {
    return refuse('other_stream', `event ${event.id} is not of stream ${stream} of epoch ${epoch}`);
  }
  if (id.seq === position.seq) {
    // Restating the cursor is how a resumed stream (and a new one) opens; doing it later, or
    // with a message, would deliver something twice.
    if (first && !carriesMessage) return { ok: true, position: id, advanced: false };
    return refuse('rewind', `event ${event.id} repeats the cursor ${formatPosition(position)}`);
  }
  if (id.seq === position.seq + 1) return { ok: true, position: id, advanced: true };
  if (id.seq > position.seq) return refuse('gap', `event ${event.id} skips events after ${formatPosition(position)}`);
  return refuse('rewind', `event ${event.id} is before the cursor ${formatPosition(position)}`);
}

/** The headers of an answer to `GET` + `Last-Event-ID`, as far as the continuation check needs them. */
export interface ResumeHeaders {
  /** `Mcp-Stream-Resumed`. */
  readonly resumed: string | null;
  /** `Mcp-Stream-Id`. */
  readonly streamId: string | null;
}

/** Whether a 200 to a resume says it continues the cursor's stream; its events are checked one by one after. */
export function checkResumed(cursor: Position, headers: ResumeHeaders): Step {
  if (headers.resumed !== 'true') {
    return refuse('not_resumed', `Mcp-Stream-Resumed is ${headers.resumed === null ? 'absent' : JSON.stringify(headers.resumed)}`);
  }
  if (cursor.stream === undefined || headers.streamId !== String(cursor.stream)) {
    return refuse('stream_mismatch', `Mcp-Stream-Id ${headers.streamId ?? '(absent)'} is not the cursor's stream ${cursor.stream ?? '?'}`);
  }
  return { ok: true, position: cursor, advanced: false };
}

/** What a 200 to a resume (`GET` + `Last-Event-ID`) is, on a server that keeps the contract. */
export type ResumeAnswer =
  /** The cursor's stream, continued after the cursor (its events are checked one by one after). */
  | { readonly kind: 'continued'; readonly position: Position }
  /**
   * The contract's answer to a cursor at the final event of a finished stream: nothing replayed,
   * a new standalone stream (`Mcp-Stream-Resumed: false`, another stream), `start` its place.
   * Where a request's stream was resumed, it ended without the request's answer.
   */
  | { readonly kind: 'new-standalone'; readonly start: Position }
  | { readonly kind: 'fork'; readonly reason: ForkReason; readonly detail: string };

/** The headers of an answer to a resume that judgeResume reads. */
export const resumeHeaders = (headers: Headers) => ({
  resumed: headers.get(HEADERS.resumed),
  streamId: headers.get(HEADERS.streamId),
  epoch: headers.get(HEADERS.epoch),
});

export function judgeResume(cursor: Position | undefined, headers: ResumeHeaders & { readonly epoch: string | null }): ResumeAnswer {
  if (cursor === undefined) return { kind: 'fork', reason: 'malformed_id', detail: 'the cursor is not an event id' };
  const stream = headerNumber(headers.streamId);
  const epoch = headerNumber(headers.epoch);
  // Only a later stream can be new: stream numbers and epochs only grow in a session.
  if (headers.resumed === 'false' && stream !== undefined && epoch !== undefined && isLaterStream(newStream(stream, epoch), cursor)) {
    return { kind: 'new-standalone', start: newStream(stream, epoch) };
  }
  const check = checkResumed(cursor, headers);
  return check.ok ? { kind: 'continued', position: cursor } : { kind: 'fork', reason: check.reason, detail: check.detail };
}

/** A header holding a canonical non-negative integer, else undefined. */
export function headerNumber(value: string | null): number | undefined {
  if (value === null || !/^(0|[1-9][0-9]{0,15})$/.test(value)) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}
