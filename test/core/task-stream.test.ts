/**
 * Where a `tasks/stream` starts (src/core/task-stream.ts), against SEP-2694's rules: named rows
 * for each rule, then every small timeline and cursor checked against the rules themselves —
 * a stream never skips a retained event after its cursor, never sends one it does not retain,
 * and a cursor it cannot continue from gets a typed answer.
 */
import { describe, expect, it } from 'vitest';
import {
  decideTaskStream,
  EVENTS_GONE_CODE,
  eventsGoneError,
  parseTaskStreamParams,
  type StreamVerdict,
  type TaskTimeline,
} from '../../src/core/task-stream.ts';

const timeline = (nextSeq: number, earliestSeq: number, terminal: boolean): TaskTimeline => ({ nextSeq, earliestSeq, terminal });

describe('decideTaskStream', () => {
  it.each<{ name: string; after: number | undefined; at: TaskTimeline; verdict: StreamVerdict }>([
    // "If after is omitted, the receiver MUST start at the earliest event it still retains."
    { name: 'omitted, all retained: from seq 0', after: undefined, at: timeline(10, 0, false), verdict: { kind: 'stream', fromSeq: 0 } },
    {
      name: 'omitted, 0..149 dropped: from 150',
      after: undefined,
      at: timeline(250, 150, false),
      verdict: { kind: 'stream', fromSeq: 150 },
    },
    // "If no events are retained and the task still exists, the receiver starts with future live events."
    {
      name: 'omitted, a new task with no event: live from 0',
      after: undefined,
      at: timeline(0, 0, false),
      verdict: { kind: 'stream', fromSeq: 0 },
    },
    {
      name: 'omitted, all dropped, running: live from next',
      after: undefined,
      at: timeline(5, 5, false),
      verdict: { kind: 'stream', fromSeq: 5 },
    },
    // "If no events are retained and the task has reached a terminal state, ... MUST return TaskStreamResult immediately."
    { name: 'omitted, all dropped, terminal: the empty result', after: undefined, at: timeline(5, 5, true), verdict: { kind: 'complete' } },
    {
      name: 'omitted, terminal with its events: replayed',
      after: undefined,
      at: timeline(5, 0, true),
      verdict: { kind: 'stream', fromSeq: 0 },
    },
    // "Deliver retained events with seq greater than the supplied value, then continue with live events."
    { name: 'after 4 of 0..9: from 5', after: 4, at: timeline(10, 0, false), verdict: { kind: 'stream', fromSeq: 5 } },
    { name: 'after the last, running: live from next', after: 9, at: timeline(10, 0, false), verdict: { kind: 'stream', fromSeq: 10 } },
    // "... no retained events with seq greater than the supplied value and the task has reached a terminal state ... immediately"
    { name: 'after the last, terminal: the empty result', after: 9, at: timeline(10, 0, true), verdict: { kind: 'complete' } },
    { name: 'after the last, terminal, all else dropped', after: 9, at: timeline(10, 10, true), verdict: { kind: 'complete' } },
    // "Return an events_gone error if events after the supplied sequence number are no longer retained."
    { name: 'after 10 with 150.. retained: gone', after: 10, at: timeline(250, 150, false), verdict: { kind: 'gone', earliestSeq: 150 } },
    { name: 'after 148 with 150.. retained: gone', after: 148, at: timeline(250, 150, true), verdict: { kind: 'gone', earliestSeq: 150 } },
    {
      name: 'after 149 with 150.. retained: from 150',
      after: 149,
      at: timeline(250, 150, false),
      verdict: { kind: 'stream', fromSeq: 150 },
    },
    // A cursor the task never issued.
    {
      name: 'after 0 of no event',
      after: 0,
      at: timeline(0, 0, false),
      verdict: { kind: 'invalid', message: 'after 0: the task has no events yet' },
    },
    {
      name: 'after 10 of 0..9',
      after: 10,
      at: timeline(10, 0, true),
      verdict: { kind: 'invalid', message: "after 10 is beyond the task's last event (9)" },
    },
  ])('$name', ({ after, at, verdict }) => {
    expect(decideTaskStream(after, at)).toEqual(verdict);
  });

  it('keeps every rule on every small timeline and cursor', () => {
    let cases = 0;
    for (let nextSeq = 0; nextSeq <= 6; nextSeq++) {
      for (let earliestSeq = 0; earliestSeq <= nextSeq; earliestSeq++) {
        for (const terminal of [false, true]) {
          for (const after of [undefined, 0, 1, 2, 3, 4, 5, 6, 7]) {
            cases++;
            const verdict = decideTaskStream(after, timeline(nextSeq, earliestSeq, terminal));
            const firstWanted = after === undefined ? earliestSeq : after + 1; // the first event the client lacks
            const where = `${JSON.stringify({ nextSeq, earliestSeq, terminal, after })} → ${JSON.stringify(verdict)}`;
            if (after !== undefined && after >= nextSeq) {
              expect(verdict.kind, where).toBe('invalid');
              continue;
            }
            switch (verdict.kind) {
              case 'stream':
                // Exactly from the first event the client lacks: no skip, no event it has again, none unretained.
                expect(verdict.fromSeq, where).toBe(firstWanted);
                expect(verdict.fromSeq, where).toBeGreaterThanOrEqual(earliestSeq);
                // A stream with nothing to send and nothing to come would never end.
                expect(verdict.fromSeq < nextSeq || !terminal, where).toBe(true);
                break;
              case 'complete':
                expect(terminal && firstWanted >= nextSeq, where).toBe(true);
                break;
              case 'gone':
                expect(firstWanted < earliestSeq && verdict.earliestSeq === earliestSeq, where).toBe(true);
                break;
              case 'invalid':
                throw new Error(`a valid cursor refused: ${where}`);
            }
          }
        }
      }
    }
    expect(cases).toBe(28 * 2 * 9); // (nextSeq, earliestSeq) pairs × terminal × cursors
  });
});

