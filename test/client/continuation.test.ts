import { describe, expect, it } from 'vitest';
import {
  checkResumed,
  cursorAt,
  isLaterStream,
  judgeResume,
  continueAt,
  newStream,
  positionOf,
  type EventFields,
  type Position,
  type Step,
} from '../../src/client/continuation.ts';

const at = (cursor: string): Position => positionOf(cursor)!;
const ok = (cursor: string, advanced: boolean): Step => ({ ok: true, position: at(cursor), advanced });

describe('continueAt', () => {
  it.each<{ name: string; from: Position; event: EventFields; first: boolean; step: Step | string }>([
    // What a resume may open with.
    { name: 'the next event continues', from: at('1-2-3'), event: { id: '1-2-4', data: '{}' }, first: true, step: ok('1-2-4', true) },
    {
      name: 'the cursor restated without data (priming)',
      from: at('1-2-3'),
      event: { id: '1-2-3', data: '' },
      first: true,
      step: ok('1-2-3', false),
    },
    { name: 'the cursor restated with no data field', from: at('1-2-3'), event: { id: '1-2-3' }, first: true, step: ok('1-2-3', false) },
    {
      name: 'after the restatement, the next event',
      from: at('1-2-3'),
      event: { id: '1-2-4', data: '{}' },
      first: false,
      step: ok('1-2-4', true),
    },
    { name: 'a lone retry moves nothing', from: at('1-2-3'), event: {}, first: true, step: ok('1-2-3', false) },
    // A new stream: pinned by the response's headers, or by its first event.
    {
      name: 'a new stream’s priming event',
      from: newStream(5, 2),
      event: { id: '2-5-0', data: '' },
      first: true,
      step: ok('2-5-0', false),
    },
    {
      name: 'a new stream without priming starts at 1',
      from: newStream(5, 2),
      event: { id: '2-5-1', data: '{}' },
      first: true,
      step: ok('2-5-1', true),
    },
    {
      name: 'a new stream with no headers takes its first event’s',
      from: newStream(undefined, undefined),
      event: { id: '3-9-0', data: '' },
      first: true,
      step: ok('3-9-0', false),
    },
    {
      name: 'a new stream’s event of another stream',
      from: newStream(5, 2),
      event: { id: '2-6-0', data: '' },
      first: true,
      step: 'other_stream',
    },
    {
      name: 'a new stream’s event of another epoch',
      from: newStream(5, 2),
      event: { id: '1-5-0', data: '' },
      first: true,
      step: 'other_stream',
    },
    { name: 'a new stream starting past 1', from: newStream(5, 2), event: { id: '2-5-2', data: '{}' }, first: true, step: 'gap' },
    // Everything else is refused.
    { name: 'a skipped event', from: at('1-2-3'), event: { id: '1-2-5', data: '{}' }, first: true, step: 'gap' },
    { name: 'the cursor restated with a message', from: at('1-2-3'), event: { id: '1-2-3', data: '{}' }, first: true, step: 'rewind' },
    { name: 'the cursor restated later on', from: at('1-2-3'), event: { id: '1-2-3', data: '' }, first: false, step: 'rewind' },
    { name: 'an earlier event', from: at('1-2-3'), event: { id: '1-2-2', data: '{}' }, first: true, step: 'rewind' },
    {
      name: 'the same stream in another epoch (a restarted session’s forgery)',
      from: at('1-2-3'),
      event: { id: '2-2-4', data: '{}' },
      first: true,
      step: 'other_stream',
    },
    { name: 'another stream of the same epoch', from: at('1-2-3'), event: { id: '1-7-4', data: '{}' }, first: true, step: 'other_stream' },
    { name: 'a message with no id', from: at('1-2-3'), event: { data: '{}' }, first: false, step: 'missing_id' },
    { name: 'a non-canonical id', from: at('1-2-3'), event: { id: '1-2-04', data: '{}' }, first: true, step: 'malformed_id' },
    { name: 'an id of another server', from: at('1-2-3'), event: { id: 'abc', data: '{}' }, first: true, step: 'malformed_id' },
  ])('$name', ({ from, event, first, step }) => {
    const result = continueAt(from, event, first);
    if (typeof step === 'string') expect(result).toMatchObject({ ok: false, reason: step });
    else expect(result).toEqual(step);
  });
});

describe('checkResumed', () => {
  it.each<{ name: string; resumed: string | null; streamId: string | null; reason?: string }>([
    { name: 'resumed, same stream', resumed: 'true', streamId: '2' },
    { name: 'a new stream where a continuation was asked for', resumed: 'false', streamId: '2', reason: 'not_resumed' },
    { name: 'no Mcp-Stream-Resumed', resumed: null, streamId: '2', reason: 'not_resumed' },
    { name: 'another stream', resumed: 'true', streamId: '3', reason: 'stream_mismatch' },
    { name: 'no Mcp-Stream-Id', resumed: 'true', streamId: null, reason: 'stream_mismatch' },
    { name: 'a non-canonical stream number', resumed: 'true', streamId: '02', reason: 'stream_mismatch' },
  ])('$name', ({ resumed, streamId, reason }) => {
    const result = checkResumed(at('1-2-3'), { resumed, streamId });
    if (reason === undefined) expect(result.ok).toBe(true);
    else expect(result).toMatchObject({ ok: false, reason });
  });
});

