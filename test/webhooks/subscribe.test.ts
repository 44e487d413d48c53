/**
 * `events/subscribe` and `events/unsubscribe` through the fixture's Worker (AUTH=jwt; the
 * receiver on 127.0.0.1 is the one WEBHOOK_DEV_ORIGINS allows): every error of SEP-3415's table
 * these two methods answer; the SSRF rows, refused before anything is POSTed; an endpoint that
 * does not verify gets nothing written for it and nothing delivered to it; a verified one gets
 * its verification first, then the events; a refresh of the key is the same subscription, not a
 * second handshake; the bound refuses before any POST. Each test has its own principal and its
 * own endpoint, and subscribes `demo.note` with a `contains` token of its own, so files running at
 * once never hear each other's notes.
 */
import { MAX_ARGUMENTS_BYTES } from '../../src/core/webhook-subscription-key.ts';
import { describe, expect, it } from 'vitest';
import { SUBSCRIPTION_ID_HEADER } from '../../src/core/events-webhook-wire.ts';
import { eventsRequest, postNote, token } from '../support/events-http.ts';
import { answerOf } from '../support/modern-http.ts';
import { admin, newPrincipal } from '../support/principals.ts';
import { tokenFor } from '../support/tokens.ts';
import { endpoint, newSecret, type Received, signedBy, until } from './receiver.ts';

type Auth = Record<string, string>;

const call = async (method: string, params: Record<string, unknown>, auth: Auth) => answerOf(await eventsRequest(method, params, auth));

const subscribeParams = (url: string, secret: string, args: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  name: 'demo.note',
  arguments: args,
  delivery: { mode: 'webhook', url, secret },
  ...extra,
});

/** What the registry holds of `principal`'s webhook subscriptions, as the operator lists them. */
async function webhooksOf(principal: string): Promise<unknown[]> {
  const response = await admin('GET', principal);
  expect(response.status).toBe(200);
  return ((await response.json()) as { webhooks: unknown[] }).webhooks;
}

const bodies = (log: Received[]) => log.map((record) => JSON.parse(record.body));
const verifications = (log: Received[]) => bodies(log).filter((body) => body.type === 'verification');
const events = (log: Received[]) => bodies(log).filter((body) => body.type === undefined);

describe('events/subscribe: a verified endpoint', () => {
  it('verification first, then the events, each signed under the secret, X-MCP-Subscription-Id the id answered', async () => {
    const { id: principal, auth } = await newPrincipal('alice');
    const hook = endpoint('verified');
    const secret = newSecret();
    const mark = token();
    const answer = await call('events/subscribe', subscribeParams(hook.url, secret, { contains: mark }, { ttlMs: 60_000 }), auth);
    expect(answer.error).toBeUndefined();
    // Every member of the SEP's result and no other (the SDK's `_meta.serverInfo` aside).
    const { _meta, ...result } = answer.result;
    expect(result).toEqual({
      resultType: 'complete',
      id: expect.stringMatching(/^sub_[0-9a-f]{32}$/),
      refreshBefore: expect.any(String),
      cursor: expect.any(String),
      truncated: false,
    });
    // "deliveryStatus … when it refreshes": not on a creation.
    expect(answer.result.deliveryStatus).toBeUndefined();
    const { id } = answer.result;
    expect(verifications(await hook.log())).toHaveLength(1);

    await postNote(`first ${mark}`, undefined, auth);
    await postNote(`second ${mark}`, undefined, auth);
    await postNote('not for this subscription', undefined, auth);
    await until(async () => events(await hook.log()).length >= 2);
    const log = await hook.log();
    // "MUST NOT begin delivering to a callback URL until the endpoint's intent … is confirmed": the verification is the first POST.
    expect(JSON.parse(log[0]!.body).type).toBe('verification');
    expect(events(log).map((body) => body.data.text)).toEqual([`first ${mark}`, `second ${mark}`]);
    for (const record of log) {
      expect(record.headers[SUBSCRIPTION_ID_HEADER.toLowerCase()]).toBe(id);
      expect(await signedBy(record, secret)).toBe(true);
    }
    expect(await webhooksOf(principal)).toHaveLength(1);
  });

  it('a refresh of the same key: the same id, no second handshake, deliveryStatus; a new secret signs what follows', async () => {
    const { auth } = await newPrincipal('alice');
    const hook = endpoint('refresh');
    const first = newSecret();
    const mark = token();
    const created = await call('events/subscribe', subscribeParams(hook.url, first, { contains: mark }), auth);
    expect(created.error).toBeUndefined();

    const second = newSecret();
    const refreshed = await call('events/subscribe', subscribeParams(hook.url, second, { contains: mark }), auth);
    expect(refreshed.error).toBeUndefined();
    expect(refreshed.result.id).toBe(created.result.id);
    expect(refreshed.result.deliveryStatus).toMatchObject({ active: true });
    expect(verifications(await hook.log())).toHaveLength(1);

    await postNote(`after rotation ${mark}`, undefined, auth);
    await until(async () => events(await hook.log()).length >= 1);
    const delivered = (await hook.log()).find((record) => JSON.parse(record.body).type === undefined)!;
    expect(await signedBy(delivered, second)).toBe(true);
  });

  it('events/unsubscribe ends it (nothing delivered after, the registry row gone); a second is NotFound {kind: "subscription"}', async () => {
    const { id: principal, auth } = await newPrincipal('alice');
    const hook = endpoint('unsubscribe');
    const mark = token();
    const created = await call('events/subscribe', subscribeParams(hook.url, newSecret(), { contains: mark }), auth);
    expect(created.error).toBeUndefined();
    const key = { name: 'demo.note', arguments: { contains: mark }, delivery: { url: hook.url } };
    expect(await call('events/unsubscribe', key, auth)).toMatchObject({ result: { resultType: 'complete' } });
    expect(await webhooksOf(principal)).toEqual([]);
    const again = await call('events/unsubscribe', key, auth);
    expect(again.error).toMatchObject({ code: -32023, data: { kind: 'subscription' } });
    // Another principal's key is not this one: nothing of alice's is reached by bob.
    const bob = await newPrincipal('bob');
    expect((await call('events/unsubscribe', key, bob.auth)).error).toMatchObject({ code: -32023 });

    await postNote(`after the end ${mark}`, undefined, auth);
    // A marker subscription that does hear the note: once it has it, the ended one would have too.
    const witness = endpoint('witness');
    await call('events/subscribe', subscribeParams(witness.url, newSecret(), { contains: mark }), auth);
    await postNote(`witnessed ${mark}`, undefined, auth);
    await until(async () => events(await witness.log()).length >= 1);
    expect(events(await hook.log())).toEqual([]);
  });
});

