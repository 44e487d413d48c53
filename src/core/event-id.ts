/**
 * SSE event ids are `<epoch>-<stream>-<seq>`, three canonical decimal integers.
 *
 * - `epoch` is the session epoch in which the stream was opened, so every event of one
 *   stream carries the same epoch and stream number;
 * - `stream` numbers are never reused within a session;
 * - `seq` is contiguous within a stream; 0 is reserved for the priming event.
 *
 * The id is the resumption cursor: it names exactly one point of exactly one stream.
 * Only the canonical spelling is accepted (no sign, no leading zeros), so two different
 * strings never name the same point.
 */
export interface EventId {
  readonly epoch: number;
  readonly stream: number;
  readonly seq: number;
}

/**
 * A new session's first epoch, drawn at random (one of 2^29, all of ten digits); its epochs
 * count up from it, one per restart. Every session numbers its streams from 1, so with a fixed
 * first epoch the ids of two sessions would name the same points: a cursor carried from another
 * session (a client that kept a resumption token across a lost session) would be resumed here
 * as a point of a different stream — another call's events taken for the continuation of its
 * own. Drawn at random, such a cursor names no stream of this session (but by a chance of about
 * one in 2^29) and is refused `unknown_stream`. Ten digits always, so that an id's length does
 * not vary from one session to the next.
 */
export function firstEpoch(random: number = crypto.getRandomValues(new Uint32Array(1))[0]!): number {
  return FIRST_EPOCH_BASE + (random >>> 3);
}

const FIRST_EPOCH_BASE = 1_000_000_000;

/** The seq of the priming event, which opens a stream and carries no message. */
export const PRIMING_SEQ = 0;

const CANONICAL = /^(0|[1-9][0-9]{0,15})-(0|[1-9][0-9]{0,15})-(0|[1-9][0-9]{0,15})$/;

export function formatEventId({ epoch, stream, seq }: EventId): string {
  return `${epoch}-${stream}-${seq}`;
}

/** Returns undefined for anything that is not an id this server could have issued. */
export function parseEventId(text: string): EventId | undefined {
  const match = CANONICAL.exec(text);
  if (match === null) return undefined;
  const [epoch, stream, seq] = [match[1], match[2], match[3]].map(Number) as [number, number, number];
  if (![epoch, stream, seq].every(Number.isSafeInteger)) return undefined;
  return { epoch, stream, seq };
}
