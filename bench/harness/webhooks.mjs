// What E3 (MCP Events webhooks, workloads/e-webhooks.mjs) needs besides the client: a principal
// the `ours-webhooks` helper accepts (AUTH=jwt: an ES256 key made for the run, its public half
// the helper's AUTH_JWKS, tokens signed here), a `whsec_` secret, the Standard Webhooks signature
// check (SEP-3415: "HMAC-SHA256(secret, webhook-id + "." + webhook-timestamp + "." + body)",
// base64, `v1,`), and the receiver: a Node http server on 127.0.0.1 that answers the
// verification challenge, stamps each POST's arrival, verifies every one, and answers an event
// 200, or 503 at its first n attempts while told to (the retry path). Plain node:crypto, no
// dependency, as the rest of the harness: the library's own verifier (dist/client) would need a
// build before every bench run, and an independent check of the server's signatures is worth
// more here than a second copy of its code. The pure parts are tested in webhooks.test.mjs.
import { createHmac, createSign, generateKeyPairSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { now } from './client.mjs';

/** The issuer and audience the helper's variables name (bench/peers/index.mjs `ours-webhooks`). */
export const JWT_ISSUER = 'https://bench-issuer.invalid';
export const JWT_AUDIENCE = 'bench-ours-webhooks';

const base64url = (bytes) => Buffer.from(bytes).toString('base64url');

/**
 * An ES256 key for one run: `jwks`, the public half as the helper's AUTH_JWKS (JSON text), and
 * `token(subject)`, an access token for `subject` valid for an hour.
 */
export function makeIssuer({ issuer = JWT_ISSUER, audience = JWT_AUDIENCE } = {}) {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = `bench-${randomBytes(4).toString('hex')}`;
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' };
  const token = (subject, { expiresIn = 3_600 } = {}) => {
    const iat = Math.floor(Date.now() / 1000);
    const header = base64url(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid }));
    const claims = base64url(
      JSON.stringify({ iss: issuer, aud: audience, sub: subject, iat, exp: iat + expiresIn, client_id: 'mcp-bench' }),
    );
    const signer = createSign('SHA256');
    signer.update(`${header}.${claims}`);
    // JWS ES256 is the raw r‖s, not DER.
    const signature = signer.sign({ key: privateKey, dsaEncoding: 'ieee-p1363' });
    return `${header}.${claims}.${base64url(signature)}`;
  };
  return { jwks: JSON.stringify({ keys: [jwk] }), publicKey, token };
}

/** A fresh `whsec_` secret (32 random bytes, base64). */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Whether `signatureHeader` (space-separated, `v1,<base64>` among them) holds the MAC of
 * `${id}.${timestamp}.${body}` under `secret` (`whsec_<base64 key>`). Compared in constant time;
 * other schemes' entries are skipped. No clock check: E3's receiver stamps, it does not refuse.
 */
export function signatureValid({ secret, id, timestamp, body, signatureHeader }) {
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatureHeader !== 'string') return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key)
    .update(`${id}.${timestamp}.`)
    .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
    .digest();
  return signatureHeader
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'))
    .some((candidate) => candidate.length === expected.length && timingSafeEqual(candidate, expected));
}

/**
 * What the receiver answers a POST: `{status, body?}`, from the body (parsed JSON, or undefined),
 * which attempt of its `webhook-id` this is (1 for the first), and how many attempts of an event
 * fail. A verification envelope is answered with its challenge echoed ("The endpoint proves
 * intent by echoing the nonce in a `2xx` body"); an event (no `type`), and any other envelope,
 * 200 — or 503 for an event's first `failures` attempts.
 */
export function answerFor(message, { attempt, failures }) {
  if (message?.type === 'verification') return { status: 200, body: JSON.stringify({ challenge: message.challenge }) };
  if (message !== undefined && message.type === undefined && attempt <= failures) return { status: 503 };
  return { status: 200 };
}

/**
 * The receiver, on 127.0.0.1 (an ephemeral port): `origin` (WEBHOOK_DEV_ORIGINS), `url(path)`,
 * `arrival(text)` (a promise of the first arrival of the event whose `data.text` is `text`:
 * `{t, attempts}`, `t` the harness's clock when its body was in), `failures(n)` (each event's first
 * n attempts answered 503, for events first seen from then on), `secret(s)` (the
 * one every POST is checked against), `counts` (posts, events, verifications, bad signatures,
 * 503s answered) and `close()`. Arrivals are stamped before the signature is checked, so the
 * check's ~10 µs is not in E3's latency; every POST is checked all the same.
 */
export async function startReceiver() {
  let secret;
  let failures = 0;
  /** The failures an event gets, fixed at its first attempt. */
  const failuresById = new Map();
  const attemptsById = new Map();
  const arrived = new Map();
  const waiting = new Map();
  const counts = { posts: 0, events: 0, verifications: 0, badSignatures: 0, failed: 0, duplicates: 0 };
  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const t = now();
      const body = Buffer.concat(chunks);
      counts.posts++;
      const id = request.headers['webhook-id'];
      if (
        secret === undefined ||
        !signatureValid({
          secret,
          id,
          timestamp: request.headers['webhook-timestamp'],
          body,
          signatureHeader: request.headers['webhook-signature'],
        })
      )
        counts.badSignatures++;
      let message;
      try {
        message = JSON.parse(body.toString('utf8'));
      } catch {
        message = undefined;
      }
      const attempts = (attemptsById.get(id) ?? 0) + 1;
      attemptsById.set(id, attempts);
      if (attempts === 1) failuresById.set(id, failures);
      const answer = answerFor(message, { attempt: attempts, failures: failuresById.get(id) });
      if (message?.type === 'verification') counts.verifications++;
      else if (message?.type === undefined) {
        counts.events++;
        if (answer.status !== 200) counts.failed++;
        else {
          const text = message?.data?.text;
          if (arrived.has(text)) counts.duplicates++;
          else {
            const arrival = { t, attempts };
            arrived.set(text, arrival);
            waiting.get(text)?.(arrival);
            waiting.delete(text);
          }
        }
      }
      response.writeHead(answer.status, answer.body === undefined ? {} : { 'content-type': 'application/json' });
      response.end(answer.body);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    url: (path) => `${origin}${path}`,
    counts,
    secret: (value) => void (secret = value),
    failures: (n) => void (failures = n),
    /** The event with `data.text` = `text` answered 200: `{t, attempts}`; rejects after `timeoutMs`. */
    arrival(text, timeoutMs) {
      const known = arrived.get(text);
      if (known !== undefined) return Promise.resolve(known);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(text);
          reject(new Error(`webhook of ${JSON.stringify(text.slice(0, 60))} not received within ${timeoutMs} ms`));
        }, timeoutMs);
        waiting.set(text, (arrival) => {
          clearTimeout(timer);
          resolve(arrival);
        });
      });
    },
    /** Whether the event with `data.text` = `text` was received (answered 200). */
    received: (text) => arrived.has(text),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
