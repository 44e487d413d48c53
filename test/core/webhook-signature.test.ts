/**
 * Standard Webhooks signatures (src/core/webhook-signature.ts): the secret table (SEP-3415's
 * `whsec_` + 24 to 64 bytes), signing against published and reference vectors, and verification —
 * rotation, the 5-minute window at its edges both ways, several signatures in one header,
 * malformed headers.
 *
 * The vectors: the first is the one the Standard Webhooks libraries publish in their tests
 * (standard-webhooks/standard-webhooks, libraries/javascript/src/webhook.test.ts and
 * libraries/go/webhook_test.go, "sign function works"); the others were computed with that
 * repository's JS library, `standardwebhooks` 1.3.0, `new Webhook(secret).sign(id, new
 * Date(timestamp * 1000), body)`: keys of 24, 32 and 64 bytes, the SEP's example delivery, a
 * control envelope, a UTF-8 body, bytes that are not UTF-8, an empty body.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_TOLERANCE_SECONDS,
  isWebhookId,
  newWebhookSecret,
  parseWebhookSecret,
  signWebhook,
  verifyWebhook,
  type WebhookBody,
  webhookHeaders,
} from '../../src/core/webhook-signature.ts';

const VECTORS: readonly { name: string; secret: string; id: string; timestamp: number; body: WebhookBody; signature: string }[] = [
  {
    name: 'the published vector (24-byte key)',
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    timestamp: 1614265330,
    body: '{"test": 2432232314}',
    signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  },
  {
    name: "the SEP's example delivery (32-byte key)",
    secret: 'whsec_ASZLcJW63wQpTnOYveIHLFF2m8DlCi9UeZ7D6A0yV3w=',
    id: 'evt_789',
    timestamp: 1739980800,
    body: '{"eventId":"evt_789","name":"incident.created","timestamp":"2026-02-19T16:00:00Z","data":{"incidentId":"INC-1234","severity":"P1"},"cursor":"cursor_xyz"}',
    signature: 'v1,hjFnpWSV2k6hLOLQClNGQcSp3HDCqiI5ubV/BimNwqg=',
  },
  {
    name: 'a verification envelope (64-byte key)',
    secret: 'whsec_ByxRdpvA5QovVHmew+gNMld8ocbrEDVaf6TJ7hM4XYKnzPEWO2CFqs/0GT5jiK3S9xxBZouw1fofRGmOs9j9Ig==',
    id: 'msg_verification_3f9a',
    timestamp: 1700000000,
    body: '{"type":"verification","challenge":"n0nce"}',
    signature: 'v1,+gMFP9lf4QKRmD4T/6Fa60AKUYmZXZsT/H8JVCl31lc=',
  },
  {
    name: 'a body with non-ASCII text, at timestamp 0',
    secret: 'whsec_AyhNcpe84QYrUHWav+QJLlN4ncLnDDFW',
    id: 'evt_1',
    timestamp: 0,
    body: '{"title":"café ☕"}',
    signature: 'v1,n24Dc6KgCEjzNW3I+jgLKNR0jaXVhfXUSm5pX/hMX+I=',
  },
  {
    name: 'a body of bytes that are not UTF-8',
    secret: 'whsec_CS5TeJ3C5wwxVnugxeoPNFl+o8jtEjdcgabL8BU6X4Q=',
    id: 'evt_2',
    timestamp: 1739980800,
    body: new Uint8Array([0xff, 0x00, 0xfe, 0x80]),
    signature: 'v1,A84VneSWguthXPLzoKmIi18RYK7RLOJFNon592Aw4wc=',
  },
  {
    name: 'an empty body',
    secret: 'whsec_CS5TeJ3C5wwxVnugxeoPNFl+o8jtEjdcgabL8BU6X4Q=',
    id: 'evt_3',
    timestamp: 1739980800,
    body: '',
    signature: 'v1,e+tmAUFHvq2/LFzG66cjux1edmBkUpsRLSOPu3SIOMo=',
  },
];

function keyOf(secret: string): Uint8Array {
  const parsed = parseWebhookSecret(secret);
  if (!parsed.ok) throw new Error(`test secret refused: ${parsed.reason}`);
  return parsed.key;
}

const b64 = (byteCount: number, fill = 0x5a) => btoa(String.fromCharCode(...new Uint8Array(byteCount).fill(fill)));

describe('parseWebhookSecret', () => {
  it.each([
    { name: '24 bytes, the least', text: `whsec_${b64(24)}`, bytes: 24 },
    { name: '32 bytes (one padding character)', text: `whsec_${b64(32)}`, bytes: 32 },
    { name: '25 bytes (two padding characters)', text: `whsec_${b64(25)}`, bytes: 25 },
    { name: '64 bytes, the most', text: `whsec_${b64(64)}`, bytes: 64 },
    { name: 'the published vector', text: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', bytes: 24 },
  ])('accepts $name', ({ text, bytes }) => {
    const parsed = parseWebhookSecret(text);
    expect(parsed.ok && parsed.key.byteLength).toBe(bytes);
  });

  it('gives the decoded bytes', () => {
    expect(parseWebhookSecret(`whsec_${b64(24, 0x07)}`)).toEqual({ ok: true, key: new Uint8Array(24).fill(0x07) });
  });

  it.each([
    { name: 'a number', text: 42, reason: 'not_a_string' },
    { name: 'null', text: null, reason: 'not_a_string' },
    { name: 'no prefix (bare base64)', text: b64(32), reason: 'missing_prefix' },
    { name: 'the prefix in capitals', text: `WHSEC_${b64(32)}`, reason: 'missing_prefix' },
    { name: 'the asymmetric secret prefix', text: `whsk_${b64(32)}`, reason: 'missing_prefix' },
    { name: 'a leading space', text: ` whsec_${b64(32)}`, reason: 'missing_prefix' },
    { name: 'nothing after the prefix', text: 'whsec_', reason: 'too_short' },
    { name: '23 bytes', text: `whsec_${b64(23)}`, reason: 'too_short' },
    { name: '65 bytes', text: `whsec_${b64(65)}`, reason: 'too_long' },
    { name: 'far too long to decode', text: `whsec_${'A'.repeat(10_000)}`, reason: 'too_long' },
    { name: 'padding left off', text: `whsec_${b64(32).replace(/=+$/, '')}`, reason: 'not_base64' },
    { name: 'the URL-safe alphabet', text: `whsec_${b64(33, 0xfb)}`.replaceAll('+', '-').replaceAll('/', '_'), reason: 'not_base64' },
    { name: 'a space inside', text: `whsec_${b64(24).slice(0, 8)} ${b64(24).slice(8)}`, reason: 'not_base64' },
    { name: 'a trailing newline', text: `whsec_${b64(24)}\n`, reason: 'not_base64' },
    { name: 'stray bits in the last character', text: `whsec_${b64(32).slice(0, -2)}B=`, reason: 'not_base64' },
    { name: 'too much padding', text: `whsec_${b64(24)}====`, reason: 'not_base64' },
    { name: 'padding in the middle', text: `whsec_${b64(25)}${b64(24)}`, reason: 'not_base64' },
  ])('refuses $name: $reason', ({ text, reason }) => {
    expect(parseWebhookSecret(text)).toEqual({ ok: false, reason });
  });
});

describe('newWebhookSecret', () => {
  it.each([24, 32, 64])('makes a secret of %i random bytes that parses', (bytes) => {
    const secret = newWebhookSecret(bytes);
    const parsed = parseWebhookSecret(secret);
    expect(parsed.ok && parsed.key.byteLength).toBe(bytes);
    expect(newWebhookSecret(bytes)).not.toBe(secret);
  });

  it.each([23, 65, 32.5])('refuses %s bytes', (bytes) => {
    expect(() => newWebhookSecret(bytes)).toThrow(RangeError);
  });
});

describe('signWebhook', () => {
  it.each(VECTORS)('matches $name', async ({ secret, id, timestamp, body, signature }) => {
    expect(await signWebhook({ secret: keyOf(secret), id, timestamp, body })).toBe(signature);
  });

  it('signs a text body as its UTF-8 bytes, and an ArrayBuffer as a Uint8Array', async () => {
    const [, , , utf8] = VECTORS;
    const bytes = new TextEncoder().encode(utf8!.body as string);
    const secret = keyOf(utf8!.secret);
    expect(await signWebhook({ ...utf8!, secret, body: bytes })).toBe(utf8!.signature);
    expect(await signWebhook({ ...utf8!, secret, body: bytes.buffer as ArrayBuffer })).toBe(utf8!.signature);
  });

  it.each([
    { name: 'an empty id', id: '', timestamp: 1 },
    { name: 'an id with a dot', id: 'evt.1', timestamp: 1 },
    { name: 'an id with a space', id: 'evt 1', timestamp: 1 },
    { name: 'an id with a newline', id: 'evt\n1', timestamp: 1 },
    { name: 'a non-ASCII id', id: 'évt', timestamp: 1 },
    { name: 'a 257-character id', id: 'e'.repeat(257), timestamp: 1 },
    { name: 'a timestamp in milliseconds with a fraction', id: 'evt_1', timestamp: 1.5 },
    { name: 'a negative timestamp', id: 'evt_1', timestamp: -1 },
  ])('refuses $name', async ({ id, timestamp }) => {
    await expect(signWebhook({ secret: keyOf(VECTORS[0]!.secret), id, timestamp, body: '' })).rejects.toThrow(RangeError);
  });

  it.each([
    ['evt_789', true],
    ['msg_gap_0123abcd', true],
    [`${'e'.repeat(256)}`, true],
    ['a.b', false],
    ['', false],
  ] as const)('isWebhookId(%j) is %s', (id, expected) => {
    expect(isWebhookId(id)).toBe(expected);
  });
});

describe('webhookHeaders', () => {
  const vector = VECTORS[1]!;

  it('gives the three headers of one attempt', async () => {
    const { id, timestamp, body } = vector;
    expect(await webhookHeaders({ secrets: [keyOf(vector.secret)], id, timestamp, body })).toEqual({
      'webhook-id': 'evt_789',
      'webhook-timestamp': '1739980800',
      'webhook-signature': vector.signature,
    });
  });

  it('dual-signs: one signature per secret, in order, space-separated', async () => {
    const { id, timestamp, body } = vector;
    const headers = await webhookHeaders({ secrets: [keyOf(vector.secret), keyOf(VECTORS[0]!.secret)], id, timestamp, body });
    const other = await signWebhook({ secret: keyOf(VECTORS[0]!.secret), id, timestamp, body });
    expect(headers['webhook-signature']).toBe(`${vector.signature} ${other}`);
  });

  it('refuses no secret at all', async () => {
    await expect(webhookHeaders({ secrets: [], id: 'evt_1', timestamp: 1, body: '' })).rejects.toThrow(RangeError);
  });
});

describe('verifyWebhook', () => {
  const current = keyOf(newWebhookSecret());
  const previous = keyOf(newWebhookSecret());
  const third = keyOf(newWebhookSecret());
  const T = 1_739_980_800;
  const body = '{"eventId":"evt_1","name":"n","timestamp":"2026-02-19T16:00:00Z","data":{}}';
  const nowAt = (seconds: number) => seconds * 1000;
  const signedBy = (secrets: Uint8Array[], timestamp = T) => webhookHeaders({ secrets, id: 'evt_1', timestamp, body });

  it.each(VECTORS)('accepts $name at its own time', async ({ secret, id, timestamp, body, signature }) => {
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
    expect(await verifyWebhook({ secrets: [keyOf(secret)], headers, body, now: nowAt(timestamp) })).toEqual({ ok: true, id, timestamp });
  });

  it.each([
    { name: 'the current secret', signers: () => [current] },
    { name: 'the previous secret', signers: () => [previous] },
    { name: 'both, current first', signers: () => [current, previous] },
    { name: 'a third secret and the previous one', signers: () => [third, previous] },
  ])('during rotation, accepts a delivery signed by $name', async ({ signers }) => {
    const headers = await signedBy(signers());
    expect(await verifyWebhook({ secrets: [current, previous], headers, body, now: nowAt(T) })).toEqual({
      ok: true,
      id: 'evt_1',
      timestamp: T,
    });
  });

  it('refuses a delivery signed only by a third secret', async () => {
    const headers = await signedBy([third]);
    expect(await verifyWebhook({ secrets: [current, previous], headers, body, now: nowAt(T) })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it.each([
    { name: 'exactly 300 s old', now: nowAt(T + 300), verdict: { ok: true, id: 'evt_1', timestamp: T } },
    { name: '300.999 s old (now in the same second)', now: nowAt(T + 300) + 999, verdict: { ok: true, id: 'evt_1', timestamp: T } },
    { name: '301 s old', now: nowAt(T + 301), verdict: { ok: false, reason: 'timestamp_too_old' } },
    { name: 'exactly 300 s ahead', now: nowAt(T - 300), verdict: { ok: true, id: 'evt_1', timestamp: T } },
    { name: '301 s ahead', now: nowAt(T - 301), verdict: { ok: false, reason: 'timestamp_too_new' } },
    { name: '300.001 s ahead (now in the second before)', now: nowAt(T - 300) - 1, verdict: { ok: false, reason: 'timestamp_too_new' } },
  ])('with the default window, a timestamp $name', async ({ now, verdict }) => {
    expect(DEFAULT_TOLERANCE_SECONDS).toBe(300);
    expect(await verifyWebhook({ secrets: [current], headers: await signedBy([current]), body, now })).toEqual(verdict);
  });

  it.each([
    { toleranceSeconds: 0, now: nowAt(T), ok: true },
    { toleranceSeconds: 0, now: nowAt(T + 1), ok: false },
    { toleranceSeconds: 60, now: nowAt(T + 60), ok: true },
    { toleranceSeconds: 60, now: nowAt(T - 61), ok: false },
  ])('with a window of $toleranceSeconds s, now at $now ms: $ok', async ({ toleranceSeconds, now, ok }) => {
    const verdict = await verifyWebhook({ secrets: [current], headers: await signedBy([current]), body, now, toleranceSeconds });
    expect(verdict.ok).toBe(ok);
  });

  it('checks the window before the signature: a stale forgery is refused as stale', async () => {
    const headers = await signedBy([third], T - 3600);
    expect(await verifyWebhook({ secrets: [current], headers, body, now: nowAt(T) })).toEqual({ ok: false, reason: 'timestamp_too_old' });
  });

  it.each([
    {
      name: 'the valid one among others',
      header: (valid: string) => `v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v2,xyz ${valid} v1,AAAA`,
    },
    {
      name: 'the valid one after an ed25519 (v1a) one',
      header: (valid: string) => `v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg== ${valid}`,
    },
    {
      name: 'the valid one between doubled spaces',
      header: (valid: string) => `v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=  ${valid}  `,
    },
  ])('accepts a header with several signatures: $name', async ({ header }) => {
    const headers = await signedBy([current]);
    const verdict = await verifyWebhook({
      secrets: [current],
      headers: { ...headers, 'webhook-signature': header(headers['webhook-signature']) },
      body,
      now: nowAt(T),
    });
    expect(verdict.ok).toBe(true);
  });

  it('reads a Headers object, and a plain record whatever the case of its names', async () => {
    const signed = await signedBy([current]);
    const upper = Object.fromEntries(Object.entries(signed).map(([name, value]) => [name.toUpperCase(), value]));
    for (const headers of [new Headers(signed), upper]) {
      expect((await verifyWebhook({ secrets: [current], headers, body, now: nowAt(T) })).ok).toBe(true);
    }
  });

  it.each([
    { name: 'no webhook-id', change: { 'webhook-id': undefined }, reason: 'missing_headers' },
    { name: 'an empty webhook-id', change: { 'webhook-id': '' }, reason: 'missing_headers' },
    { name: 'no webhook-timestamp', change: { 'webhook-timestamp': undefined }, reason: 'missing_headers' },
    { name: 'no webhook-signature', change: { 'webhook-signature': undefined }, reason: 'missing_headers' },
    { name: 'a timestamp that is a word', change: { 'webhook-timestamp': 'hello' }, reason: 'malformed_timestamp' },
    { name: 'a timestamp with trailing text', change: { 'webhook-timestamp': `${T}abc` }, reason: 'malformed_timestamp' },
    { name: 'a timestamp with a fraction', change: { 'webhook-timestamp': `${T}.5` }, reason: 'malformed_timestamp' },
    { name: 'a negative timestamp', change: { 'webhook-timestamp': `-${T}` }, reason: 'malformed_timestamp' },
    { name: 'a timestamp with a leading zero', change: { 'webhook-timestamp': `0${T}` }, reason: 'malformed_timestamp' },
    { name: 'a timestamp in milliseconds', change: { 'webhook-timestamp': `${T}000` }, reason: 'timestamp_too_new' },
    { name: 'another id', change: { 'webhook-id': 'evt_2' }, reason: 'bad_signature' },
    { name: 'another timestamp in the window', change: { 'webhook-timestamp': String(T + 1) }, reason: 'bad_signature' },
    { name: 'a signature without its version', change: { 'webhook-signature': 'sig' }, reason: 'bad_signature' },
    { name: 'a bare "v1,"', change: { 'webhook-signature': 'v1,' }, reason: 'bad_signature' },
    {
      name: 'only a v2 signature',
      change: { 'webhook-signature': 'v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=' },
      reason: 'bad_signature',
    },
  ])('refuses $name: $reason', async ({ change, reason }) => {
    const headers: Record<string, string | undefined> = { ...(await signedBy([current])), ...change };
    expect(await verifyWebhook({ secrets: [current], headers, body, now: nowAt(T) })).toEqual({ ok: false, reason });
  });

  it.each([
    { name: 'cut short', signature: (valid: string) => valid.slice(0, 8) },
    { name: 'with its last character changed', signature: (valid: string) => `${valid.slice(0, -2)}${valid.at(-2) === 'A' ? 'B' : 'A'}=` },
    { name: 'under another version tag', signature: (valid: string) => valid.replace(/^v1,/, 'v1a,') },
    { name: 'in capitals', signature: (valid: string) => valid.replace(/^v1,/, 'V1,') },
  ])('refuses the right signature $name', async ({ signature }) => {
    const headers = await signedBy([current]);
    const changed = { ...headers, 'webhook-signature': signature(headers['webhook-signature']) };
    expect(await verifyWebhook({ secrets: [current], headers: changed, body, now: nowAt(T) })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it.each([
    { name: 'a re-serialized body (a space added)', body: body.replace(':', ': ') },
    { name: 'an empty body', body: '' },
    { name: 'one byte more', body: `${body} ` },
  ])('refuses $name', async ({ body: received }) => {
    const headers = await signedBy([current]);
    expect(await verifyWebhook({ secrets: [current], headers, body: received, now: nowAt(T) })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('refuses to run without a secret or with a negative window', async () => {
    const headers = await signedBy([current]);
    await expect(verifyWebhook({ secrets: [], headers, body, now: nowAt(T) })).rejects.toThrow(RangeError);
    await expect(verifyWebhook({ secrets: [current], headers, body, now: nowAt(T), toleranceSeconds: -1 })).rejects.toThrow(RangeError);
  });
});
