import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  checkTtlPolicy,
  DEFAULT_TTL_POLICY,
  grantTtl,
  keyedUrl,
  MAX_CANONICAL_DEPTH,
  NotJsonError,
  type SubscriptionKey,
  subscriptionId,
  subscriptionKeyText,
  type TtlPolicy,
  verificationScopeText,
} from '../../src/core/webhook-subscription-key.ts';

function nested(levels: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

describe('canonical JSON', () => {
  it.each([
    { name: 'null', value: null, text: 'null' },
    { name: 'true', value: true, text: 'true' },
    { name: 'false', value: false, text: 'false' },
    { name: 'zero', value: 0, text: '0' },
    { name: 'negative zero as zero', value: -0, text: '0' },
    { name: '1.0 as 1', value: JSON.parse('1.0'), text: '1' },
    { name: 'a large number in exponent form', value: 1e21, text: '1e+21' },
    { name: 'a fraction', value: 0.1, text: '0.1' },
    { name: 'a string with a quote and a backslash', value: 'a"b\\c', text: '"a\\"b\\\\c"' },
    { name: 'a non-ASCII string, unescaped', value: 'é€', text: '"é€"' },
    { name: 'a control character, escaped lowercase', value: '\u000f', text: '"\\u000f"' },
    { name: 'a lone surrogate, escaped', value: '\ud800', text: '"\\ud800"' },
    { name: 'an empty object', value: {}, text: '{}' },
    { name: 'an empty array', value: [], text: '[]' },
    { name: 'members sorted', value: { b: 1, a: 2 }, text: '{"a":2,"b":1}' },
    {
      name: 'nested members sorted, arrays in order',
      value: { z: [{ y: 1, x: 2 }, 3], a: { d: null, c: true } },
      text: '{"a":{"c":true,"d":null},"z":[{"x":2,"y":1},3]}',
    },
    // Object.keys lists integer-like names first and numerically; canonical order is by code units.
    { name: 'integer-like names by code units', value: { z: 1, Z: 2, '9': 3, '10': 4 }, text: '{"10":4,"9":3,"Z":2,"z":1}' },
    // UTF-16 code units, not code points: U+1F600 (D83D DE00) sorts before U+FB33.
    {
      name: 'names by UTF-16 code units',
      value: { '\ufb33': 1, '\u{1f600}': 2, '\u20ac': 3 },
      text: '{"\u20ac":3,"\u{1f600}":2,"\ufb33":1}',
    },
    { name: 'an object without a prototype', value: Object.assign(Object.create(null), { b: 1, a: 2 }), text: '{"a":2,"b":1}' },
  ])('writes $name', ({ value, text }) => {
    expect(canonicalJson(value)).toBe(text);
  });

  it('writes the example of RFC 8785 (section 3.2.3) as the RFC does', () => {
    const input =
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],' +
      '"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}';
    expect(canonicalJson(JSON.parse(input))).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('writes two spellings of one JSON value identically', () => {
    const a = JSON.parse('{ "a" : 1.0, "b" : [ 1 , 2e0 ], "c": { "e": "x", "d": false } }');
    const b = JSON.parse('{"c":{"d":false,"e":"x"},"b":[1,2],"a":1}');
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalJson(a)).toBe('{"a":1,"b":[1,2],"c":{"d":false,"e":"x"}}');
  });

  it.each([
    { name: 'undefined', value: undefined },
    { name: 'NaN', value: Number.NaN },
    { name: 'Infinity', value: Number.POSITIVE_INFINITY },
    { name: '-Infinity', value: Number.NEGATIVE_INFINITY },
    { name: 'a bigint', value: 1n },
    { name: 'a function', value: () => 1 },
    { name: 'a symbol', value: Symbol('s') },
    { name: 'a Date', value: new Date(0) },
    { name: 'a Map', value: new Map() },
    { name: 'a member holding undefined', value: { a: undefined } },
    { name: 'a NaN deep inside', value: { a: [1, { b: Number.NaN }] } },
    // biome-ignore lint/suspicious/noSparseArray: the case under test
    { name: 'a sparse array', value: [, 1] },
    { name: `arrays nested ${MAX_CANONICAL_DEPTH + 1} deep`, value: nested(MAX_CANONICAL_DEPTH + 1) },
  ])('refuses $name with NotJsonError', ({ value }) => {
    expect(() => canonicalJson(value)).toThrow(NotJsonError);
  });

  it(`accepts arrays nested ${MAX_CANONICAL_DEPTH} deep`, () => {
    expect(canonicalJson(nested(MAX_CANONICAL_DEPTH))).toBe(`${'['.repeat(MAX_CANONICAL_DEPTH)}0${']'.repeat(MAX_CANONICAL_DEPTH)}`);
  });
});

const alice: SubscriptionKey = {
  principal: 'oauth#https://issuer.example#alice',
  url: 'https://proxy.example.com/hooks/client123',
  name: 'incident.created',
  arguments: { severity: 'P1' },
};

describe('subscription identity', () => {
  it('serializes the key as the canonical JSON of a tagged array', () => {
    expect(subscriptionKeyText(alice)).toBe(
      '["mcp-webhook-subscription","oauth#https://issuer.example#alice","https://proxy.example.com/hooks/client123","incident.created",{"severity":"P1"}]',
    );
  });

  it('derives the id as sub_ and the first 16 bytes of the SHA-256 of that text (computed apart, with node:crypto)', async () => {
    expect(await subscriptionId(alice)).toBe('sub_ee8fb73b06a7c1b05d0fa958163519d7');
  });

  it.each([
    { name: 'arguments in another member order', other: { arguments: JSON.parse('{ "severity" : "P1" }') } },
    { name: 'the URL with an upper-case scheme and host', other: { url: 'HTTPS://Proxy.Example.COM/hooks/client123' } },
    { name: 'the URL with its default port', other: { url: 'https://proxy.example.com:443/hooks/client123' } },
    { name: 'the URL with a fragment', other: { url: 'https://proxy.example.com/hooks/client123#x' } },
    { name: 'the URL with a dot segment', other: { url: 'https://proxy.example.com/hooks/./client123' } },
  ])('gives the same id for $name', async ({ other }) => {
    expect(await subscriptionId({ ...alice, ...other })).toBe(await subscriptionId(alice));
  });

  it.each([
    { name: 'another principal', other: { principal: 'oauth#https://issuer.example#bob' } },
    { name: 'another path', other: { url: 'https://proxy.example.com/hooks/client124' } },
    { name: 'a trailing slash', other: { url: 'https://proxy.example.com/hooks/client123/' } },
    { name: 'a query', other: { url: 'https://proxy.example.com/hooks/client123?a=1' } },
    { name: 'another port', other: { url: 'https://proxy.example.com:8443/hooks/client123' } },
    { name: 'another name', other: { name: 'incident.resolved' } },
    { name: 'another argument value', other: { arguments: { severity: 'P2' } } },
    { name: 'a number where a string was', other: { arguments: { severity: 1 } } },
    { name: 'an extra null member', other: { arguments: { severity: 'P1', team: null } } },
    { name: 'empty arguments', other: { arguments: {} } },
  ])('gives another id for $name', async ({ other }) => {
    expect(await subscriptionId({ ...alice, ...other })).not.toBe(await subscriptionId(alice));
  });

  it('keeps components apart: text moved from one to its neighbour is another key', async () => {
    const a = await subscriptionId({ ...alice, principal: 'p', name: 'a","b' });
    const b = await subscriptionId({ ...alice, principal: 'p","a', name: 'b' });
    expect(a).not.toBe(b);
  });

  it('refuses arguments JSON cannot hold', async () => {
    await expect(subscriptionId({ ...alice, arguments: { n: Number.NaN } })).rejects.toThrow(NotJsonError);
  });

  it('refuses a URL that does not parse', () => {
    expect(() => keyedUrl('not a url')).toThrow(TypeError);
    expect(() => subscriptionKeyText({ ...alice, url: '/relative' })).toThrow(TypeError);
  });

  it('keys verification per principal and URL, not per name or arguments', () => {
    const scope = verificationScopeText(alice.principal, alice.url);
    expect(scope).toBe('["mcp-webhook-verification","oauth#https://issuer.example#alice","https://proxy.example.com/hooks/client123"]');
    expect(verificationScopeText(alice.principal, 'HTTPS://PROXY.example.com:443/hooks/client123#frag')).toBe(scope);
    expect(verificationScopeText('oauth#https://issuer.example#bob', alice.url)).not.toBe(scope);
    expect(verificationScopeText(alice.principal, 'https://proxy.example.com/hooks/other')).not.toBe(scope);
  });
});

describe('TTL grant', () => {
  const now = Date.UTC(2026, 1, 19, 15, 30);
  const iso = (ms: number) => new Date(now + ms).toISOString();
  const finite: TtlPolicy = { ...DEFAULT_TTL_POLICY, noExpiry: false };

  it.each([
    {
      name: 'omitted: the default hour',
      ttlMs: undefined,
      policy: DEFAULT_TTL_POLICY,
      grant: { refreshBefore: '2026-02-19T16:30:00.000Z', expiresAt: now + 3_600_000, basis: 'default' },
    },
    {
      name: 'null: no expiry',
      ttlMs: null,
      policy: DEFAULT_TTL_POLICY,
      grant: { refreshBefore: null, expiresAt: null, basis: 'no_expiry' },
    },
    {
      name: 'null, no expiry not offered: the ceiling',
      ttlMs: null,
      policy: finite,
      grant: { refreshBefore: iso(86_400_000), expiresAt: now + 86_400_000, basis: 'ceiling' },
    },
    {
      name: 'an hour: as suggested',
      ttlMs: 3_600_000,
      policy: DEFAULT_TTL_POLICY,
      grant: { refreshBefore: iso(3_600_000), expiresAt: now + 3_600_000, basis: 'suggested' },
    },
    {
      name: 'exactly the floor',
      ttlMs: 60_000,
      policy: DEFAULT_TTL_POLICY,
      grant: { refreshBefore: iso(60_000), expiresAt: now + 60_000, basis: 'suggested' },
    },
    {
      name: 'just below the floor: clamped up',
      ttlMs: 59_999,
      policy: DEFAULT_TTL_POLICY,
      grant: { refreshBefore: iso(60_000), expiresAt: now + 60_000, basis: 'floor' },
    },
    {
      name: 'zero: clamped up',
      ttlMs: 0,
      policy: DEFAULT_TTL_POLICY,
      grant: { refreshBefore: iso(60_000), expiresAt: now + 60_000, basis: 'floor' },
    },
    {
      name: 'negative: clamped up',
      ttlMs: -5,
      policy: DEFAULT_TTL_POLICY,
      grant: { refreshBefore: iso(60_000), expiresAt: now + 60_000, basis: 'floor' },
    },
    {
      name: 'exactly the ceiling',
      ttlMs: 86_400_000,
      policy: DEFAULT_TTL_POLICY,
      grant: { refreshBefore: iso(86_400_000), expiresAt: now + 86_400_000, basis: 'suggested' },
    },
    {
      name: 'just above the ceiling: shortened',
      ttlMs: 86_400_001,
      policy: DEFAULT_TTL_POLICY,
      grant: { refreshBefore: iso(86_400_000), expiresAt: now + 86_400_000, basis: 'ceiling' },
    },
    {
      name: 'the largest integer: shortened',
      ttlMs: Number.MAX_SAFE_INTEGER,
      policy: DEFAULT_TTL_POLICY,
      grant: { refreshBefore: iso(86_400_000), expiresAt: now + 86_400_000, basis: 'ceiling' },
    },
    {
      name: 'a finite suggestion under a policy without no expiry',
      ttlMs: 120_000,
      policy: finite,
      grant: { refreshBefore: iso(120_000), expiresAt: now + 120_000, basis: 'suggested' },
    },
  ])('grants $name', ({ ttlMs, policy, grant }) => {
    expect(grantTtl(ttlMs, now, policy)).toEqual(grant);
  });

  it('never grants longer than a finite suggestion, except up to the floor', () => {
    for (const ttlMs of [-1, 0, 1, 30_000, 59_999, 60_000, 60_001, 3_600_000, 86_399_999, 86_400_000, 86_400_001, 10 ** 12]) {
      const { expiresAt, basis } = grantTtl(ttlMs, now);
      expect(expiresAt).not.toBeNull();
      const granted = (expiresAt ?? 0) - now;
      if (basis === 'floor') expect(granted).toBe(DEFAULT_TTL_POLICY.minTtlMs);
      else expect(granted).toBeLessThanOrEqual(ttlMs);
    }
  });

  it('grants no expiry only when ttlMs: null was suggested and the policy offers it', () => {
    for (const policy of [DEFAULT_TTL_POLICY, finite]) {
      for (const ttlMs of [undefined, null, 0, 1, 60_000, 3_600_000, Number.MAX_SAFE_INTEGER]) {
        expect(grantTtl(ttlMs, now, policy).refreshBefore === null).toBe(ttlMs === null && policy.noExpiry);
      }
    }
  });

  it('turns a no-expiry subscription finite when a refresh suggests a finite TTL or omits it', () => {
    expect(grantTtl(null, now).refreshBefore).toBeNull();
    expect(grantTtl(600_000, now).refreshBefore).toBe(iso(600_000));
    expect(grantTtl(undefined, now).refreshBefore).toBe(iso(3_600_000));
  });

  it.each([1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])('refuses ttlMs %s (the parser answers -32602 first)', (ttlMs) => {
    expect(() => grantTtl(ttlMs, now)).toThrow(RangeError);
  });

  it.each([
    { name: 'a zero floor', policy: { ...DEFAULT_TTL_POLICY, minTtlMs: 0 } },
    { name: 'a floor above the default', policy: { ...DEFAULT_TTL_POLICY, minTtlMs: 3_600_001 } },
    { name: 'a default above the ceiling', policy: { ...DEFAULT_TTL_POLICY, defaultTtlMs: 86_400_001 } },
    { name: 'a fractional bound', policy: { ...DEFAULT_TTL_POLICY, maxTtlMs: 1.5e7 + 0.5 } },
  ])('refuses a policy with $name', ({ policy }) => {
    expect(() => checkTtlPolicy(policy)).toThrow(RangeError);
    expect(() => grantTtl(undefined, now, policy)).toThrow(RangeError);
  });

  it('accepts the default policy and one whose bounds are equal', () => {
    expect(() => checkTtlPolicy(DEFAULT_TTL_POLICY)).not.toThrow();
    expect(grantTtl(1, now, { minTtlMs: 5, defaultTtlMs: 5, maxTtlMs: 5, noExpiry: false })).toEqual({
      refreshBefore: iso(5),
      expiresAt: now + 5,
      basis: 'floor',
    });
  });
});
