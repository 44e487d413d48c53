import { describe, expect, it } from 'vitest';
import { decodeHeaderValue, encodeHeaderValue } from '../../src/core/header-value.ts';

describe('decodeHeaderValue', () => {
  it.each([
    ['a plain value, trimmed', '  deploy ', 'deploy'],
    ['the base64 form', `=?base64?${btoa('deploy')}?=`, 'deploy'],
    ['UTF-8 in the base64 form', '=?base64?w6l0w6k=?=', 'été'],
    ['an empty base64 form', '=?base64??=', ''],
    ['a value that only starts like the form', '=?base64?SGVsbG8=', '=?base64?SGVsbG8='],
    ['a value without the prefix', 'SGVsbG8=', 'SGVsbG8='],
  ])('%s', (_name, raw, decoded) => {
    expect(decodeHeaderValue(raw)).toBe(decoded);
  });

  it.each([
    ['bad padding', '=?base64?SGVsbG8?='],
    ['characters outside base64', '=?base64?SGVs!!!bG8=?='],
    ['bytes that are not UTF-8', `=?base64?${btoa('\xff\xfe')}?=`],
  ])('%s is malformed', (_name, raw) => {
    expect(decodeHeaderValue(raw)).toBeUndefined();
  });
});

describe('encodeHeaderValue', () => {
  it.each([
    ['a plain ASCII value', 'k3Jd9xQ2bT5nW8pL1vR4sA', 'k3Jd9xQ2bT5nW8pL1vR4sA'],
    ['non-ASCII text', 'tâche', `=?base64?${btoa('t\xc3\xa2che')}?=`],
    ['leading or trailing whitespace', ' id ', `=?base64?${btoa(' id ')}?=`],
    ['a control character', 'a\nb', `=?base64?${btoa('a\nb')}?=`],
    ['a value that reads as the base64 form', '=?base64?eHl6?=', `=?base64?${btoa('=?base64?eHl6?=')}?=`],
  ])('sends %s as %j', (_name, value, encoded) => {
    expect(encodeHeaderValue(value)).toBe(encoded);
  });

  it.each(['plain', 'tâche 1 ', '=?base64?eHl6?=', '😀', '\t tab'])('round-trips %j through decodeHeaderValue', (value) => {
    expect(decodeHeaderValue(encodeHeaderValue(value))).toBe(value);
  });
});