describe('parseTaskStreamParams', () => {
  it.each([
    { name: 'a task id', params: { taskId: 't' }, parsed: { taskId: 't', after: undefined } },
    { name: 'a task id and after 0', params: { taskId: 't', after: 0 }, parsed: { taskId: 't', after: 0 } },
    { name: 'after the largest safe integer', params: { taskId: 't', after: 2 ** 53 - 1 }, parsed: { taskId: 't', after: 2 ** 53 - 1 } },
    { name: 'other members, kept out', params: { taskId: 't', after: 3, _meta: { x: 1 } }, parsed: { taskId: 't', after: 3 } },
  ])('reads $name', ({ params, parsed }) => {
    expect(parseTaskStreamParams(params)).toEqual(parsed);
  });

  it.each([
    { name: 'no params', params: undefined, invalid: 'params must be an object' },
    { name: 'an array', params: [], invalid: 'params must be an object' },
    { name: 'no task id', params: { after: 1 }, invalid: 'taskId must be a string' },
    { name: 'a numeric task id', params: { taskId: 7 }, invalid: 'taskId must be a string' },
    ...[-1, 1.5, '3', null, true, {}, [], Number.POSITIVE_INFINITY, Number.NaN, 2 ** 53].map((after) => ({
      name: `after ${JSON.stringify(after) ?? String(after)}`,
      params: { taskId: 't', after },
      invalid: 'after must be a non-negative integer: the seq of the last event processed',
    })),
  ])('refuses $name', ({ params, invalid }) => {
    expect(parseTaskStreamParams(params)).toEqual({ invalid });
  });
});

it('events_gone carries its reason, the task and the oldest event retained', () => {
  expect(eventsGoneError(10, 'task-123', 150)).toEqual({
    jsonrpc: '2.0',
    id: 10,
    error: {
      code: EVENTS_GONE_CODE,
      message: 'Task events are no longer available',
      data: { reason: 'events_gone', taskId: 'task-123', earliestSeq: 150 },
    },
  });
  expect(EVENTS_GONE_CODE).toBe(-32010);
});
