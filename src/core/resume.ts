/**
 * The reconnect decision table: `GET` + `Last-Event-ID` either continues exactly the
 * stream the cursor names, with nothing skipped, or is refused with a typed reason. The
 * question is never "do I recognize this id?" but "can I prove this is the same stream and
 * that nothing after the cursor is missing?".
 *
 * Pure: the Durable Object reads the stream's record and applies the verdict, with no
 * `await` between reading and attaching.
 */
import type { EventId } from './event-id.ts';
import type { RefusalReason } from './errors.ts';

export type StreamKind = 'request' | 'standalone';

/**
 * - `open`: its producer is alive (a request still running, or the current standalone stream);
 * - `finished`: a request stream whose final response has been stored;
 * - `superseded`: a standalone stream replaced by a newer one.
 */
export type StreamState = 'open' | 'finished' | 'superseded';

export interface StreamRecord {
  readonly stream: number;
  /** The session epoch in which the stream was opened. */
  readonly epoch: number;
  readonly kind: StreamKind;
  readonly state: StreamState;
  /** The seq of the stream's last event (0: only the priming event). */
  readonly lastSeq: number;
  /** Events with seq ≤ prunedThrough are no longer retained (0: nothing pruned). */
  readonly prunedThrough: number;
}

export type ResumeVerdict =
  | { readonly kind: 'refuse'; readonly status: 409 | 410; readonly reason: RefusalReason; readonly message: string }
  /**
   * Attach to the stream and replay every event after `afterSeq`. A finished stream's
   * connection ends after the replay (SessionStreams.attach reads the stream's state).
   */
  | { readonly kind: 'resume'; readonly afterSeq: number }
  /** Nothing to continue: open a new standalone stream, flagged as new. */
  | { readonly kind: 'new-standalone' };

const refuse = (status: 409 | 410, reason: RefusalReason, message: string): ResumeVerdict => ({
  kind: 'refuse',
  status,
  reason,
  message,
});

export function decideResume(cursor: EventId, stream: StreamRecord | undefined): ResumeVerdict {
  if (stream === undefined || stream.epoch !== cursor.epoch) {
    return refuse(409, 'unknown_stream', `stream ${cursor.stream} of epoch ${cursor.epoch} is not a stream of this session`);
  }
  if (cursor.seq > stream.lastSeq) {
    return refuse(409, 'cursor_ahead', `event ${cursor.seq} is beyond the last event (${stream.lastSeq}) of stream ${stream.stream}`);
  }
  if (stream.state === 'superseded') {
    return refuse(409, 'stream_superseded', `standalone stream ${stream.stream} was superseded by a newer one`);
  }
  if (cursor.seq < stream.prunedThrough) {
    return refuse(410, 'events_pruned', `events after ${cursor.seq} of stream ${stream.stream} are no longer retained`);
  }
  if (stream.state === 'open' || cursor.seq < stream.lastSeq) return { kind: 'resume', afterSeq: cursor.seq };
  // The cursor is the final event of a finished stream: a valid point, but there is nothing
  // to continue. Replaying it would duplicate the result, so the client gets a new stream.
  return { kind: 'new-standalone' };
}