describe('judgeResume', () => {
  it.each<{ name: string; cursor?: string; resumed: string | null; streamId: string | null; epoch: string | null; answer: unknown }>([
    { name: 'resumed, the same stream', resumed: 'true', streamId: '2', epoch: '1', answer: { kind: 'continued', position: at('1-2-3') } },
    {
      name: 'not resumed, another stream: a new standalone stream from its start',
      resumed: 'false',
      streamId: '5',
      epoch: '1',
      answer: { kind: 'new-standalone', start: at('1-5-0') },
    },
    {
      name: 'the same, in a later epoch',
      resumed: 'false',
      streamId: '5',
      epoch: '2',
      answer: { kind: 'new-standalone', start: at('2-5-0') },
    },
    {
      name: 'not resumed, an earlier stream: no new one can be',
      resumed: 'false',
      streamId: '1',
      epoch: '1',
      answer: { kind: 'fork', reason: 'not_resumed' },
    },
    {
      name: 'not resumed, a later stream of an earlier epoch',
      resumed: 'false',
      streamId: '5',
      epoch: '0',
      answer: { kind: 'fork', reason: 'not_resumed' },
    },
    {
      name: 'not resumed, the cursor’s own stream',
      resumed: 'false',
      streamId: '2',
      epoch: '1',
      answer: { kind: 'fork', reason: 'not_resumed' },
    },
    { name: 'no Mcp-Stream-Resumed', resumed: null, streamId: '5', epoch: '1', answer: { kind: 'fork', reason: 'not_resumed' } },
    {
      name: 'not resumed, no Mcp-Stream-Id',
      resumed: 'false',
      streamId: null,
      epoch: '1',
      answer: { kind: 'fork', reason: 'not_resumed' },
    },
    {
      name: 'not resumed, no Mcp-Session-Epoch',
      resumed: 'false',
      streamId: '5',
      epoch: null,
      answer: { kind: 'fork', reason: 'not_resumed' },
    },
    { name: 'resumed, another stream', resumed: 'true', streamId: '5', epoch: '1', answer: { kind: 'fork', reason: 'stream_mismatch' } },
    {
      name: 'a cursor that is no event id',
      cursor: 'x',
      resumed: 'true',
      streamId: '2',
      epoch: '1',
      answer: { kind: 'fork', reason: 'malformed_id' },
    },
  ])('$name', ({ cursor = '1-2-3', resumed, streamId, epoch, answer }) => {
    expect(judgeResume(positionOf(cursor), { resumed, streamId, epoch })).toMatchObject(answer as object);
  });
});

describe('cursorAt', () => {
  it('is the event id of a known place, and nothing where the stream is not known', () => {
    expect(cursorAt(at('1-4-0'))).toBe('1-4-0');
    expect(cursorAt(at('2-4-7'))).toBe('2-4-7');
    expect(cursorAt({ epoch: 1, stream: undefined, seq: 0 })).toBeUndefined();
    expect(cursorAt({ epoch: undefined, stream: 4, seq: 0 })).toBeUndefined();
    expect(cursorAt(undefined)).toBeUndefined();
  });
});

describe('isLaterStream', () => {
  it.each<{ a: string; b: string; later: boolean }>([
    { a: '1-5-0', b: '1-4-9', later: true },
    { a: '1-4-0', b: '1-5-0', later: false },
    { a: '1-5-0', b: '1-5-7', later: false },
    { a: '2-1-0', b: '1-9-0', later: true },
    { a: '1-9-0', b: '2-1-0', later: false },
  ])('$a after $b: $later', ({ a, b, later }) => {
    expect(isLaterStream(at(a), at(b))).toBe(later);
  });

  it('is false where a stream is not known yet', () => {
    expect(isLaterStream({ epoch: 1, stream: undefined, seq: 0 }, at('1-2-0'))).toBe(false);
    expect(isLaterStream(at('1-2-0'), { epoch: undefined, stream: 1, seq: 0 })).toBe(false);
  });
});

describe('positionOf', () => {
  it('reads only canonical event ids', () => {
    expect(positionOf('1-2-3')).toEqual({ epoch: 1, stream: 2, seq: 3 });
    for (const bad of ['01-2-3', '1-2', '1-2-3-4', '', '1-2-x']) expect(positionOf(bad)).toBeUndefined();
  });
});
