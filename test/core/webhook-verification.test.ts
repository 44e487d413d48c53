import { describe, expect, it } from 'vitest';
import { ATTEMPT_TIMEOUT_MS, type CappedBody, readCapped } from '../../src/core/webhook-attempt.ts';
import {
  CHALLENGE_TTL_MS,
  checkChallengeAnswer,
  sameInConstantTime,
  VERIFICATION_TTL_MS,
  VerificationChallenge,
  verificationCurrent,
} from '../../src/core/webhook-verification.ts';
import { isWebhookId } from '../../src/core/webhook-signature.ts';

const now = 1_700_000_000_000;
const body = (text: string): CappedBody => ({ kind: 'whole', bytes: new TextEncoder().encode(text) });
/** `before`, a 0xff byte (never UTF-8), `after`. */
function withStrayByte(before: string, after: string): CappedBody {
  const [a, b] = [new TextEncoder().encode(before), new TextEncoder().encode(after)];
  const bytes = new Uint8Array(a.byteLength + 1 + b.byteLength);
  bytes.set(a);
  bytes[a.byteLength] = 0xff;
  bytes.set(b, a.byteLength + 1);
  return { kind: 'whole', bytes };
}
const swapCase = (text: string) => [...text].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
const echo = (challenge: VerificationChallenge) => body(JSON.stringify({ challenge: challenge.value }));