describe('events/subscribe: an endpoint that does not verify', () => {
  it.each([
    { name: 'a wrong echo', behaviour: { kind: 'wrong' as const }, reason: 'challenge_failed' },
    { name: 'a 500', behaviour: { kind: 'status' as const, status: 500 }, reason: 'challenge_failed' },
    { name: 'an answer slower than WEBHOOK_ATTEMPT_TIMEOUT_MS', behaviour: { kind: 'slow' as const, delayMs: 2_500 }, reason: 'timeout' },
    { name: 'a socket closed unanswered', behaviour: { kind: 'drop' as const }, reason: 'connection_refused' },
    {
      name: 'a redirect to a private address',
      behaviour: { kind: 'redirect' as const, location: 'http://10.0.0.1/hook' },
      reason: 'challenge_failed',
    },
  ])('$name: CallbackEndpointError {reason: $reason}; nothing written, nothing delivered after emits', async ({ behaviour, reason }) => {
    const { id: principal, auth } = await newPrincipal('victim-owner');
    const victim = endpoint('victim');
    await victim.script([], behaviour);
    const mark = token();
    const answer = await call('events/subscribe', subscribeParams(victim.url, newSecret(), { contains: mark }), auth);
    expect(answer.error).toMatchObject({ code: -32027, data: { reason } });
    expect(answer.result).toBeUndefined();
    // "nothing written anywhere": no holding, no subscription (a refresh of the key finds none: unsubscribe is NotFound).
    expect(await webhooksOf(principal)).toEqual([]);
    const key = { name: 'demo.note', arguments: { contains: mark }, delivery: { url: victim.url } };
    expect((await call('events/unsubscribe', key, auth)).error).toMatchObject({ code: -32023, data: { kind: 'subscription' } });

    await postNote(`to the victim? ${mark}`, undefined, auth);
    const witness = endpoint('witness');
    await call('events/subscribe', subscribeParams(witness.url, newSecret(), { contains: mark }), auth);
    await postNote(`witnessed ${mark}`, undefined, auth);
    await until(async () => events(await witness.log()).length >= 1);
    // The one request the victim ever got is the handshake.
    expect((await victim.log()).map((record) => JSON.parse(record.body).type)).toEqual(['verification']);
  });
});

