/**
 * What an instance knows of the streams it touched: state, last seq, which stream answers
 * which request, and which requests of its own streams are unanswered. Every change to a
 * stream's state or events goes through SessionStreams, which keeps this in step, so it
 * cannot go stale, and the hot path (one event) reads nothing. After a rolled-back
 * transaction it is forgotten and read again from storage, which is the truth.
 */
import type { StreamRecord } from '../core/resume.ts';
import type { EventLog } from './event-log.ts';

export interface KnownStream {
  readonly epoch: number;
  open: boolean;
  lastSeq: number;
}

export class StreamCache {
  readonly #known = new Map<number, KnownStream>();
  /** Request key → stream; a request's stream never changes. */
  readonly #requestStreams = new Map<string, number>();
  /** Unanswered request keys of the streams this instance opened (others are asked of SQL). */
  readonly #unanswered = new Map<number, Set<string>>();

  readonly #log: EventLog;

  constructor(log: EventLog) {
    this.#log = log;
  }

  /** The stream as this instance knows it, read from storage the first time. */
  know(stream: number): KnownStream | undefined {
    let known = this.#known.get(stream);
    if (known === undefined) {
      const record = this.#log.stream(stream);
      if (record === undefined) return undefined;
      known = { epoch: record.epoch, open: record.state === 'open', lastSeq: record.lastSeq };
      this.#known.set(stream, known);
    }
    return known;
  }

  /** A stream this instance just opened, answering `requestKeys` (none for a standalone stream). */
  opened(stream: StreamRecord, requestKeys: readonly string[] = []): void {
    this.#known.set(stream.stream, { epoch: stream.epoch, open: true, lastSeq: 0 });
    if (requestKeys.length === 0) return;
    for (const key of requestKeys) this.#requestStreams.set(key, stream.stream);
    this.#unanswered.set(stream.stream, new Set(requestKeys));
  }

  ended(stream: number): void {
    const known = this.#known.get(stream);
    if (known !== undefined) known.open = false;
  }

  /** The stream that answers a request, if the request id was ever used in the session. */
  streamOfRequest(requestKey: string): number | undefined {
    const cached = this.#requestStreams.get(requestKey);
    if (cached !== undefined) return cached;
    const stream = this.#log.requests.streamOf(requestKey);
    if (stream !== undefined) this.#requestStreams.set(requestKey, stream);
    return stream;
  }

  /**
   * Whether answering `requestKey` ends its stream, as this instance knows without storage: true
   * when no other request of the stream awaits an answer; undefined when others do (their flags
   * are written with it) or when the stream was not opened here (`answer` asks storage).
   */
  endsStream(requestKey: string, stream: number): true | undefined {
    const pending = this.#unanswered.get(stream);
    if (pending === undefined) return undefined;
    const others = pending.size - (pending.has(requestKey) ? 1 : 0);
    return others === 0 ? true : undefined;
  }

  /** Records that `requestKey` needs no answer any more; returns whether others still do. */
  answer(requestKey: string, stream: number): boolean {
    const pending = this.#unanswered.get(stream);
    if (pending !== undefined) pending.delete(requestKey);
    const othersPending = pending !== undefined ? pending.size > 0 : this.#log.requests.othersUnanswered(stream, requestKey);
    // The last answer finishes the stream, and a finished stream's flags are never read.
    if (othersPending) this.#log.requests.setAnswered(requestKey);
    else this.#unanswered.delete(stream);
    return othersPending;
  }

  /** Forgets one stream (its held events failed to store). */
  drop(stream: number): void {
    this.#known.delete(stream);
  }

  forget(): void {
    this.#known.clear();
    this.#requestStreams.clear();
    this.#unanswered.clear();
  }
}
