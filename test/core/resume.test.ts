import { describe, expect, it } from 'vitest';
import type { EventId } from '../../src/core/event-id.ts';
import { decideResume, type ResumeVerdict, type StreamRecord } from '../../src/core/resume.ts';

/** Stream 2 of epoch 1, a request stream still open, events 0..5, nothing pruned; rows override. */
const record = (overrides: Partial<StreamRecord> = {}): StreamRecord => ({
  stream: 2,
  epoch: 1,
  kind: 'request',
  state: 'open',
  lastSeq: 5,
  prunedThrough: 0,
  ...overrides,
});
const cursor = (seq: number, overrides: Partial<EventId> = {}): EventId => ({ epoch: 1, stream: 2, seq, ...overrides });

const unknown: ResumeVerdict = {
  kind: 'refuse',
  status: 409,
  reason: 'unknown_stream',
  message: 'stream 2 of epoch 1 is not a stream of this session',
};
const ahead = (seq: number, lastSeq: number): ResumeVerdict => ({
  kind: 'refuse',
  status: 409,
  reason: 'cursor_ahead',
  message: `event ${seq} is beyond the last event (${lastSeq}) of stream 2`,
});
const superseded: ResumeVerdict = {
  kind: 'refuse',
  status: 409,
  reason: 'stream_superseded',
  message: 'standalone stream 2 was superseded by a newer one',
};
const pruned = (seq: number): ResumeVerdict => ({
  kind: 'refuse',
  status: 410,
  reason: 'events_pruned',
  message: `events after ${seq} of stream 2 are no longer retained`,
});
const resume = (afterSeq: number): ResumeVerdict => ({ kind: 'resume', afterSeq });
const newStandalone: ResumeVerdict = { kind: 'new-standalone' };

describe('decideResume: the decision table', () => {
  it.each<{ name: string; cursor: EventId; stream: StreamRecord | undefined; verdict: ResumeVerdict }>([
    // Unknown stream.
    { name: 'a stream this session does not have is refused 409 unknown_stream', cursor: cursor(3), stream: undefined, verdict: unknown },
    {
      name: 'a stream from another epoch is refused 409 unknown_stream',
      cursor: cursor(3),
      stream: record({ epoch: 2 }),
      verdict: unknown,
    },
    {
      name: 'a stream from an earlier epoch is refused 409 unknown_stream',
      cursor: cursor(3, { epoch: 2 }),
      stream: record({ epoch: 1 }),
      verdict: { ...unknown, message: 'stream 2 of epoch 2 is not a stream of this session' } as ResumeVerdict,
    },
    // Cursor ahead.
    { name: 'a seq one past lastSeq is refused 409 cursor_ahead', cursor: cursor(6), stream: record(), verdict: ahead(6, 5) },
    { name: 'a seq far past lastSeq is refused 409 cursor_ahead', cursor: cursor(1000), stream: record(), verdict: ahead(1000, 5) },
    {
      name: 'a seq past the priming event of a priming-only stream is refused 409 cursor_ahead',
      cursor: cursor(1),
      stream: record({ lastSeq: 0 }),
      verdict: ahead(1, 0),
    },
    {
      name: 'a seq past lastSeq of a finished stream is refused 409 cursor_ahead',
      cursor: cursor(6),
      stream: record({ state: 'finished' }),
      verdict: ahead(6, 5),
    },
    // Superseded standalone stream.
    {
      name: 'a superseded standalone stream is refused 409 stream_superseded',
      cursor: cursor(3),
      stream: record({ kind: 'standalone', state: 'superseded' }),
      verdict: superseded,
    },
    {
      name: 'a superseded standalone stream is refused 409 stream_superseded even at its last event',
      cursor: cursor(5),
      stream: record({ kind: 'standalone', state: 'superseded' }),
      verdict: superseded,
    },
    {
      name: 'a superseded standalone stream is refused 409 stream_superseded even at the priming event',
      cursor: cursor(0),
      stream: record({ kind: 'standalone', state: 'superseded' }),
      verdict: superseded,
    },
    // Pruned.
    {
      name: 'a seq below prunedThrough is refused 410 events_pruned',
      cursor: cursor(2),
      stream: record({ prunedThrough: 3 }),
      verdict: pruned(2),
    },
    {
      name: 'the priming event of a stream pruned through 1 is refused 410 events_pruned',
      cursor: cursor(0),
      stream: record({ prunedThrough: 1 }),
      verdict: pruned(0),
    },
    {
      name: 'a seq below prunedThrough of a finished stream is refused 410 events_pruned',
      cursor: cursor(2),
      stream: record({ state: 'finished', prunedThrough: 3 }),
      verdict: pruned(2),
    },
    {
      name: 'a seq below prunedThrough of an open standalone stream is refused 410 events_pruned',
      cursor: cursor(2),
      stream: record({ kind: 'standalone', prunedThrough: 4 }),
      verdict: pruned(2),
    },
    {
      name: 'a seq equal to prunedThrough is not pruned: the open stream resumes after it',
      cursor: cursor(3),
      stream: record({ prunedThrough: 3 }),
      verdict: resume(3),
    },
    {
      name: 'a seq equal to prunedThrough is not pruned: the finished stream resumes after it and closes',
      cursor: cursor(3),
      stream: record({ state: 'finished', prunedThrough: 3 }),
      verdict: resume(3),
    },
    // Open stream.
    {
      name: 'an open request stream resumes from the priming event and stays open',
      cursor: cursor(0),
      stream: record(),
      verdict: resume(0),
    },
    { name: 'an open request stream resumes mid-stream and stays open', cursor: cursor(3), stream: record(), verdict: resume(3) },
    { name: 'an open request stream resumes at lastSeq and stays open', cursor: cursor(5), stream: record(), verdict: resume(5) },
    {
      name: 'an open standalone stream resumes from the priming event and stays open',
      cursor: cursor(0),
      stream: record({ kind: 'standalone' }),
      verdict: resume(0),
    },
    {
      name: 'an open standalone stream resumes at lastSeq and stays open',
      cursor: cursor(5),
      stream: record({ kind: 'standalone' }),
      verdict: resume(5),
    },
    {
      name: 'an open priming-only stream resumes at the priming event and stays open',
      cursor: cursor(0),
      stream: record({ lastSeq: 0 }),
      verdict: resume(0),
    },
    // Finished stream.
    {
      name: 'a finished stream resumes from the priming event and closes after replay',
      cursor: cursor(0),
      stream: record({ state: 'finished' }),
      verdict: resume(0),
    },
    {
      name: 'a finished stream resumes one before lastSeq and closes after replay',
      cursor: cursor(4),
      stream: record({ state: 'finished' }),
      verdict: resume(4),
    },
    {
      name: 'a finished stream at lastSeq has nothing left: a new standalone stream',
      cursor: cursor(5),
      stream: record({ state: 'finished' }),
      verdict: newStandalone,
    },
    {
      name: 'a finished stream at lastSeq that is also prunedThrough: a new standalone stream',
      cursor: cursor(5),
      stream: record({ state: 'finished', prunedThrough: 5 }),
      verdict: newStandalone,
    },
  ])('$name', ({ cursor, stream, verdict }) => {
    expect(decideResume(cursor, stream)).toEqual(verdict);
  });
});

