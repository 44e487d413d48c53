/** Every metric's data point (src/core/metrics.ts): the fixed layout docs/operations.md's queries read. */
import { describe, expect, it } from 'vitest';
import { dataPoint, type MetricEvent, outcomeOfStatus } from '../../src/core/metrics.ts';

const H = '0123456789abcdef0123456789abcdef';

describe('dataPoint', () => {
  it.each<[MetricEvent, readonly string[], readonly number[]]>([
    [
      { kind: 'request', era: 'legacy', method: 'POST', status: 200, durationMs: 4, bytes: 120 },
      ['request', 'legacy', 'POST', '', 'ok', ''],
      [4, 0, 120, 200],
    ],
    [
      { kind: 'request', era: 'modern', method: 'tools/call', status: 429, durationMs: 1, bytes: 0 },
      ['request', 'modern', 'tools/call', '', 'refused', ''],
      [1, 0, 0, 429],
    ],
    [
      { kind: 'request', era: 'legacy', method: 'GET', status: 500, durationMs: 2, bytes: 0 },
      ['request', 'legacy', 'GET', '', 'error', ''],
      [2, 0, 0, 500],
    ],
    [
      { kind: 'refusal', era: 'legacy', reason: 'unknown_stream', status: 409 },
      ['refusal', 'legacy', '', '', 'refused', 'unknown_stream'],
      [0, 0, 0, 409],
    ],
    [
      { kind: 'refusal', era: 'legacy', reason: 'session_not_found', status: 404 },
      ['refusal', 'legacy', '', '', 'refused', 'session_not_found'],
      [0, 0, 0, 404],
    ],
    [{ kind: 'session', outcome: 'created' }, ['session', 'legacy', '', '', 'created', ''], [0, 0, 0, 0]],
    [{ kind: 'session', outcome: 'expired' }, ['session', 'legacy', '', '', 'expired', ''], [0, 0, 0, 0]],
    [{ kind: 'resume' }, ['resume', 'legacy', 'GET', '', 'resumed', ''], [0, 0, 0, 0]],
    [
      { kind: 'call', tool: 'countdown', outcome: 'ok', durationMs: 30, events: 3 },
      ['call', 'legacy', 'tools/call', 'countdown', 'ok', ''],
      [30, 3, 0, 0],
    ],
    [
      { kind: 'call', tool: '', outcome: 'interrupted', durationMs: 0, events: 0 },
      ['call', 'legacy', 'tools/call', '', 'interrupted', ''],
      [0, 0, 0, 0],
    ],
    [
      { kind: 'task', tool: 'work', status: 'completed', interrupted: false, ageMs: 90, events: 4 },
      ['task', 'modern', 'tools/call', 'work', 'completed', ''],
      [90, 4, 0, 0],
    ],
    [
      { kind: 'task', tool: 'work', status: 'failed', interrupted: true, ageMs: 5, events: 1 },
      ['task', 'modern', 'tools/call', 'work', 'failed', 'task_interrupted'],
      [5, 1, 0, 0],
    ],
  ])('%j', (event, blobs, doubles) => {
    expect(dataPoint(event, H)).toEqual({ indexes: [H], blobs, doubles });
  });

  it.each([
    [101, 'ok'],
    [204, 'ok'],
    [399, 'ok'],
    [400, 'refused'],
    [499, 'refused'],
    [500, 'error'],
    [503, 'error'],
  ] as const)('status %i is %s', (status, outcome) => {
    expect(outcomeOfStatus(status)).toBe(outcome);
  });
});
