/**
 * The webhook wire (src/core/events-webhook-wire.ts, imported here through events-wire.ts, which
 * re-exports it): SEP-3415's webhook names as the text spells them, the parsing of
 * `events/subscribe` and `events/unsubscribe` params into typed values or a -32602 refusal with a
 * reason, and the builders' output against the text's own examples.
 */
import { describe, expect, it } from 'vitest';
import {
  CONTROL_WEBHOOK_ID_PREFIX,
  ControlEnvelopeType,
  challengeAnswer,
  controlWebhookId,
  deliveryBody,
  deliveryStatus,
  gapEnvelope,
  MAX_WEBHOOK_BODY_BYTES,
  parseSubscribeParams,
  parseUnsubscribeParams,
  readChallengeAnswer,
  readWebhookBody,
  SUBSCRIPTION_ID_HEADER,
  SUBSCRIPTION_ID_PREFIX,
  subscribeResult,
  terminatedEnvelope,
  unsubscribeResult,
  verificationEnvelope,
  WEBHOOK_CONTENT_TYPE,
  WEBHOOK_DELIVERY_MODE,
  WEBHOOK_ID_HEADER,
  WEBHOOK_JWKS_WELL_KNOWN_PATH,
  WEBHOOK_METHOD,
  WEBHOOK_RECEIVER_WELL_KNOWN_PATH,
  WEBHOOK_REQUIRED_HEADERS,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  webhookRequestHeaders,
} from '../../src/core/events-webhook-wire.ts';
import { EventsMethod, MAX_CURSOR_LENGTH } from '../../src/core/events-wire.ts';
import { isWebhookId } from '../../src/core/webhook-signature.ts';
import type { CallbackUrlPolicy } from '../../src/core/webhook-url.ts';

describe('the webhook names of SEP-3415', () => {
  it.each<[string, unknown, unknown]>([
    ['events/subscribe', EventsMethod.subscribe, 'events/subscribe'],
    ['events/unsubscribe', EventsMethod.unsubscribe, 'events/unsubscribe'],
    ['the subscription id header', SUBSCRIPTION_ID_HEADER, 'X-MCP-Subscription-Id'],
    ['webhook-id', WEBHOOK_ID_HEADER, 'webhook-id'],
    ['webhook-timestamp', WEBHOOK_TIMESTAMP_HEADER, 'webhook-timestamp'],
    ['webhook-signature', WEBHOOK_SIGNATURE_HEADER, 'webhook-signature'],
    [
      'the headers on every delivery',
      WEBHOOK_REQUIRED_HEADERS,
      ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'X-MCP-Subscription-Id'],
    ],
    ['the method', WEBHOOK_METHOD, 'POST'],
    ['the content type', WEBHOOK_CONTENT_TYPE, 'application/json'],
    ['256 KiB', MAX_WEBHOOK_BODY_BYTES, 262_144],
    ['the receiver document', WEBHOOK_RECEIVER_WELL_KNOWN_PATH, '/.well-known/mcp-webhook-receiver.json'],
    ['the signing keys', WEBHOOK_JWKS_WELL_KNOWN_PATH, '/.well-known/mcp-webhook-jwks.json'],
    ['the id prefix (sub_a3f1c8e2b0d49f7e)', SUBSCRIPTION_ID_PREFIX, 'sub_'],
    ['delivery.mode', WEBHOOK_DELIVERY_MODE, 'webhook'],
    ['envelope types', Object.values(ControlEnvelopeType), ['verification', 'gap', 'terminated']],
    ['the control webhook-id prefix', CONTROL_WEBHOOK_ID_PREFIX, 'msg_'],
  ])('%s', (_name, actual, expected) => {
    expect(actual).toEqual(expected);
  });

  // "`webhook-id` for a control envelope is a per-message identifier of the form `msg_<type>_<random>`."
  it.each(Object.values(ControlEnvelopeType))('a %s envelope webhook-id is msg_<type>_<random>, a valid webhook-id', (type) => {
    const id = controlWebhookId(type, new Uint8Array(16).fill(0xab));
    expect(id).toBe(`msg_${type}_${'ab'.repeat(16)}`);
    expect(isWebhookId(id)).toBe(true);
    expect(controlWebhookId(type)).toMatch(new RegExp(`^msg_${type}_[0-9a-f]{32}$`));
    expect(controlWebhookId(type)).not.toBe(controlWebhookId(type));
    expect(() => controlWebhookId(type, new Uint8Array(8))).toThrow(RangeError);
  });
});

