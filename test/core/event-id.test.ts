import { describe, expect, it } from 'vitest';
import { firstEpoch, formatEventId, parseEventId, PRIMING_SEQ } from '../../src/core/event-id.ts';

describe('event ids', () => {
  it.each([
    ['1-2-3', { epoch: 1, stream: 2, seq: 3 }],
    ['0-0-0', { epoch: 0, stream: 0, seq: 0 }],
    ['12-345-6789', { epoch: 12, stream: 345, seq: 6789 }],
    ['9007199254740991-9007199254740991-9007199254740991', { epoch: 9007199254740991, stream: 9007199254740991, seq: 9007199254740991 }],
    ['1000000000000000-0-1', { epoch: 1000000000000000, stream: 0, seq: 1 }],
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

  it.each([
    { name: 'a trailing space', text: '1-2-3 ' },
    { name: 'a plus sign', text: '+1-2-3' },
    { name: 'a negative seq', text: '1-2--3' },
    { name: 'an empty middle part', text: '1--3' },
    { name: 'underscores instead of dashes', text: '1_2_3' },
    { name: 'leading zeros on zero', text: '00-0-0' },
    { name: 'exponent notation', text: '1e3-2-3' },
    { name: 'hexadecimal', text: '0x1-2-3' },
    { name: 'full-width digits', text: '１-2-3' },
    { name: 'a leading newline', text: '\n1-2-3' },
    { name: 'a part one past the largest safe integer', text: '1-9007199254740992-0' },
    { name: 'a 16-digit seq above the safe range', text: '1-2-9999999999999999' },
    { name: 'a 17-digit part', text: '1-2-10000000000000000' },
  ])('rejects an id with $name', ({ text }) => {
    expect(parseEventId(text)).toBeUndefined();
  });

  it('reserves seq 0 for the priming event', () => {
    expect(PRIMING_SEQ).toBe(0);
    expect(formatEventId({ epoch: 4, stream: 7, seq: PRIMING_SEQ })).toBe('4-7-0');
  });

  it('round-trips every formatted id through parse', () => {
    for (const epoch of [0, 1, 9, 10, 123456]) {
      for (const stream of [0, 1, 42]) {
        for (const seq of [0, 1, 99, 100]) {
          expect(parseEventId(formatEventId({ epoch, stream, seq }))).toEqual({ epoch, stream, seq });
        }
      }
    }
  });
});

describe('a session’s first epoch', () => {
  it.each([
    [0, 1_000_000_000],
    [7, 1_000_000_000],
    [8, 1_000_000_001],
    [2 ** 32 - 1, 1_000_000_000 + 2 ** 29 - 1],
  ])('from the random word %d: %d', (random, epoch) => {
    expect(firstEpoch(random)).toBe(epoch);
  });

  it('is always ten digits, a canonical id’s first part, drawn afresh each time', () => {
    const drawn = Array.from({ length: 1_000 }, () => firstEpoch());
    for (const epoch of drawn) {
      expect(String(epoch)).toMatch(/^[1-9][0-9]{9}$/);
      expect(parseEventId(formatEventId({ epoch, stream: 1, seq: 0 }))?.epoch).toBe(epoch);
    }
    // 1,000 draws from 2^29: all alike only if the draw were not random.
    expect(new Set(drawn).size).toBeGreaterThan(1);
  });
});
