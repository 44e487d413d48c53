/**
 * The webhook receiver (src/client/webhook-receiver.ts): deliveries signed by the core's
 * webhookHeaders, as the server signs them, fed as Requests. Each table row is one request and
 * what it must answer and hand over: verified before anything else (401, nothing handed), the
 * 5-minute window both ways, rotation, the challenge echoed, a repeat `webhook-id` answered and
 * not handed again, a failed handler not recorded, `gap` and `terminated` surfaced, oversize 413,
 * malformed 400.
 */
import { describe, expect, it } from 'vitest';
import {
  type DeliveryStore,
  memoryDeliveryStore,
  receiveWebhook,
  type WebhookDelivery,
  type WebhookReceipt,
  WebhookSecretError,
} from '../../src/client/index.ts';
import { MAX_WEBHOOK_BODY_BYTES, SUBSCRIPTION_ID_HEADER } from '../../src/core/events-webhook-wire.ts';
import { parseWebhookSecret, webhookHeaders } from '../../src/core/webhook-signature.ts';

const CURRENT = 'whsec_ASZLcJW63wQpTnOYveIHLFF2m8DlCi9UeZ7D6A0yV3w=';
const PREVIOUS = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER = 'whsec_AyhNcpe84QYrUHWav+QJLlN4ncLnDDFW';
const NOW_MS = 1_739_980_800_000;
const NOW_S = NOW_MS / 1000;
const SUBSCRIPTION = 'sub_a3f1c8e2b0d49f7e';

const key = (secret: string): Uint8Array => {
  const parsed = parseWebhookSecret(secret);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.key;
};

const EVENT = {
  eventId: 'evt_789',
  name: 'incident.created',
  timestamp: '2026-02-19T16:00:00Z',
  data: { incidentId: 'INC-1234' },
  cursor: 'cursor_xyz',
};

interface Post {
  readonly id?: string;
  readonly body?: string | Uint8Array;
  readonly signWith?: readonly string[];
  readonly timestamp?: number;
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly tamper?: (body: string) => string;
}

async function post(spec: Post = {}): Promise<Request> {
  const body = spec.body ?? JSON.stringify(EVENT);
  const signed = await webhookHeaders({
    secrets: (spec.signWith ?? [CURRENT]).map(key),
    id: spec.id ?? EVENT.eventId,
    timestamp: spec.timestamp ?? NOW_S,
    body,
  });
  const sent = typeof body === 'string' && spec.tamper ? spec.tamper(body) : body;
  return new Request('https://receiver.example/hooks', {
    method: spec.method ?? 'POST',
    headers: { 'content-type': 'application/json', ...signed, [SUBSCRIPTION_ID_HEADER]: SUBSCRIPTION, ...spec.headers },
    ...(spec.method === 'GET' ? {} : { body: sent }),
  });
}

function receiver(secrets: readonly string[] = [CURRENT], seen: DeliveryStore = memoryDeliveryStore(100)) {
  const handed: WebhookDelivery[] = [];
  let fail = false;
  const receive = (request: Request): Promise<WebhookReceipt> =>
    receiveWebhook(request, {
      secrets,
      seen,
      now: NOW_MS,
      onDelivery: (delivery) => {
        if (fail) throw new Error('the application could not store it');
        handed.push(delivery);
      },
    });
  return { receive, handed, seen, failNext: (value: boolean) => (fail = value) };
}

