/**
 * A refresh re-verifies the principal's permission (SEP-3415, *Webhook-Based Delivery*: "the
 * server MUST verify that the principal has permission to subscribe to the requested event type
 * with the given arguments"; *Security*: "The server SHOULD periodically re-verify permissions",
 * access revoked → "terminates the subscription with the signal for its mode"). Through the
 * fixture's Worker (AUTH=jwt): `demo.watched`'s `authorize` refuses the subjects a test puts in
 * `unpermittedSubjects` (test/fixture-server/note-events.ts, read in this isolate by the Worker
 * too); a subscription made while permitted, then refreshed once the permission is gone, is
 * refused Forbidden `not_permitted` and ended with a `terminated` carrying that error
 * (webhook-methods.ts `endUnpermitted`). Each test has its own principal and endpoint.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_ID_HEADER } from '../../src/core/events-webhook-wire.ts';
import { eventsError } from '../../src/core/events-wire.ts';
import { webhookSubscription } from '../../src/events/webhook-subscriptions.ts';
import { unpermittedSubjects, watchedEvents } from '../fixture-server/note-events.ts';
import { eventsRequest, token } from '../support/events-http.ts';
import { answerOf } from '../support/modern-http.ts';
import { admin, newPrincipal } from '../support/principals.ts';
import { endpoint, newSecret, type Received, signedBy, until } from './receiver.ts';

type Auth = Record<string, string>;

const call = async (method: string, params: Record<string, unknown>, auth: Auth) => answerOf(await eventsRequest(method, params, auth));
const watched = (url: string, secret: string) => ({ name: 'demo.watched', arguments: {}, delivery: { mode: 'webhook', url, secret } });
const bodies = (log: Received[]) => log.map((record) => JSON.parse(record.body));
/** What the endpoint received after its handshake. */
const afterHandshake = (log: Received[]) => bodies(log).filter((body) => body.type !== 'verification');
const emit = (value: string) => watchedEvents.emit(env.MCP_EVENTS, { data: { value } });
const NOT_PERMITTED = eventsError('Forbidden', 'not permitted to subscribe to demo.watched with these arguments', {
  reason: 'not_permitted',
});

async function webhooksOf(principal: string): Promise<unknown[]> {
  const response = await admin('GET', principal);
  expect(response.status).toBe(200);
  return ((await response.json()) as { webhooks: unknown[] }).webhooks;
}

describe('a refresh re-runs the type’s authorize', () => {
  it('permission lost since the creation: the refresh is Forbidden not_permitted, and the live subscription ends with `terminated` (that error, signed, msg_terminated id); nothing delivered after', async () => {
    const { subject, id: principal, auth } = await newPrincipal('alice');
    const hook = endpoint('reverify');
    const secret = newSecret();
    const created = await call('events/subscribe', watched(hook.url, secret), auth);
    expect(created.error).toBeUndefined();
    const { id } = created.result;
    // Live and delivering while permitted.
    const before = token();
    await emit(before);
    await until(async () => afterHandshake(await hook.log()).some((body) => body.data?.value === before));

    unpermittedSubjects.add(subject);
    try {
      const refreshed = await call('events/subscribe', watched(hook.url, secret), auth);
      // The set the test changed is the one the Worker's authorize read (one isolate).
      expect(refreshed.error).toEqual(NOT_PERMITTED);
      expect(refreshed.result).toBeUndefined();

      const stub = webhookSubscription(env.MCP_WEBHOOKS, id);
      // Ended at once: no event POST starts from the refusal on, and the registry no longer holds it.
      expect(await stub.probe()).toBeNull();
      expect(await webhooksOf(principal)).toEqual([]);
      await until(async () => (await stub.describe()) === null);

      const log = await hook.log();
      const terminated = log.filter((record) => JSON.parse(record.body).type === 'terminated');
      expect(terminated).toHaveLength(1);
      expect(JSON.parse(terminated[0]!.body)).toEqual({ type: 'terminated', error: NOT_PERMITTED });
      expect(terminated[0]!.headers[WEBHOOK_ID_HEADER]).toMatch(/^msg_terminated_[0-9a-f]{32}$/);
      expect(await signedBy(terminated[0]!, secret)).toBe(true);
      // The envelope is the last thing it was sent.
      expect(afterHandshake(log).at(-1)?.type).toBe('terminated');

      // An occurrence after the end reaches a subscription that is permitted, and not this one.
      const witness = endpoint('witness');
      const bob = await newPrincipal('bob');
      expect((await call('events/subscribe', watched(witness.url, newSecret()), bob.auth)).error).toBeUndefined();
      const after = token();
      await emit(after);
      await until(async () => afterHandshake(await witness.log()).some((body) => body.data?.value === after));
      expect(afterHandshake(await hook.log()).map((body) => body.data?.value ?? body.type)).toEqual([before, 'terminated']);
    } finally {
      unpermittedSubjects.delete(subject);
    }
  });

  it('a principal never permitted: Forbidden not_permitted, nothing written, nothing POSTed (no subscription of the key to end)', async () => {
    const { subject, id: principal, auth } = await newPrincipal('carol');
    unpermittedSubjects.add(subject);
    try {
      const hook = endpoint('never');
      expect((await call('events/subscribe', watched(hook.url, newSecret()), auth)).error).toEqual(NOT_PERMITTED);
      expect(await hook.log()).toEqual([]);
      expect(await webhooksOf(principal)).toEqual([]);
    } finally {
      unpermittedSubjects.delete(subject);
    }
  });

  it('permission kept: a refresh is served and the subscription goes on delivering', async () => {
    const { auth } = await newPrincipal('dave');
    const hook = endpoint('kept');
    const secret = newSecret();
    expect((await call('events/subscribe', watched(hook.url, secret), auth)).error).toBeUndefined();
    const refreshed = await call('events/subscribe', watched(hook.url, secret), auth);
    expect(refreshed.error).toBeUndefined();
    expect(refreshed.result.deliveryStatus).toMatchObject({ active: true });
    const value = token();
    await emit(value);
    await until(async () => afterHandshake(await hook.log()).some((body) => body.data?.value === value));
    expect(afterHandshake(await hook.log()).some((body) => body.type === 'terminated')).toBe(false);
  });
});