const SECRET_24 = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const secretOf = (bytes: number) => `whsec_${btoa(String.fromCharCode(...new Uint8Array(bytes).fill(7)))}`;
const PUBLIC: CallbackUrlPolicy = { devOrigins: [], serverOrigin: 'https://mcp.example.com' };
const DEV: CallbackUrlPolicy = { devOrigins: ['http://127.0.0.1:8788'], serverOrigin: 'http://127.0.0.1:8787' };
const URL_ = 'https://proxy.example.com/hooks/client123';
const ok = (extra: object = {}) => ({ name: 'a', delivery: { url: URL_, secret: SECRET_24 }, ...extra });
const refused = (reason: string, refusal?: string) => ({
  invalid: expect.objectContaining({ code: -32602, data: refusal === undefined ? { reason } : { reason, refusal } }),
});

describe('parseSubscribeParams', () => {
  it.each<{ name: string; params: unknown; policy?: CallbackUrlPolicy; parsed: unknown }>([
    {
      name: 'the SEP example',
      params: {
        name: 'incident.created',
        arguments: { severity: 'P1' },
        delivery: { mode: 'webhook', url: URL_, secret: SECRET_24 },
        cursor: null,
        maxAgeMs: 300000,
        ttlMs: 3600000,
      },
      parsed: {
        name: 'incident.created',
        arguments: { severity: 'P1' },
        delivery: { url: URL_, secret: SECRET_24 },
        cursor: null,
        maxAgeMs: 300000,
        ttlMs: 3600000,
      },
    },
    // The client guidance sends `delivery: {url, secret}`: mode is optional.
    {
      name: 'no mode, no cursor, no ttlMs',
      params: ok(),
      parsed: { name: 'a', arguments: {}, delivery: { url: URL_, secret: SECRET_24 }, cursor: null, maxAgeMs: undefined, ttlMs: undefined },
    },
    { name: 'ttlMs null asks no expiry', params: ok({ ttlMs: null }), parsed: expect.objectContaining({ ttlMs: null }) },
    // "there is no rejection path for TTL values": the grant clamps.
    { name: 'ttlMs 0', params: ok({ ttlMs: 0 }), parsed: expect.objectContaining({ ttlMs: 0 }) },
    { name: 'ttlMs negative', params: ok({ ttlMs: -5 }), parsed: expect.objectContaining({ ttlMs: -5 }) },
    { name: 'ttlMs huge, held safe', params: ok({ ttlMs: 1e300 }), parsed: expect.objectContaining({ ttlMs: Number.MAX_SAFE_INTEGER }) },
    { name: 'ttlMs huge negative', params: ok({ ttlMs: -1e300 }), parsed: expect.objectContaining({ ttlMs: -Number.MAX_SAFE_INTEGER }) },
    { name: 'a cursor to resume from', params: ok({ cursor: 'c.1' }), parsed: expect.objectContaining({ cursor: 'c.1' }) },
    {
      name: 'the URL as WHATWG serializes it',
      params: { name: 'a', delivery: { url: 'HTTPS://Proxy.Example.com:443/a/../hooks', secret: SECRET_24 } },
      parsed: expect.objectContaining({ delivery: { url: 'https://proxy.example.com/hooks', secret: SECRET_24 } }),
    },
    {
      name: 'a 64-byte secret',
      params: { name: 'a', delivery: { url: URL_, secret: secretOf(64) } },
      parsed: expect.objectContaining({ name: 'a' }),
    },
    {
      name: 'a WEBHOOK_DEV_ORIGINS receiver on loopback, over http',
      params: { name: 'a', delivery: { url: 'http://127.0.0.1:8788/hook', secret: SECRET_24 } },
      policy: DEV,
      parsed: expect.objectContaining({ delivery: { url: 'http://127.0.0.1:8788/hook', secret: SECRET_24 } }),
    },
    {
      name: 'unknown members ignored',
      params: ok({ future: 1, _meta: {}, delivery: { url: URL_, secret: SECRET_24, x: 1 } }),
      parsed: expect.objectContaining({ name: 'a' }),
    },
    // The subscription, as poll's.
    { name: 'no params', params: undefined, parsed: refused('invalid_params') },
    { name: 'no name', params: { delivery: { url: URL_, secret: SECRET_24 } }, parsed: refused('invalid_params') },
    { name: 'arguments an array', params: ok({ arguments: [] }), parsed: refused('invalid_arguments') },
    { name: 'cursor a number', params: ok({ cursor: 1 }), parsed: refused('malformed_cursor') },
    { name: 'cursor too long', params: ok({ cursor: 'c'.repeat(MAX_CURSOR_LENGTH + 1) }), parsed: refused('malformed_cursor') },
    { name: 'maxAgeMs negative', params: ok({ maxAgeMs: -1 }), parsed: refused('invalid_params') },
    // delivery.
    { name: 'no delivery', params: { name: 'a' }, parsed: refused('invalid_delivery', 'not_an_object') },
    { name: 'delivery an array', params: { name: 'a', delivery: [URL_] }, parsed: refused('invalid_delivery', 'not_an_object') },
    {
      name: 'mode push',
      params: ok({ delivery: { mode: 'push', url: URL_, secret: SECRET_24 } }),
      parsed: refused('invalid_delivery', 'not_webhook'),
    },
    {
      name: 'mode null',
      params: ok({ delivery: { mode: null, url: URL_, secret: SECRET_24 } }),
      parsed: refused('invalid_delivery', 'not_webhook'),
    },
    // delivery.url: "Servers MUST reject `events/subscribe` with a non-`https` `delivery.url` (`InvalidParams`)."
    { name: 'no url', params: ok({ delivery: { secret: SECRET_24 } }), parsed: refused('invalid_callback_url', 'malformed_url') },
    {
      name: 'url a number',
      params: ok({ delivery: { url: 1, secret: SECRET_24 } }),
      parsed: refused('invalid_callback_url', 'malformed_url'),
    },
    {
      name: 'url relative',
      params: ok({ delivery: { url: '/hooks', secret: SECRET_24 } }),
      parsed: refused('invalid_callback_url', 'malformed_url'),
    },
    {
      name: 'url http',
      params: ok({ delivery: { url: 'http://proxy.example.com/h', secret: SECRET_24 } }),
      parsed: refused('invalid_callback_url', 'not_https'),
    },
    {
      name: 'url private literal',
      params: ok({ delivery: { url: 'https://10.0.0.1/h', secret: SECRET_24 } }),
      parsed: refused('invalid_callback_url', 'special_purpose_address'),
    },
    {
      name: 'url localhost',
      params: ok({ delivery: { url: 'https://localhost/h', secret: SECRET_24 } }),
      parsed: refused('invalid_callback_url', 'local_name'),
    },
    {
      name: 'url with a fragment',
      params: ok({ delivery: { url: `${URL_}#x`, secret: SECRET_24 } }),
      parsed: refused('invalid_callback_url', 'fragment'),
    },
    {
      name: 'a dev origin asked of a deployed Worker',
      params: ok({ delivery: { url: 'http://127.0.0.1:8788/hook', secret: SECRET_24 } }),
      policy: { ...DEV, serverOrigin: 'https://mcp.example.com' },
      parsed: refused('invalid_callback_url', 'dev_origin_off_loopback'),
    },
    // delivery.secret: "Servers MUST reject a `delivery.secret` that is not `whsec_` followed by base64 that decodes to 24 to 64 bytes."
    { name: 'no secret ("REQUIRED")', params: ok({ delivery: { url: URL_ } }), parsed: refused('invalid_secret', 'not_a_string') },
    {
      name: 'secret without whsec_',
      params: ok({ delivery: { url: URL_, secret: SECRET_24.slice(6) } }),
      parsed: refused('invalid_secret', 'missing_prefix'),
    },
    {
      name: 'secret not base64',
      params: ok({ delivery: { url: URL_, secret: 'whsec_not base64!' } }),
      parsed: refused('invalid_secret', 'not_base64'),
    },
    {
      name: 'secret of 23 bytes',
      params: ok({ delivery: { url: URL_, secret: secretOf(23) } }),
      parsed: refused('invalid_secret', 'too_short'),
    },
    {
      name: 'secret of 65 bytes',
      params: ok({ delivery: { url: URL_, secret: secretOf(65) } }),
      parsed: refused('invalid_secret', 'too_long'),
    },
    // ttlMs: "optional, nullable integer".
    { name: 'ttlMs fractional', params: ok({ ttlMs: 1.5 }), parsed: refused('invalid_ttl', 'not_an_integer') },
    { name: 'ttlMs a string', params: ok({ ttlMs: '3600000' }), parsed: refused('invalid_ttl', 'not_an_integer') },
    { name: 'ttlMs Infinity', params: ok({ ttlMs: Number.POSITIVE_INFINITY }), parsed: refused('invalid_ttl', 'not_an_integer') },
  ])('$name', ({ params, policy, parsed }) => {
    expect(parseSubscribeParams(params, policy ?? PUBLIC)).toEqual(parsed);
  });

  it('a refused secret is never repeated in the refusal', () => {
    const secret = secretOf(23);
    const refusal = parseSubscribeParams(ok({ delivery: { url: URL_, secret } }), PUBLIC);
    expect(refusal).toEqual(refused('invalid_secret', 'too_short'));
    expect(JSON.stringify(refusal)).not.toContain(secret.slice(6));
  });
});