describe('refused before anything is processed', () => {
  const rows: readonly { name: string; post: Post; secrets?: readonly string[]; status: number; reason: string }[] = [
    { name: 'signed under another secret', post: { signWith: [OTHER] }, status: 401, reason: 'bad_signature' },
    {
      name: 'body changed after signing',
      post: { tamper: (b) => b.replace('INC-1234', 'INC-9999') },
      status: 401,
      reason: 'bad_signature',
    },
    { name: 'signature header stripped', post: { headers: { 'webhook-signature': '' } }, status: 401, reason: 'missing_headers' },
    { name: 'webhook-id swapped after signing', post: { headers: { 'webhook-id': 'evt_other' } }, status: 401, reason: 'bad_signature' },
    { name: 'timestamp 301 s old', post: { timestamp: NOW_S - 301 }, status: 401, reason: 'timestamp_too_old' },
    { name: 'timestamp 301 s ahead', post: { timestamp: NOW_S + 301 }, status: 401, reason: 'timestamp_too_new' },
    { name: 'timestamp not decimal', post: { headers: { 'webhook-timestamp': '1e9' } }, status: 401, reason: 'malformed_timestamp' },
    { name: 'previous secret after the rotation ended', post: { signWith: [PREVIOUS] }, status: 401, reason: 'bad_signature' },
    {
      name: 'a forged challenge (unsigned verification)',
      post: { body: '{"type":"verification","challenge":"n"}', signWith: [OTHER] },
      status: 401,
      reason: 'bad_signature',
    },
    { name: 'a GET', post: { method: 'GET' }, status: 405, reason: 'not_post' },
    { name: 'a body over 256 KiB', post: { body: `{"pad":"${'x'.repeat(MAX_WEBHOOK_BODY_BYTES)}"}` }, status: 413, reason: 'too_large' },
    { name: 'not JSON', post: { body: '{"eventId":' }, status: 400, reason: 'malformed_body' },
    { name: 'not UTF-8', post: { body: new Uint8Array([0x7b, 0xff, 0x7d]) }, status: 400, reason: 'malformed_body' },
    {
      name: 'an occurrence without data',
      post: { body: '{"eventId":"e","name":"n","timestamp":"t"}' },
      status: 400,
      reason: 'malformed_body',
    },
    { name: 'a gap with a numeric cursor', post: { body: '{"type":"gap","cursor":5}' }, status: 400, reason: 'malformed_body' },
  ];
  for (const row of rows) {
    it(`${row.name}: ${row.status} ${row.reason}, nothing handed or recorded`, async () => {
      const r = receiver(row.secrets);
      const receipt = await r.receive(await post(row.post));
      expect(receipt.response.status).toBe(row.status);
      expect(receipt).toMatchObject({ outcome: 'refused', reason: row.reason });
      expect(await receipt.response.json()).toEqual({ error: row.reason });
      expect(r.handed).toEqual([]);
      expect(await r.seen.has(EVENT.eventId)).toBe(false);
    });
  }

  it('a body over the cap with a streamed (undeclared) length is 413 too', async () => {
    const signed = await post();
    const huge = new Uint8Array(MAX_WEBHOOK_BODY_BYTES + 1);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(huge.subarray(0, 1000));
        controller.enqueue(huge.subarray(1000));
        controller.close();
      },
    });
    const request = new Request(signed.url, { method: 'POST', headers: signed.headers, body: stream, duplex: 'half' } as RequestInit);
    const r = receiver();
    expect((await r.receive(request)).response.status).toBe(413);
    expect(r.handed).toEqual([]);
  });
});

