import { describe, expect, it } from 'vitest';
import { fromBase64Url, randomBase64Url, toBase64Url } from '../../src/core/base64url.ts';

const bytes = (...values: number[]) => new Uint8Array(values);

describe('base64url', () => {
  it.each([
    { name: 'empty', input: bytes(), text: '' },
    { name: 'one byte', input: bytes(0xff), text: '_w' },
    { name: 'two bytes', input: bytes(0xfb, 0xff), text: '-_8' },
    { name: 'three bytes, no padding to drop', input: bytes(0, 0, 0), text: 'AAAA' },
    { name: 'what + and / spell in base64', input: bytes(0xfb, 0xef, 0xbe), text: '----' },
  ])('writes $name as $text, and reads it back', ({ input, text }) => {
    expect(toBase64Url(input)).toBe(text);
    expect(fromBase64Url(text)).toEqual(input);
  });

  it.each([
    { name: 'padding', text: '_w==' },
    { name: "base64's + and /", text: '+/8' },
    { name: 'a character outside the alphabet', text: 'AA.A' },
    { name: 'a length no bytes have', text: 'A' },
    { name: 'a second spelling of one byte (unused bits set)', text: '_x' },
  ])('refuses $name', ({ text }) => {
    expect(fromBase64Url(text)).toBeUndefined();
  });

  it('mints random ids of the length asked, all distinct', () => {
    const ids = Array.from({ length: 64 }, () => randomBase64Url(16));
    for (const id of ids) expect(fromBase64Url(id)?.byteLength).toBe(16);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