describe('parseUnsubscribeParams', () => {
  it.each<{ name: string; params: unknown; parsed: unknown }>([
    {
      name: 'the SEP example',
      params: { name: 'incident.created', arguments: { severity: 'P1' }, delivery: { url: URL_ } },
      parsed: { name: 'incident.created', arguments: { severity: 'P1' }, delivery: { url: URL_ } },
    },
    // Only the key: cursor, ttlMs and secret are not unsubscribe's members, ignored like any unknown one.
    {
      name: 'members of subscribe ignored',
      params: { name: 'a', delivery: { mode: 'webhook', url: URL_, secret: 'x' }, cursor: 5, ttlMs: 'x' },
      parsed: { name: 'a', arguments: {}, delivery: { url: URL_ } },
    },
    // A URL the callback policy refuses can still be looked up (a removed dev origin's subscription).
    {
      name: 'an http url',
      params: { name: 'a', delivery: { url: 'http://127.0.0.1:8788/h' } },
      parsed: expect.objectContaining({ delivery: { url: 'http://127.0.0.1:8788/h' } }),
    },
    { name: 'no name', params: { delivery: { url: URL_ } }, parsed: refused('invalid_params') },
    { name: 'arguments a string', params: { name: 'a', arguments: 'x', delivery: { url: URL_ } }, parsed: refused('invalid_arguments') },
    { name: 'no delivery', params: { name: 'a' }, parsed: refused('invalid_delivery', 'not_an_object') },
    { name: 'mode poll', params: { name: 'a', delivery: { mode: 'poll', url: URL_ } }, parsed: refused('invalid_delivery', 'not_webhook') },
    { name: 'no url', params: { name: 'a', delivery: {} }, parsed: refused('invalid_callback_url', 'malformed_url') },
    {
      name: 'url not absolute',
      params: { name: 'a', delivery: { url: 'hooks' } },
      parsed: refused('invalid_callback_url', 'malformed_url'),
    },
    {
      name: 'url too long',
      params: { name: 'a', delivery: { url: `${URL_}/${'x'.repeat(2048)}` } },
      parsed: refused('invalid_callback_url', 'too_long'),
    },
  ])('$name', ({ params, parsed }) => {
    expect(parseUnsubscribeParams(params)).toEqual(parsed);
  });
});