describe('the challenge', () => {
  it('is 256 random bits in base64url, 43 characters', () => {
    const challenge = VerificationChallenge.issue(now);
    expect(challenge.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(atob(`${challenge.value.replaceAll('-', '+').replaceAll('_', '/')}=`).length).toBe(32);
  });

  it('is new every time', () => {
    const values = new Set(Array.from({ length: 1_000 }, () => VerificationChallenge.issue(now).value));
    expect(values.size).toBe(1_000);
  });

  it('lives as long as the attempt that carries it, unless told', () => {
    expect(CHALLENGE_TTL_MS).toBe(ATTEMPT_TIMEOUT_MS);
    const challenge = VerificationChallenge.issue(now);
    expect(challenge.issuedAt).toBe(now);
    expect(challenge.expiresAt).toBe(now + CHALLENGE_TTL_MS);
    expect(VerificationChallenge.issue(now, 5).expiresAt).toBe(now + 5);
  });

  it.each([0, -1, 1.5])('refuses a life of %s ms', (ttlMs) => {
    expect(() => VerificationChallenge.issue(now, ttlMs)).toThrow(RangeError);
  });

  it('goes out as the verification envelope, with a msg_verification_ webhook-id', () => {
    const challenge = VerificationChallenge.issue(now);
    const message = challenge.message();
    expect(JSON.parse(message.body)).toEqual({ type: 'verification', challenge: challenge.value });
    expect(Object.keys(JSON.parse(message.body))).toEqual(['type', 'challenge']);
    expect(message.id).toMatch(/^msg_verification_[0-9a-f]{32}$/);
    expect(isWebhookId(message.id)).toBe(true);
    expect(challenge.message().id).not.toBe(message.id);
  });
});

describe('checkChallengeAnswer', () => {
  type Row = readonly [string, number, (c: VerificationChallenge) => CappedBody, string | undefined];
  const rows: readonly Row[] = [
    ['the echo, 200', 200, echo, undefined],
    ['the echo, 202', 202, echo, undefined],
    ['the echo, 299', 299, echo, undefined],
    ['the echo with whitespace and another member', 200, (c) => body(` {\n "ok": true, "challenge": "${c.value}" }\n`), undefined],
    ['the echo with a UTF-8 BOM', 200, (c) => body(`\uFEFF{"challenge":"${c.value}"}`), undefined],
    ['the echo under a redirect status', 302, echo, 'status'],
    ['the echo under 199', 199, echo, 'status'],
    ['the echo under 300', 300, echo, 'status'],
    ['the echo under 404', 404, echo, 'status'],
    ['the echo under 500', 500, echo, 'status'],
    ['a body past the cap', 200, () => ({ kind: 'over_cap' }), 'over_cap'],
    ['an empty body', 200, () => body(''), 'not_json'],
    ['the bare nonce as text', 200, (c) => body(c.value), 'not_json'],
    ['the nonce as a JSON string', 200, (c) => body(JSON.stringify(c.value)), 'not_json'],
    ['an array holding the echo', 200, (c) => body(JSON.stringify([{ challenge: c.value }])), 'not_json'],
    ['null', 200, () => body('null'), 'not_json'],
    ['bytes that are not UTF-8', 200, () => ({ kind: 'whole', bytes: new Uint8Array([0x7b, 0xff, 0x7d]) }), 'not_json'],
    ['the echo beside a byte that is not UTF-8', 200, (c) => withStrayByte(`{"challenge":"${c.value}","x":"`, '"}'), 'not_json'],
    ['an object without challenge', 200, () => body('{"ok":true}'), 'no_challenge'],
    ['a challenge that is a number', 200, () => body('{"challenge":42}'), 'no_challenge'],
    ['a challenge nested deeper', 200, (c) => body(JSON.stringify({ data: { challenge: c.value } })), 'no_challenge'],
    ['the envelope reflected', 200, (c) => body(c.message().body), 'reflected'],
    ['another challenge', 200, () => body(JSON.stringify({ challenge: VerificationChallenge.issue(now).value })), 'mismatch'],
    ['the nonce one character short', 200, (c) => body(JSON.stringify({ challenge: c.value.slice(0, -1) })), 'mismatch'],
    ['the nonce one character long', 200, (c) => body(JSON.stringify({ challenge: `${c.value}A` })), 'mismatch'],
    ['the nonce in other case', 200, (c) => body(JSON.stringify({ challenge: swapCase(c.value) })), 'mismatch'],
    ['an empty challenge', 200, () => body('{"challenge":""}'), 'mismatch'],
  ];

  it.each(rows)('%s (status %i): %s', (_, status, answer, why) => {
    const challenge = VerificationChallenge.issue(now);
    const check = checkChallengeAnswer(challenge, status, answer(challenge), now + 1);
    expect(check).toEqual(why === undefined ? { ok: true } : { ok: false, reason: 'challenge_failed', why });
  });

  it('accepts an answer once: the challenge is single-use', () => {
    const challenge = VerificationChallenge.issue(now);
    expect(challenge.spent).toBe(false);
    expect(checkChallengeAnswer(challenge, 200, echo(challenge), now + 1)).toEqual({ ok: true });
    expect(challenge.spent).toBe(true);
    expect(checkChallengeAnswer(challenge, 200, echo(challenge), now + 2)).toEqual({ ok: false, reason: 'challenge_failed', why: 'spent' });
  });

  it('is spent by a failed answer too: a retry is a new challenge', () => {
    const challenge = VerificationChallenge.issue(now);
    expect(checkChallengeAnswer(challenge, 503, echo(challenge), now + 1)).toMatchObject({ ok: false, why: 'status' });
    expect(checkChallengeAnswer(challenge, 200, echo(challenge), now + 2)).toMatchObject({ ok: false, why: 'spent' });
  });

  it.each([
    ['the instant it was issued', 0, true],
    ['1 ms before it expires', CHALLENGE_TTL_MS - 1, true],
    ['the instant it expires', CHALLENGE_TTL_MS, false],
    ['long after', 3_600_000, false],
    ['before it was issued (a clock gone back)', -1, false],
  ] as const)('answered %s: %s', (_, after, ok) => {
    const challenge = VerificationChallenge.issue(now);
    expect(checkChallengeAnswer(challenge, 200, echo(challenge), now + after)).toEqual(
      ok ? { ok: true } : { ok: false, reason: 'timeout', why: 'expired' },
    );
  });

  it('accepts the echo read from a real answer by readCapped', async () => {
    const challenge = VerificationChallenge.issue(now);
    const response = Response.json({ challenge: challenge.value });
    expect(checkChallengeAnswer(challenge, response.status, await readCapped(response), now + 1)).toEqual({ ok: true });
  });
});

describe('sameInConstantTime', () => {
  const nonce = 'q1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6j7k8l9z0x1c';
  it.each([
    ['equal', nonce, nonce, true],
    ['both empty', '', '', true],
    ['one byte off at the start', `Q${nonce.slice(1)}`, nonce, false],
    ['one byte off in the middle', `${nonce.slice(0, 20)}#${nonce.slice(21)}`, nonce, false],
    ['one byte off at the end', `${nonce.slice(0, -1)}C`, nonce, false],
    ['one bit off', `${nonce.slice(0, -1)}b`, nonce, false],
    ['shorter (a prefix)', nonce.slice(0, -1), nonce, false],
    ['longer (an extension)', `${nonce}c`, nonce, false],
    ['empty against the nonce', '', nonce, false],
    ['the nonce against empty', nonce, '', false],
    ['padded with NULs to the same length in bytes', `${nonce.slice(0, -1)}\0`, nonce, false],
    ['equal non-ASCII', 'é✓', 'é✓', true],
    ['same UTF-16 length, other UTF-8 bytes', 'éa', 'ée', false],
  ] as const)('%s: %s', (_, given, expected, same) => {
    expect(sameInConstantTime(given, expected)).toBe(same);
  });
});

describe('verificationCurrent', () => {
  it('caches a verification for a day unless told', () => {
    expect(VERIFICATION_TTL_MS).toBe(86_400_000);
  });

  it.each([
    ['no entry', undefined, false],
    ['verified just now', { verifiedAt: now }, true],
    ['verified 1 ms before the TTL ends', { verifiedAt: now - VERIFICATION_TTL_MS + 1 }, true],
    ['verified exactly a TTL ago', { verifiedAt: now - VERIFICATION_TTL_MS }, false],
    ['verified two days ago', { verifiedAt: now - 2 * VERIFICATION_TTL_MS }, false],
    ['verified in the future (a clock gone back)', { verifiedAt: now + 1 }, false],
  ] as const)('%s: %s', (_, entry, current) => {
    expect(verificationCurrent(entry, now)).toBe(current);
  });

  it.each([
    [999, true],
    [1_000, false],
  ])('honours a TTL it is given: %i ms after a 1 s verification is %s', (after, current) => {
    expect(verificationCurrent({ verifiedAt: now }, now + after, 1_000)).toBe(current);
  });
});
