/**
 * Issue 42, finding 1 (registration fields): the bounds on what a client registers were checked
 * in characters, but the provider stores the record as JSON in KV, where a control character
 * is six bytes (`\u0001`). A registration's fields are bounded as stored, and the whole record
 * is at most RECORD_BYTES (16 KiB) in KV: measured here on the record the provider wrote.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { CLIENT, freshAddress, register } from './oauth-flow.ts';

/** The documented bound on a client's record in KV (client-metadata-limits.ts, docs/auth.md). */
const RECORD_BYTES = 16 * 1024;

/** `count` control characters: one UTF-16 unit each, six bytes each as stored. */
const controls = (count: number) => '\u0001'.repeat(count);

/** The record the provider stored for `clientId`, in bytes as KV keeps it. */
async function storedBytes(clientId: string): Promise<number> {
  const record = await env.OAUTH_KV.get(`client:${clientId}`);
  expect(record).not.toBeNull();
  return new TextEncoder().encode(record!).byteLength;
}

async function clientsNamed(name: string): Promise<number> {
  const { keys } = await env.OAUTH_KV.list({ prefix: 'client:' });
  const records = await Promise.all(keys.map((key) => env.OAUTH_KV.get<{ clientName?: string }>(key.name, 'json')));
  return records.filter((record) => record?.clientName === name).length;
}

describe('a registration padded with control characters', () => {
  it.each([
    { name: 'a client_name of 256 control characters (1,536 bytes stored)', metadata: { client_name: controls(256) } },
    { name: 'a localized client_name of 200 control characters', metadata: { 'client_name#fr': controls(200) } },
    { name: 'a contact of 256 control characters', metadata: { contacts: [controls(256)] } },
    {
      name: 'a client_uri of 2,048 characters, most of them control characters',
      metadata: { client_uri: `https://c.example/${controls(2_030)}` },
    },
  ])('is refused when $name: 400 invalid_client_metadata, nothing stored', async ({ metadata }) => {
    const marker = `padded-${crypto.randomUUID()}`;
    const response = await register({ ...CLIENT, client_name: marker, ...metadata }, freshAddress());
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_client_metadata');
    expect(await clientsNamed(marker)).toBe(0);
  });

  it('is stored within 16 KiB however its fields are filled, up to the bound', async () => {
    // Each step fills one more field to its bound as stored: the URIs (2,046 bytes each), then
    // names of 170 control characters (1,020 bytes each), so the sizes pass the record's bound
    // in steps of about a kilobyte.
    const uri = `https://c.example/${controls(338)}`;
    const fields: [string, unknown][] = [
      ...['client_uri', 'logo_uri', 'policy_uri', 'tos_uri', 'jwks_uri'].map((field): [string, unknown] => [field, uri]),
      ['client_name', controls(170)],
      ...Array.from({ length: 10 }, (_, i): [string, unknown] => [`client_name#x-${i}`, controls(170)]),
    ];
    const stored: number[] = [];
    let refused = 0;
    for (let count = 1; count <= fields.length; count++) {
      const response = await register({ ...CLIENT, ...Object.fromEntries(fields.slice(0, count)) }, freshAddress());
      if (response.status === 400) {
        expect(((await response.json()) as { error: string }).error).toBe('invalid_client_metadata');
        refused++;
        continue;
      }
      expect(response.status).toBe(201);
      stored.push(await storedBytes(((await response.json()) as { client_id: string }).client_id));
    }
    expect(Math.max(...stored)).toBeLessThanOrEqual(RECORD_BYTES);
    // The bound was approached (within one step) and passed: this measured the largest records.
    expect(Math.max(...stored)).toBeGreaterThan(RECORD_BYTES - 1_200);
    expect(refused).toBeGreaterThan(0);
  });
});
