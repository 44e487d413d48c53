// E3's helpers (webhooks.mjs, workloads/e-webhooks.mjs): the signature check against the
// published Standard Webhooks vector and the SEP's example (the vectors of
// test/core/webhook-signature.test.ts), the tokens the helper's AUTH=jwt accepts (checked here
// with the key's public half, as the Worker checks them), the receiver's answers, a real receiver
// on 127.0.0.1 answering a challenge, failing an event's first attempts and recording its arrival,
// and the arithmetic of E3c's figures. No timing is asserted.
import assert from 'node:assert/strict';
import { createHmac, createVerify } from 'node:crypto';
import { test } from 'node:test';
import { perOperation, usdPerMillion } from './billing.mjs';
import { answerFor, makeIssuer, newSecret, signatureValid, startReceiver } from './webhooks.mjs';
import { billedFigures, webhookDifference, webhookShare } from './workloads/e-webhooks.mjs';

const VECTORS = [
  {
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    timestamp: '1614265330',
    body: '{"test": 2432232314}',
    signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  },
  {
    secret: 'whsec_ASZLcJW63wQpTnOYveIHLFF2m8DlCi9UeZ7D6A0yV3w=',
    id: 'evt_789',
    timestamp: '1739980800',
    body: '{"eventId":"evt_789","name":"incident.created","timestamp":"2026-02-19T16:00:00Z","data":{"incidentId":"INC-1234","severity":"P1"},"cursor":"cursor_xyz"}',
    signature: 'v1,hjFnpWSV2k6hLOLQClNGQcSp3HDCqiI5ubV/BimNwqg=',
  },
];

test('signatureValid: the published vectors verify, among other schemes and rotations; a changed byte does not', () => {
  for (const { secret, id, timestamp, body, signature } of VECTORS) {
    assert.equal(signatureValid({ secret, id, timestamp, body, signatureHeader: signature }), true);
    assert.equal(signatureValid({ secret, id, timestamp, body: Buffer.from(body), signatureHeader: `v1a,xyz v1,AAAA ${signature}` }), true);
    assert.equal(signatureValid({ secret, id, timestamp, body: `${body} `, signatureHeader: signature }), false);
    assert.equal(signatureValid({ secret, id: `${id}x`, timestamp, body, signatureHeader: signature }), false);
    assert.equal(signatureValid({ secret, id, timestamp: `${Number(timestamp) + 1}`, body, signatureHeader: signature }), false);
    assert.equal(signatureValid({ secret, id, timestamp, body, signatureHeader: undefined }), false);
  }
});

test('newSecret: whsec_ and 32 bytes of base64, a different one each time', () => {
  const a = newSecret();
  assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(Buffer.from(a.slice(6), 'base64').length, 32);
  assert.notEqual(a, newSecret());
});