describe('builders, against the text', () => {
  it('the subscribe response', () => {
    expect(
      subscribeResult({ id: 'sub_a3f1c8e2b0d49f7e', refreshBefore: '2026-02-19T16:30:00Z', cursor: 'cursor_start_001', truncated: false }),
    ).toEqual({
      resultType: 'complete',
      id: 'sub_a3f1c8e2b0d49f7e',
      refreshBefore: '2026-02-19T16:30:00Z',
      cursor: 'cursor_start_001',
      truncated: false,
    });
    expect(subscribeResult({ id: 'sub_x', refreshBefore: null, cursor: null, truncated: false })).toEqual({
      resultType: 'complete',
      id: 'sub_x',
      refreshBefore: null,
      cursor: null,
      truncated: false,
    });
    expect(unsubscribeResult()).toEqual({ resultType: 'complete' });
  });

  const at = (iso: string) => Date.parse(iso);
  it.each<{ name: string; input: Parameters<typeof deliveryStatus>[0]; status: unknown }>([
    {
      name: 'healthy subscription refresh',
      input: { active: true, lastDeliveryAt: at('2026-02-19T16:28:00Z'), lastError: null, failingSince: null },
      status: { active: true, lastDeliveryAt: '2026-02-19T16:28:00.000Z', lastError: null },
    },
    {
      name: 'subscription with delivery failures',
      input: { active: false, lastDeliveryAt: at('2026-02-19T15:45:00Z'), lastError: 'http_4xx', failingSince: at('2026-02-19T15:50:00Z') },
      status: { active: false, lastDeliveryAt: '2026-02-19T15:45:00.000Z', lastError: 'http_4xx', failedSince: '2026-02-19T15:50:00.000Z' },
    },
    {
      name: 'subscription being actively rate-limited',
      input: {
        active: true,
        lastDeliveryAt: at('2026-02-19T16:28:00Z'),
        lastError: null,
        failingSince: null,
        throttle: { retryAfterMs: 60000 },
      },
      status: { active: true, lastDeliveryAt: '2026-02-19T16:28:00.000Z', lastError: null, throttled: true, retryAfterMs: 60000 },
    },
    {
      name: 'never delivered yet (ours: null)',
      input: { active: true, lastDeliveryAt: null, lastError: 'timeout', failingSince: 0 },
      status: { active: true, lastDeliveryAt: null, lastError: 'timeout', failedSince: '1970-01-01T00:00:00.000Z' },
    },
  ])('deliveryStatus: $name', ({ input, status }) => {
    expect(deliveryStatus(input)).toEqual(status);
  });

  it('a refresh response carries deliveryStatus', () => {
    const status = deliveryStatus({ active: true, lastDeliveryAt: null, lastError: null, failingSince: null });
    expect(subscribeResult({ id: 'sub_x', refreshBefore: null, cursor: 'c', truncated: true, deliveryStatus: status })).toEqual({
      resultType: 'complete',
      id: 'sub_x',
      refreshBefore: null,
      cursor: 'c',
      truncated: true,
      deliveryStatus: status,
    });
  });

  const OCCURRENCE = {
    eventId: 'evt_789',
    name: 'incident.created',
    timestamp: '2026-02-19T16:00:00Z',
    data: { incidentId: 'INC-1234', title: 'Database connection pool exhausted', severity: 'P1' },
  };
  it('the delivery body: the text example, byte for byte, the watermark replacing an own cursor', () => {
    expect(JSON.stringify(deliveryBody({ ...OCCURRENCE, cursor: 'own_position' }, 'cursor_xyz'))).toBe(
      '{"eventId":"evt_789","name":"incident.created","timestamp":"2026-02-19T16:00:00Z","data":{"incidentId":"INC-1234","title":"Database connection pool exhausted","severity":"P1"},"cursor":"cursor_xyz"}',
    );
    expect(deliveryBody({ ...OCCURRENCE, _meta: { k: 1 } }, null)).toEqual({ ...OCCURRENCE, cursor: null, _meta: { k: 1 } });
  });

  it.each<[string, unknown, string]>([
    ['gap', gapEnvelope('<fresh>'), '{"type":"gap","cursor":"<fresh>"}'],
    ['verification', verificationEnvelope('<nonce>'), '{"type":"verification","challenge":"<nonce>"}'],
    ['the challenge answer', challengeAnswer('<nonce>'), '{"challenge":"<nonce>"}'],
    [
      'terminated (the webhook example of Subscription Termination)',
      terminatedEnvelope({ code: -32024, message: 'Forbidden', data: { reason: 'Access revoked' } }),
      '{"type":"terminated","error":{"code":-32024,"message":"Forbidden","data":{"reason":"Access revoked"}}}',
    ],
  ])('%s', (_name, built, text) => {
    expect(JSON.stringify(built)).toBe(text);
  });

  it('the request headers of one POST', () => {
    const signed = { 'webhook-id': 'evt_789', 'webhook-timestamp': '1739980800', 'webhook-signature': 'v1,abc' };
    const headers = new Headers(webhookRequestHeaders('sub_a3f1c8e2b0d49f7e', signed));
    expect(Object.fromEntries(headers)).toEqual({
      'content-type': 'application/json',
      'webhook-id': 'evt_789',
      'webhook-timestamp': '1739980800',
      'webhook-signature': 'v1,abc',
      'x-mcp-subscription-id': 'sub_a3f1c8e2b0d49f7e',
    });
    for (const name of WEBHOOK_REQUIRED_HEADERS) expect(headers.has(name)).toBe(true);
  });
});