describe('events/subscribe refusals (SEP-3415, Error Handling)', () => {
  it.each([
    ['a private address (10.0.0.1)', 'https://10.0.0.1/hook'],
    ['a private address (192.168.1.1)', 'https://192.168.1.1/hook'],
    ['loopback not in WEBHOOK_DEV_ORIGINS (another port)', 'http://127.0.0.1:9/hook'],
    ['loopback over https', 'https://127.0.0.1/hook'],
    ['the metadata address', 'http://169.254.169.254/latest/meta-data'],
    ['a unique-local IPv6 address', 'https://[fc00::1]/hook'],
    ['IPv6 loopback', 'https://[::1]/hook'],
    ['localhost', 'https://localhost/hook'],
    ['a non-https URL', 'http://example.com/hook'],
    ['credentials in the URL', 'https://user:pass@example.com/hook'],
  ])('%s: -32602 invalid_callback_url, nothing POSTed', async (_name, url) => {
    const { auth } = await newPrincipal('alice');
    const answer = await call('events/subscribe', subscribeParams(url, newSecret()), auth);
    expect(answer.error).toMatchObject({ code: -32602, data: { reason: 'invalid_callback_url' } });
  });

  it('the receiver itself, spelt with credentials or as localhost: refused, and it receives nothing', async () => {
    const { auth } = await newPrincipal('alice');
    const hook = endpoint('spelt');
    const port = new URL(hook.url).port;
    for (const url of [hook.url.replace('http://', 'http://user:pass@'), `http://localhost:${port}/hook/${hook.name}`]) {
      const answer = await call('events/subscribe', subscribeParams(url, newSecret()), auth);
      expect(answer.error).toMatchObject({ code: -32602, data: { reason: 'invalid_callback_url' } });
    }
    expect(await hook.log()).toEqual([]);
  });

  it('-32602 for a secret not whsec_, a fraction of a ttlMs, arguments the inputSchema refuses; nothing POSTed', async () => {
    const { auth } = await newPrincipal('alice');
    const hook = endpoint('params');
    const rows = [
      [subscribeParams(hook.url, 'not-a-secret'), 'invalid_secret'],
      [subscribeParams(hook.url, newSecret(), {}, { ttlMs: 1.5 }), 'invalid_ttl'],
      [subscribeParams(hook.url, newSecret(), { contains: 5 }), 'invalid_arguments'],
      // Stored with the subscription: at most MAX_ARGUMENTS_BYTES as canonical JSON.
      [subscribeParams(hook.url, newSecret(), { contains: 'x'.repeat(MAX_ARGUMENTS_BYTES) }), 'invalid_arguments'],
      [subscribeParams(hook.url, newSecret(), {}, { cursor: 'forged' }), 'malformed_cursor'],
    ] as const;
    for (const [params, reason] of rows) {
      expect((await call('events/subscribe', params, auth)).error).toMatchObject({ code: -32602, data: { reason } });
    }
    expect(await hook.log()).toEqual([]);
  });

  it('NotFound {kind: "event"}; Unsupported for a type not delivered by webhook (poll-only, upstream-backed); Forbidden not_permitted', async () => {
    const { auth } = await newPrincipal('alice');
    const hook = endpoint('types');
    const as = (name: string) => ({ ...subscribeParams(hook.url, newSecret()), name });
    expect((await call('events/subscribe', as('demo.nope'), auth)).error).toMatchObject({ code: -32023, data: { kind: 'event' } });
    for (const name of ['demo.polled', 'demo.upstream']) {
      expect(
        (await call('events/subscribe', { ...as(name), arguments: name === 'demo.upstream' ? { feed: 'f' } : {} }, auth)).error,
      ).toMatchObject({ code: -32026, data: { feature: 'deliveryMode', value: 'webhook' } });
    }
    const mallory = await newPrincipal('mallory');
    expect((await call('events/subscribe', as('demo.watched'), mallory.auth)).error).toMatchObject({
      code: -32024,
      data: { reason: 'not_permitted' },
    });
    expect(await hook.log()).toEqual([]);
  });

  it('ResourceExhausted {limit: "events/subscribe", max: 3} at MAX_WEBHOOKS_PER_PRINCIPAL, before any POST', async () => {
    const { auth } = await newPrincipal('busy');
    for (let i = 0; i < 3; i++) {
      const hook = endpoint(`bound-${i}`);
      expect((await call('events/subscribe', subscribeParams(hook.url, newSecret(), { contains: token() }), auth)).error).toBeUndefined();
    }
    const fourth = endpoint('bound-4');
    const answer = await call('events/subscribe', subscribeParams(fourth.url, newSecret(), { contains: token() }), auth);
    expect(answer.error).toMatchObject({ code: -32025, data: { limit: 'events/subscribe', max: 3 } });
    expect(await fourth.log()).toEqual([]);
  });

  it('a token issued before its principal was revoked: the credential 401 (token_revoked), nothing POSTed', async () => {
    const { subject, id: principal } = await newPrincipal('recalled');
    const old = { Authorization: `Bearer ${await tokenFor(subject, { issuedAt: Math.floor(Date.now() / 1000) - 60 })}` };
    expect((await admin('POST', principal, '/revoke')).status).toBe(200);
    const hook = endpoint('recalled');
    const response = await eventsRequest('events/subscribe', subscribeParams(hook.url, newSecret()), old);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { data: { reason: 'token_revoked' } } });
    expect(await hook.log()).toEqual([]);
  });
});

describe('events/unsubscribe refusals', () => {
  it('-32602 for params without delivery.url; NotFound {kind: "event"} for an unknown type', async () => {
    const { auth } = await newPrincipal('alice');
    expect((await call('events/unsubscribe', { name: 'demo.note', arguments: {} }, auth)).error).toMatchObject({ code: -32602 });
    const unknown = await call(
      'events/unsubscribe',
      { name: 'demo.nope', arguments: {}, delivery: { url: 'https://example.com/h' } },
      auth,
    );
    expect(unknown.error).toMatchObject({ code: -32023, data: { kind: 'event' } });
  });
});