describe('decideResume: precedence when several refusals apply (unknown > ahead > superseded > pruned)', () => {
  it.each<{ name: string; cursor: EventId; stream: StreamRecord; verdict: ResumeVerdict }>([
    {
      name: 'an epoch mismatch wins over a cursor ahead: unknown_stream',
      cursor: cursor(9),
      stream: record({ epoch: 2 }),
      verdict: unknown,
    },
    {
      name: 'an epoch mismatch wins over superseded: unknown_stream',
      cursor: cursor(3),
      stream: record({ epoch: 2, kind: 'standalone', state: 'superseded' }),
      verdict: unknown,
    },
    {
      name: 'an epoch mismatch wins over pruned: unknown_stream',
      cursor: cursor(1),
      stream: record({ epoch: 2, prunedThrough: 3 }),
      verdict: unknown,
    },
    {
      name: 'a cursor ahead wins over superseded: cursor_ahead',
      cursor: cursor(6),
      stream: record({ kind: 'standalone', state: 'superseded' }),
      verdict: ahead(6, 5),
    },
    {
      name: 'superseded wins over pruned: stream_superseded',
      cursor: cursor(1),
      stream: record({ kind: 'standalone', state: 'superseded', prunedThrough: 3 }),
      verdict: superseded,
    },
  ])('$name', ({ cursor, stream, verdict }) => {
    expect(decideResume(cursor, stream)).toEqual(verdict);
  });
});

describe('decideResume: resumption never skips or repeats an event', () => {
  it('replays from exactly the cursor for every seq of an open and a finished stream', () => {
    for (const state of ['open', 'finished'] as const) {
      for (let seq = 0; seq <= 5; seq++) {
        const verdict = decideResume(cursor(seq), record({ state }));
        if (verdict.kind === 'resume') expect(verdict.afterSeq).toBe(seq);
        else expect({ state, seq, verdict }).toEqual({ state: 'finished', seq: 5, verdict: newStandalone });
      }
    }
  });
});
