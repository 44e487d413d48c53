import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitText, utf8Length } from '../../src/core/utf8.ts';

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
    { text: 'a\ud800é', bytes: 6, why: 'a high surrogate alone is U+FFFD (3 bytes), and what follows it counts' },
    { text: '\ud800', bytes: 3, why: 'a high surrogate alone at the end' },
    { text: '\udc00x', bytes: 4, why: 'a low surrogate alone' },
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

  it('agrees with TextEncoder on any string of UTF-16 units, lone surrogates included (they encode as U+FFFD)', () => {
    const encoder = new TextEncoder();
    const unit = fc
      .oneof(fc.integer({ min: 0xd800, max: 0xdfff }), fc.integer({ min: 0, max: 0xffff }))
      .map((code) => String.fromCharCode(code));
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 200 }), (text) => utf8Length(text) === encoder.encode(text).byteLength),
      { numRuns: 500 },
    );
  });
});

describe('splitText', () => {
  it.each([
    { text: '', maxUnits: 2, pieces: [''], why: 'empty: one empty piece' },
    { text: 'ab', maxUnits: 2, pieces: ['ab'], why: 'exactly one piece' },
    { text: 'abc', maxUnits: 2, pieces: ['ab', 'c'], why: 'one unit over' },
    { text: 'abcdef', maxUnits: 3, pieces: ['abc', 'def'], why: 'exact pieces' },
    { text: 'a😀b', maxUnits: 2, pieces: ['a', '😀', 'b'], why: 'a pair that would straddle the cut moves whole' },
    { text: '😀😀', maxUnits: 2, pieces: ['😀', '😀'], why: 'pairs that fit exactly stay' },
    { text: '😀😀😀', maxUnits: 3, pieces: ['😀', '😀', '😀'], why: 'a cut after a high surrogate is moved back' },
    { text: 'é€ab', maxUnits: 2, pieces: ['é€', 'ab'], why: 'cuts count units, not bytes' },
  ])('$why', ({ text, maxUnits, pieces }) => {
    expect(splitText(text, maxUnits)).toEqual(pieces);
  });

  it.each([0, 1, 2.5, Number.NaN])('refuses maxUnits %s', (maxUnits) => {
    expect(() => splitText('abc', maxUnits)).toThrow(RangeError);
  });

  it('gives pieces that join to the text, each within its bounds and well-formed', () => {
    const encoder = new TextEncoder();
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.integer({ min: 2, max: 20 }), (text, maxUnits) => {
        const pieces = splitText(text, maxUnits);
        return (
          pieces.join('') === text &&
          pieces.every((piece) => piece.length <= maxUnits && encoder.encode(piece).byteLength <= 3 * maxUnits) &&
          // No piece ends with a high surrogate or starts with a low one.
          pieces.every((piece) => !/[\ud800-\udbff]$/.test(piece) && !/^[\udc00-\udfff]/.test(piece)) &&
          pieces.slice(0, -1).every((piece) => piece.length >= maxUnits - 1)
        );
      }),
      { numRuns: 500 },
    );
  });
});
