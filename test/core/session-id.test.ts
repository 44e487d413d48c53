import { describe, expect, it } from 'vitest';
import { isWellFormedSessionId, newSessionId } from '../../src/core/session-id.ts';

const BASE64URL_43 = /^[A-Za-z0-9_-]{43}$/;

describe('newSessionId', () => {
  it('is 43 base64url characters with no padding', () => {
    const id = newSessionId();
    expect(id).toHaveLength(43);
    expect(id).toMatch(BASE64URL_43);
    expect(isWellFormedSessionId(id)).toBe(true);
  });

  it('decodes to exactly 32 bytes (256 random bits)', () => {
    const id = newSessionId();
    const binary = atob(`${id.replace(/-/g, '+').replace(/_/g, '/')}=`);
    expect(binary).toHaveLength(32);
  });

  it('generates 1000 distinct, well-formed ids', () => {
    const ids = Array.from({ length: 1000 }, () => newSessionId());
    expect(new Set(ids).size).toBe(1000);
    for (const id of ids) {
      expect(id).toMatch(BASE64URL_43);
      expect(isWellFormedSessionId(id)).toBe(true);
    }
  });

  it('uses both base64url-specific characters across many ids, never + / or =', () => {
    const all = Array.from({ length: 1000 }, () => newSessionId()).join('');
    expect(all).not.toMatch(/[+/=]/);
    expect(all).toContain('-');
    expect(all).toContain('_');
  });
});

describe('isWellFormedSessionId', () => {
  const base = 'A'.repeat(42);
  it.each([
    { name: '43 upper-case letters', value: 'A'.repeat(43) },
    { name: '42 lower-case letters and a final g', value: `${'z'.repeat(42)}g` },
    { name: '43 digits', value: '0'.repeat(43) },
    { name: 'dashes and underscores', value: `${'-_'.repeat(21)}w` },
    { name: 'a mix of every base64url class', value: `aZ09-_${'x'.repeat(36)}Q` },
  ])('accepts $name', ({ value }) => {
    expect(value).toHaveLength(43);
    expect(isWellFormedSessionId(value)).toBe(true);
  });

  it.each([
    { name: 'the empty string', value: '' },
    { name: '42 characters', value: base },
    { name: '44 characters', value: `${base}AA` },
    { name: 'a standard-base64 plus', value: `${base}+` },
    { name: 'a standard-base64 slash', value: `${base}/` },
    { name: 'padding', value: `${base}=` },
    { name: '43 characters plus padding', value: `${base}A=` },
    { name: 'a space', value: `${base.slice(1)} A` },
    { name: 'a dot', value: `${base}.` },
    { name: 'a non-ASCII letter', value: `${base}é` },
    { name: 'a trailing newline', value: `${base}A\n` },
    { name: 'a leading newline', value: `\n${base}A` },
    { name: 'a UUID', value: '123e4567-e89b-12d3-a456-426614174000' },
  ])('rejects $name', ({ value }) => {
    expect(isWellFormedSessionId(value)).toBe(false);
  });
});

describe('the last character of a session id', () => {
  // 256 bits leave 4 bits for the 43rd character, so only 16 characters can end an id.
  const possible = new Set('AEIMQUYcgkosw048');
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  it.each([...alphabet].map((c) => [c, possible.has(c)] as const))('%j is accepted: %s', (last, accepted) => {
    expect(isWellFormedSessionId(`${'A'.repeat(42)}${last}`)).toBe(accepted);
  });
});
