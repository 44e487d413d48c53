import { describe, expect, it } from 'vitest';
import { formatEventId, parseEventId } from '../../src/core/event-id.ts';

describe('event ids', () => {
  it.each([
    ['1-2-3', { epoch: 1, stream: 2, seq: 3 }],
    ['0-0-0', { epoch: 0, stream: 0, seq: 0 }],
    ['12-345-6789', { epoch: 12, stream: 345, seq: 6789 }],
  ])('parses the canonical id %s', (text, id) => {
    expect(parseEventId(text)).toEqual(id);
    expect(formatEventId(id)).toBe(text);
  });

  it.each(['', '1-2', '1-2-3-4', '01-2-3', '1-02-3', '1-2-03', '-1-2-3', '1-2-x', ' 1-2-3', '1.0-2-3', '1-2-3\n', '99999999999999999-1-1'])(
    'rejects %j',
    (text) => {
      expect(parseEventId(text)).toBeUndefined();
    },
  );
});