describe('readWebhookBody', () => {
  const event = { eventId: 'e', name: 'n', timestamp: 't', data: {} };
  const malformed = { kind: 'malformed', why: expect.any(String) };
  it.each<{ name: string; json: unknown; reading: unknown }>([
    { name: 'an occurrence', json: { ...event, cursor: 'c' }, reading: { kind: 'event', body: { ...event, cursor: 'c' } } },
    // "An absent `cursor` field MUST be treated identically to an explicit `cursor: null`."
    { name: 'an occurrence without cursor', json: event, reading: { kind: 'event', body: { ...event, cursor: null } } },
    {
      name: 'an occurrence with _meta',
      json: { ...event, _meta: { a: 1 } },
      reading: { kind: 'event', body: { ...event, cursor: null, _meta: { a: 1 } } },
    },
    { name: 'gap', json: { type: 'gap', cursor: 'f' }, reading: { kind: 'control', envelope: { type: 'gap', cursor: 'f' } } },
    { name: 'gap without cursor', json: { type: 'gap' }, reading: { kind: 'control', envelope: { type: 'gap', cursor: null } } },
    {
      name: 'verification',
      json: { type: 'verification', challenge: 'n' },
      reading: { kind: 'control', envelope: { type: 'verification', challenge: 'n' } },
    },
    {
      name: 'terminated',
      json: { type: 'terminated', error: { code: -32023, message: 'NotFound', data: { kind: 'event' } } },
      reading: { kind: 'control', envelope: { type: 'terminated', error: { code: -32023, message: 'NotFound', data: { kind: 'event' } } } },
    },
    {
      name: 'terminated without data',
      json: { type: 'terminated', error: { code: -32024, message: 'Forbidden' } },
      reading: { kind: 'control', envelope: { type: 'terminated', error: { code: -32024, message: 'Forbidden' } } },
    },
    // "A body with a top-level `type` field is a control envelope", even one this revision does not define.
    { name: "a later revision's envelope", json: { type: 'paused', ...event }, reading: { kind: 'unknown_control', type: 'paused' } },
    { name: 'not an object', json: [event], reading: malformed },
    { name: 'null', json: null, reading: malformed },
    { name: 'type not a string', json: { type: 1 }, reading: malformed },
    // Any top-level `type` makes a control envelope: an occurrence carrying one is not read as an event.
    { name: 'an occurrence with type null', json: { ...event, type: null }, reading: malformed },
    { name: 'no eventId', json: { ...event, eventId: undefined }, reading: malformed },
    { name: 'data an array', json: { ...event, data: [] }, reading: malformed },
    { name: 'timestamp a number', json: { ...event, timestamp: 1 }, reading: malformed },
    { name: 'cursor a number', json: { ...event, cursor: 1 }, reading: malformed },
    { name: '_meta a string', json: { ...event, _meta: 'm' }, reading: malformed },
    { name: 'gap cursor an object', json: { type: 'gap', cursor: {} }, reading: malformed },
    { name: 'verification without challenge', json: { type: 'verification' }, reading: malformed },
    { name: 'verification with an empty challenge', json: { type: 'verification', challenge: '' }, reading: malformed },
    { name: 'terminated without error', json: { type: 'terminated' }, reading: malformed },
    { name: 'terminated code fractional', json: { type: 'terminated', error: { code: 1.5, message: 'm' } }, reading: malformed },
    { name: 'terminated without message', json: { type: 'terminated', error: { code: 1 } }, reading: malformed },
    { name: 'terminated data a string', json: { type: 'terminated', error: { code: 1, message: 'm', data: 'd' } }, reading: malformed },
  ])('$name', ({ json, reading }) => {
    expect(readWebhookBody(json)).toEqual(reading);
  });

  it('reads back what the builders write', () => {
    for (const built of [
      deliveryBody({ eventId: 'e', name: 'n', timestamp: 't', data: { x: [1] }, _meta: {} }, 'w'),
      gapEnvelope(null),
      verificationEnvelope('c'),
      terminatedEnvelope({ code: -32026, message: 'Unsupported', data: { feature: 'inputSchema', reason: 'schema_changed' } }),
    ]) {
      const reading = readWebhookBody(JSON.parse(JSON.stringify(built)));
      expect('body' in reading ? reading.body : 'envelope' in reading ? reading.envelope : reading).toEqual(built);
    }
  });
});

describe('readChallengeAnswer', () => {
  it.each<[string, unknown, string | undefined]>([
    ['the answer', { challenge: 'n' }, 'n'],
    ['other members ignored', { challenge: 'n', ok: true }, 'n'],
    ['the nonce alone, as a JSON string', 'n', undefined],
    ['challenge a number', { challenge: 1 }, undefined],
    ['nothing', null, undefined],
    ['an array', [{ challenge: 'n' }], undefined],
  ])('%s', (_name, json, nonce) => {
    expect(readChallengeAnswer(json)).toBe(nonce);
  });
});