test("makeIssuer: an ES256 JWT of the issuer and audience for the subject, verified by the key set's public half", () => {
  const issuer = makeIssuer({ issuer: 'https://i.test', audience: 'aud-1' });
  const jwks = JSON.parse(issuer.jwks);
  assert.equal(jwks.keys.length, 1);
  assert.deepEqual(
    { kty: jwks.keys[0].kty, crv: jwks.keys[0].crv, alg: jwks.keys[0].alg, d: jwks.keys[0].d },
    { kty: 'EC', crv: 'P-256', alg: 'ES256', d: undefined },
  );
  const token = issuer.token('alice');
  const [header, claims, signature] = token.split('.');
  assert.deepEqual(JSON.parse(Buffer.from(header, 'base64url')), { alg: 'ES256', typ: 'JWT', kid: jwks.keys[0].kid });
  const payload = JSON.parse(Buffer.from(claims, 'base64url'));
  assert.equal(payload.iss, 'https://i.test');
  assert.equal(payload.aud, 'aud-1');
  assert.equal(payload.sub, 'alice');
  assert.ok(payload.exp > payload.iat);
  const verify = (body) => {
    const verifier = createVerify('SHA256');
    verifier.update(body);
    return verifier.verify({ key: issuer.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
  };
  assert.equal(verify(`${header}.${claims}`), true);
  assert.equal(verify(`${header}.${claims}x`), false);
});

test('answerFor: the challenge echoed; an event 503 for its first `failures` attempts, then 200', () => {
  assert.deepEqual(answerFor({ type: 'verification', challenge: 'abc' }, { attempt: 1, failures: 3 }), {
    status: 200,
    body: '{"challenge":"abc"}',
  });
  const event = { eventId: 'e1', name: 'demo.note', data: { text: 't', n: 1 } };
  assert.equal(answerFor(event, { attempt: 1, failures: 0 }).status, 200);
  assert.equal(answerFor(event, { attempt: 1, failures: 1 }).status, 503);
  assert.equal(answerFor(event, { attempt: 2, failures: 1 }).status, 200);
  assert.equal(answerFor(event, { attempt: 2, failures: 2 }).status, 503);
  // A control envelope (gap, terminated) is never failed.
  assert.equal(answerFor({ type: 'gap', cursor: null }, { attempt: 1, failures: 1 }).status, 200);
});

const signed = (secret, id, body) => {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const mac = createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${mac}`, 'content-type': 'application/json' };
};

test('startReceiver: answers the challenge, fails an event once, records its arrival after the 200, counts a bad signature', async () => {
  const receiver = await startReceiver();
  try {
    const secret = newSecret();
    receiver.secret(secret);
    const post = (id, message, headers = signed(secret, id, JSON.stringify(message))) =>
      fetch(receiver.url('/hook/x'), { method: 'POST', headers, body: JSON.stringify(message) });

    const challenge = await post('msg_verification_1', { type: 'verification', challenge: 'nonce-1' });
    assert.equal(challenge.status, 200);
    assert.deepEqual(await challenge.json(), { challenge: 'nonce-1' });

    receiver.failures(1);
    const event = { eventId: 'evt_1', name: 'demo.note', timestamp: 'x', data: { text: 'hello', n: 5 }, cursor: null };
    const arrival = receiver.arrival('hello', 5_000);
    assert.equal((await post('evt_1', event)).status, 503);
    assert.equal(receiver.received('hello'), false);
    receiver.failures(0); // an event keeps the failures it was first seen with
    assert.equal((await post('evt_1', event)).status, 200);
    assert.equal((await arrival).attempts, 2);
    assert.equal((await post('evt_1', event)).status, 200);

    assert.equal((await post('evt_2', { ...event, data: { text: 'forged', n: 6 } }, signed(newSecret(), 'evt_2', 'other'))).status, 200);
    assert.deepEqual(receiver.counts, { posts: 5, events: 4, verifications: 1, badSignatures: 1, failed: 1, duplicates: 1 });
    await assert.rejects(receiver.arrival('never sent', 10), /not received within 10 ms/);
  } finally {
    await receiver.close();
  }
});

/** A perOperation result from per-class totals (GET /bench/billing's shape, `billed` only). */
const op = (classes, count) => perOperation({}, classes, count);
const billed = (rowsWritten, rowsRead, requests) => ({ billed: { rowsWritten, rowsRead, requests } });

test("billedFigures: per delivery and its subscription share; the retry path and a further retry, the subscription's counts alone", () => {
  const delivery = op({ BenchEventLog: billed(10, 30, 10), BenchWebhooks: billed(10, 10, 10) }, 10);
  const load = op({ BenchEventLog: billed(16, 48, 16), BenchWebhooks: billed(4, 4, 4) }, 16);
  // The log pruned in this window (a batch of deletes): not the retry's.
  const retried = op({ BenchEventLog: billed(105, 115, 5), BenchWebhooks: billed(25, 90, 10) }, 5);
  const retriedTwice = op({ BenchEventLog: billed(5, 15, 5), BenchWebhooks: billed(35, 150, 15) }, 5);
  const subscribe = op({ BenchEventLog: billed(1, 3, 1), BenchWebhooks: billed(4, 6, 2) }, 1);
  const unsubscribe = op({ BenchEventLog: billed(1, 1, 1), BenchWebhooks: billed(0, 0, 1) }, 1);
  assert.equal(webhookShare(load), 0.25);
  assert.deepEqual(webhookDifference(retried, delivery), {
    rowsWritten: 4,
    rowsRead: 17,
    requests: 1,
    usd_per_million: usdPerMillion({ rowsWritten: 4, rowsRead: 17, requests: 1 }),
  });
  assert.deepEqual(billedFigures({ delivery, load, retried, retriedTwice, subscribe, unsubscribe }), {
    rows_written_per_delivery: 2,
    webhook_rows_written_per_delivery: 1,
    rows_read_per_delivery: 4,
    requests_per_delivery: 2,
    usd_per_m_deliveries: usdPerMillion({ rowsWritten: 2, rowsRead: 4, requests: 2 }),
    load_rows_written_per_delivery: 1.25,
    load_webhook_rows_written_per_delivery: 0.25,
    load_requests_per_delivery: 1.25,
    load_usd_per_m_deliveries: usdPerMillion({ rowsWritten: 1.25, rowsRead: 3.25, requests: 1.25 }),
    retry_rows_written: 4,
    retry_rows_read: 17,
    retry_requests: 1,
    retry_usd_per_m: usdPerMillion({ rowsWritten: 4, rowsRead: 17, requests: 1 }),
    next_retry_rows_written: 2,
    next_retry_requests: 1,
    subscribe_rows_written: 5,
    unsubscribe_rows_written: 1,
  });
});
