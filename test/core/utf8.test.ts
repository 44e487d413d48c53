import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utf8Length } from '../../src/core/utf8.ts';

describe('utf8Length', () => {
  it.each([
    { text: '', bytes: 0, why: 'empty' },
    { text: 'abc', bytes: 3, why: 'ASCII: one byte each' },
    { text: '\u0000\u007f', bytes: 2, why: 'the ends of ASCII' },
    { text: 'é', bytes: 2, why: 'U+00E9: two bytes' },
    { text: '\u0080\u07ff', bytes: 4, why: 'the ends of the two-byte range' },
    { text: '€', bytes: 3, why: 'U+20AC: three bytes' },
    { text: '\u0800\uffff', bytes: 6, why: 'the ends of the three-byte range' },
    { text: '\ue000', bytes: 3, why: 'past the surrogates, three bytes again' },
    { text: '😀', bytes: 4, why: 'a surrogate pair: two UTF-16 units, four bytes' },
    { text: 'a😀b€', bytes: 9, why: 'mixed' },
  ])('$why: $bytes', ({ text, bytes }) => {
    expect(utf8Length(text)).toBe(bytes);
  });

  it('agrees with TextEncoder on any well-formed string', () => {
    const encoder = new TextEncoder();
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => utf8Length(text) === encoder.encode(text).byteLength),
      { numRuns: 500 },
    );
  });
});
