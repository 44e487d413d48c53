/**
 * The verification handshake (src/events/webhook-handshake.ts) against the real receiver on
 * 127.0.0.1: one signed `verification` POST, verified only by a 2xx echo of its challenge; every
 * other answer `challenge_failed`, no answer its connection category; a redirect is never
 * followed; and the per-host bound sends nothing past it. The handshake through `events/subscribe`
 * is subscribe.test.ts's.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { SUBSCRIPTION_ID_HEADER } from '../../src/core/events-webhook-wire.ts';
import { parseDevOrigins } from '../../src/core/webhook-url.ts';
import { mayVerify, VERIFICATIONS_PER_HOST, verifyEndpoint } from '../../src/events/webhook-handshake.ts';
import { type Behaviour, endpoint, newSecret, signedBy } from './receiver.ts';

const receiver = (env as unknown as { WEBHOOK_RECEIVER: string }).WEBHOOK_RECEIVER;
const policy = { devOrigins: parseDevOrigins(receiver), serverOrigin: 'http://localhost' };
const TIMEOUT_MS = 1_000;

async function handshakeWith(script: Behaviour[]) {
  const hook = endpoint('handshake');
  await hook.script(script, { kind: 'status', status: 599 });
  const secret = newSecret();
  const result = await verifyEndpoint({
    url: hook.url,
    policy,
    subscriptionId: 'sub_0123456789abcdef0123456789abcdef',
    secret,
    timeoutMs: TIMEOUT_MS,
  });
  return { result, log: await hook.log(), secret };
}

describe('verifyEndpoint', () => {
  it('an echo of the challenge in a 2xx body verifies; one POST, a verification envelope signed under the new secret, headed like any delivery', async () => {
    const { result, log, secret } = await handshakeWith([{ kind: 'ok' }]);
    expect(result).toEqual({ verified: true });
    expect(log).toHaveLength(1);
    const [post] = log;
    expect(post!.method).toBe('POST');
    const body = JSON.parse(post!.body);
    expect(body).toEqual({ type: 'verification', challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(post!.headers['webhook-id']).toMatch(/^msg_verification_[0-9a-f]{32}$/);
    expect(post!.headers[SUBSCRIPTION_ID_HEADER.toLowerCase()]).toBe('sub_0123456789abcdef0123456789abcdef');
    expect(post!.headers['content-type']).toBe('application/json');
    expect(await signedBy(post!, secret)).toBe(true);
    expect(await signedBy(post!, newSecret())).toBe(false);
  });

  it('each handshake carries a challenge of its own ("single-use")', async () => {
    const first = await handshakeWith([{ kind: 'ok' }]);
    const second = await handshakeWith([{ kind: 'ok' }]);
    expect(JSON.parse(first.log[0]!.body).challenge).not.toBe(JSON.parse(second.log[0]!.body).challenge);
  });

  it.each<{ name: string; behaviour: Behaviour; reason: string }>([
    { name: 'a wrong echo', behaviour: { kind: 'wrong' }, reason: 'challenge_failed' },
    { name: 'a 500', behaviour: { kind: 'status', status: 500 }, reason: 'challenge_failed' },
    { name: 'a 404', behaviour: { kind: 'status', status: 404 }, reason: 'challenge_failed' },
    { name: 'a 204 (no body)', behaviour: { kind: 'status', status: 204 }, reason: 'challenge_failed' },
    { name: 'a body over the cap', behaviour: { kind: 'big', bytes: 70_000 }, reason: 'challenge_failed' },
    { name: 'a body that is not JSON', behaviour: { kind: 'big', bytes: 100 }, reason: 'challenge_failed' },
    { name: 'an answer slower than the timeout', behaviour: { kind: 'slow', delayMs: 2_500 }, reason: 'timeout' },
    { name: 'the socket closed unanswered', behaviour: { kind: 'drop' }, reason: 'connection_refused' },
  ])('$name: not verified, $reason', async ({ behaviour, reason }) => {
    const { result, log } = await handshakeWith([behaviour]);
    expect(result).toMatchObject({ verified: false, reason });
    expect(log).toHaveLength(1);
  });

  it('a closed port: connection_refused', async () => {
    // A loopback port nothing listens on, allowed as a dev origin for this test only.
    const closed = 'http://127.0.0.1:9';
    const result = await verifyEndpoint({
      url: `${closed}/hook`,
      policy: { devOrigins: parseDevOrigins(closed), serverOrigin: 'http://localhost' },
      subscriptionId: 'sub_0123456789abcdef0123456789abcdef',
      secret: newSecret(),
      timeoutMs: TIMEOUT_MS,
    });
    expect(result).toMatchObject({ verified: false, reason: 'connection_refused' });
  });

  it('a redirect, even to the receiver itself, is the answer: challenge_failed, no request at its Location', async () => {
    const target = endpoint('redirect-target');
    for (const location of ['http://10.0.0.1/hook', 'http://169.254.169.254/latest/meta-data', target.url]) {
      const { result, log } = await handshakeWith([{ kind: 'redirect', location }]);
      expect(result).toMatchObject({ verified: false, reason: 'challenge_failed' });
      expect(log).toHaveLength(1);
    }
    expect(await target.log()).toEqual([]);
  });

  it('a URL the policy refuses is not POSTed at all', async () => {
    const result = await verifyEndpoint({
      url: 'https://10.0.0.1/hook',
      policy,
      subscriptionId: 'sub_x',
      secret: newSecret(),
      timeoutMs: TIMEOUT_MS,
    });
    expect(result).toMatchObject({ verified: false, refused: expect.any(String) });
  });
});

describe('mayVerify: "SHOULD be rate-limited per destination host"', () => {
  it(`without a binding, ${VERIFICATIONS_PER_HOST} a minute per host in an isolate; other hosts apart; the next window open again`, async () => {
    const host = `https://rate-${crypto.randomUUID()}.example/hook`;
    const other = `https://rate-${crypto.randomUUID()}.example/hook`;
    const now = 1_000_000;
    for (let i = 0; i < VERIFICATIONS_PER_HOST; i++) expect(await mayVerify(host, undefined, now)).toBe(true);
    expect(await mayVerify(host, undefined, now + 1)).toBe(false);
    expect(await mayVerify(other, undefined, now + 1)).toBe(true);
    expect(await mayVerify(host, undefined, now + 60_000)).toBe(true);
  });

  it('through the binding where there is one, keyed whverify:<host>', async () => {
    const keys: string[] = [];
    const limiter = {
      limit: async ({ key }: { key: string }) => {
        keys.push(key);
        return { success: keys.length < 2 };
      },
    };
    expect(await mayVerify('https://a.example:8443/x', limiter)).toBe(true);
    expect(await mayVerify('https://a.example/y', limiter)).toBe(false);
    expect(keys).toEqual(['whverify:a.example', 'whverify:a.example']);
  });
});