describe('accepted', () => {
  const rows: readonly { name: string; post: Post; secrets?: readonly string[] }[] = [
    { name: 'signed under the current secret', post: {} },
    { name: 'signed under the previous secret during rotation', post: { signWith: [PREVIOUS] }, secrets: [CURRENT, PREVIOUS] },
    { name: 'dual-signed by the server', post: { signWith: [OTHER, CURRENT] } },
    { name: 'timestamp exactly 300 s old', post: { timestamp: NOW_S - 300 } },
    { name: 'timestamp exactly 300 s ahead', post: { timestamp: NOW_S + 300 } },
  ];
  for (const row of rows) {
    it(`${row.name}: handed once with its subscription id, a repeat answered 200 and not handed`, async () => {
      const r = receiver(row.secrets);
      const first = await r.receive(await post(row.post));
      expect(first.response.status).toBe(200);
      expect(first.outcome).toBe('delivered');
      expect(r.handed).toEqual([
        { kind: 'event', webhookId: 'evt_789', timestamp: row.post.timestamp ?? NOW_S, subscriptionId: SUBSCRIPTION, body: EVENT },
      ]);
      // A retry, re-signed at another timestamp (inside the window).
      const repeat = await r.receive(await post({ ...row.post, timestamp: NOW_S - 10 }));
      expect(repeat.response.status).toBe(200);
      expect(repeat).toMatchObject({ outcome: 'duplicate', webhookId: 'evt_789' });
      expect(r.handed).toHaveLength(1);
    });
  }

  it('a verification is answered with its challenge, not handed, not recorded', async () => {
    const r = receiver();
    const body = '{"type":"verification","challenge":"Zm9vYmFy"}';
    const receipt = await r.receive(await post({ id: 'msg_verification_00', body }));
    expect(receipt.outcome).toBe('challenge_answered');
    expect(receipt.response.status).toBe(200);
    expect(receipt.response.headers.get('content-type')).toBe('application/json');
    expect(await receipt.response.json()).toEqual({ challenge: 'Zm9vYmFy' });
    expect(r.handed).toEqual([]);
    expect(await r.seen.has('msg_verification_00')).toBe(false);
  });

  const controls: readonly { name: string; body: string; handed: Partial<WebhookDelivery> }[] = [
    { name: 'gap', body: '{"type":"gap","cursor":"c_9"}', handed: { kind: 'gap', cursor: 'c_9' } },
    { name: 'gap without a cursor', body: '{"type":"gap"}', handed: { kind: 'gap', cursor: null } },
    {
      name: 'terminated',
      body: '{"type":"terminated","error":{"code":-32012,"message":"Forbidden"}}',
      handed: { kind: 'terminated', error: { code: -32012, message: 'Forbidden' } },
    },
  ];
  for (const row of controls) {
    it(`${row.name} is handed over once by its webhook-id`, async () => {
      const r = receiver();
      const request = () => post({ id: `msg_${row.name.split(' ')[0]}_01`, body: row.body });
      expect((await r.receive(await request())).response.status).toBe(200);
      expect((await r.receive(await request())).outcome).toBe('duplicate');
      expect(r.handed).toEqual([
        { ...row.handed, webhookId: `msg_${row.name.split(' ')[0]}_01`, timestamp: NOW_S, subscriptionId: SUBSCRIPTION },
      ]);
    });
  }

  it('a control type this revision does not define is acknowledged and not handed', async () => {
    const r = receiver();
    const receipt = await r.receive(await post({ id: 'msg_paused_01', body: '{"type":"paused"}' }));
    expect(receipt).toMatchObject({ outcome: 'ignored', type: 'paused' });
    expect(receipt.response.status).toBe(200);
    expect(r.handed).toEqual([]);
  });
});

describe('marked seen only once processed', () => {
  it('a handler that throws is answered 503 and not recorded; the retry is handed over', async () => {
    const r = receiver();
    r.failNext(true);
    const failed = await r.receive(await post());
    expect(failed.response.status).toBe(503);
    expect(failed.outcome).toBe('failed');
    expect(await r.seen.has(EVENT.eventId)).toBe(false);
    r.failNext(false);
    expect((await r.receive(await post())).outcome).toBe('delivered');
    expect(r.handed).toHaveLength(1);
    expect(await r.seen.has(EVENT.eventId)).toBe(true);
  });

  it('a store whose add fails still answers 200 (processed), reporting it unrecorded', async () => {
    const broken: DeliveryStore = { has: async () => false, add: async () => Promise.reject(new Error('db down')) };
    const r = receiver([CURRENT], broken);
    const receipt = await r.receive(await post());
    expect(receipt.response.status).toBe(200);
    expect(receipt).toMatchObject({ outcome: 'delivered', unrecorded: new Error('db down') });
  });

  it('the seen store is consulted only after the signature verified', async () => {
    const asked: string[] = [];
    const spy: DeliveryStore = {
      has: async (id) => {
        asked.push(id);
        return false;
      },
      add: async () => {},
    };
    await receiver([CURRENT], spy).receive(await post({ signWith: [OTHER] }));
    expect(asked).toEqual([]);
  });
});

describe('configuration', () => {
  const rows: readonly { name: string; secrets: readonly string[]; error: unknown }[] = [
    { name: 'no secret', secrets: [], error: RangeError },
    { name: 'not whsec_', secrets: ['sk_abc'], error: new WebhookSecretError(0, 'missing_prefix') },
    { name: 'a short previous secret', secrets: [CURRENT, 'whsec_AAAA'], error: new WebhookSecretError(1, 'too_short') },
  ];
  for (const row of rows) {
    it(`${row.name} throws`, async () => {
      await expect(receiver(row.secrets).receive(await post())).rejects.toThrow(row.error as Error);
    });
  }

  it('memoryDeliveryStore forgets the oldest past its limit', async () => {
    const store = memoryDeliveryStore(2);
    for (const id of ['a', 'b', 'c']) await store.add(id);
    expect([await store.has('a'), await store.has('b'), await store.has('c')]).toEqual([false, true, true]);
    expect(() => memoryDeliveryStore(0)).toThrow(RangeError);
  });
});
