/**
 * Issue 42, finding 6: each registration left a `registration:<id>` key in KV without an expiry,
 * while the provider's client record expires after 90 days (`clientRegistrationTTL`). The key
 * expires with the record: written with its expiry, renewed when the provider renews the
 * record (a token endpoint success past half its lifetime). Expiries are read as KV keeps them
 * (`list` shows each key's `expiration`, unix seconds).
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { approve, authorizationQuery, CLIENT, consentPage, freshAddress, redeem, refresh, register, send } from './oauth-flow.ts';

const NINETY_DAYS = 90 * 24 * 60 * 60;

/** The expiry KV keeps for `key` (unix seconds), `undefined` for none, `null` when there is no such key. */
async function expirationOf(key: string): Promise<number | undefined | null> {
  const { keys } = await env.OAUTH_KV.list({ prefix: key });
  const found = keys.find((entry) => entry.name === key);
  return found === undefined ? null : found.expiration;
}

async function registered(address: string) {
  const response = await register(CLIENT, address);
  expect(response.status).toBe(201);
  return (await response.json()) as {
    client_id: string;
    client_id_issued_at: number;
    registration_access_token: string;
    registration_client_uri: string;
  };
}

describe('a registration key', () => {
  it('expires when the client record does, 90 days after registration', async () => {
    const client = await registered(freshAddress());
    const record = await expirationOf(`client:${client.client_id}`);
    const key = await expirationOf(`registration:${client.client_id}`);
    expect(record).toBeTypeOf('number');
    expect(key).toBeTypeOf('number');
    expect(Math.abs(key! - record!)).toBeLessThanOrEqual(1);
    expect(Math.abs(key! - (client.client_id_issued_at + NINETY_DAYS))).toBeLessThanOrEqual(1);
  });

  it('is renewed with the record when a token request renews it, and still reads the registration', async () => {
    const address = freshAddress();
    const client = await registered(address);
    const { query, verifier } = await authorizationQuery(client.client_id, 'mcp');
    const tokens = await redeem(client.client_id, await approve(await consentPage(query, address), 'ada', address), verifier, address);
    // Both as they are 89 days on: the record and the key expire in 1,000 seconds, past half
    // their lifetime, so the provider renews the record at the next token success.
    const soon = Math.floor(Date.now() / 1000) + 1_000;
    const recordKey = `client:${client.client_id}`;
    const record = (await env.OAUTH_KV.get<Record<string, unknown>>(recordKey, 'json'))!;
    await env.OAUTH_KV.put(recordKey, JSON.stringify({ ...record, registrationExpiresAt: soon }), { expiration: soon });
    const key = `registration:${client.client_id}`;
    const hash = (await env.OAUTH_KV.get(key))!;
    await env.OAUTH_KV.put(key, hash, { expiration: soon, metadata: { expiresAt: soon } });

    await refresh({ refresh_token: tokens.refresh_token!, client_id: client.client_id });
    const renewed = await expirationOf(recordKey);
    expect(renewed).toBeGreaterThan(soon + NINETY_DAYS / 2);
    const followed = await expirationOf(key);
    expect(followed).toBeTypeOf('number');
    expect(Math.abs(followed! - renewed!)).toBeLessThanOrEqual(1);
    const read = await send(new URL(client.registration_client_uri).pathname, {
      headers: { Authorization: `Bearer ${client.registration_access_token}` },
      address: freshAddress(),
    });
    expect(read.status).toBe(200);
  });

  it('is left as it is by a token request that renews nothing', async () => {
    const address = freshAddress();
    const client = await registered(address);
    const before = await expirationOf(`registration:${client.client_id}`);
    const { query, verifier } = await authorizationQuery(client.client_id, 'mcp');
    await redeem(client.client_id, await approve(await consentPage(query, address), 'ada', address), verifier, address);
    expect(await expirationOf(`registration:${client.client_id}`)).toBe(before);
  });
});
