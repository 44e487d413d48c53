/**
 * The operator's routes (`/admin/…`, edge/admin-routes.ts) count each request against the rate
 * limit per client address before the token is compared: past the allowance a guess is not
 * compared at all (`429` with `Retry-After`), and neither is the right token — the limit cannot
 * tell them apart, which is the point. A limiter that counts stands in for the binding.
 */
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { createMcpWorker } from '../../src/lib.ts';

const TOKEN = 'an-admin-token-of-this-test-0123456789abcdef';
const ALLOWANCE = 3;

/** A Worker with the admin routes, its limiter allowing ALLOWANCE requests per key; the keys it was asked. */
function adminWorker(withLimiter = true) {
  const keys: string[] = [];
  const counts = new Map<string, number>();
  const limiter = {
    limit: async ({ key }: { key: string }) => {
      keys.push(key);
      counts.set(key, (counts.get(key) ?? 0) + 1);
      return { success: counts.get(key)! <= ALLOWANCE };
    },
  };
  const worker = createMcpWorker<Env>({
    sessions: (e) => e.MCP_SESSION,
    principals: (e) => e.MCP_PRINCIPALS,
    ...(withLimiter && { rateLimit: () => limiter }),
  });
  const environment = { ...env, ADMIN_TOKEN: TOKEN };
  const list = (token: string, address: string) =>
    worker.fetch(
      new Request(`http://localhost/admin/principals/${encodeURIComponent(`oauth#nobody-${crypto.randomUUID()}`)}`, {
        headers: { Host: 'localhost', Authorization: `Bearer ${token}`, 'CF-Connecting-IP': address },
      }),
      environment,
      createExecutionContext(),
    );
  return { keys, list };
}

describe('the admin routes are throttled per client address', () => {
  it('past the allowance, a guess gets 429 without being compared, and so does the right token', async () => {
    const { keys, list } = adminWorker();
    for (let i = 0; i < ALLOWANCE; i++) expect((await list(`guess-${i}`, '203.0.113.9')).status).toBe(401);
    const wrong = await list('guess-again', '203.0.113.9');
    expect(wrong.status).toBe(429);
    expect(wrong.headers.get('Retry-After')).toBe('60');
    expect(await wrong.json()).toMatchObject({ error: { data: { reason: 'rate_limited' } } });
    const right = await list(TOKEN, '203.0.113.9');
    expect(right.status).toBe(429);
    expect(right.headers.get('Retry-After')).toBe('60');
    // Another client's allowance is its own; an IPv6 client's is its /64's.
    expect((await list(TOKEN, '203.0.113.10')).status).toBe(200);
    expect(keys.at(-1)).toBe('admin:address:203.0.113.10');
    expect(new Set(keys.slice(0, -1))).toEqual(new Set(['admin:address:203.0.113.9']));
  });

  it('an IPv6 client counts as its /64, whichever address it uses', async () => {
    const { keys, list } = adminWorker();
    for (let i = 1; i <= ALLOWANCE; i++) expect((await list('guess', `2001:db8:5:6::${i}`)).status).toBe(401);
    expect((await list(TOKEN, '2001:db8:5:6:ffff::1')).status).toBe(429);
    expect(new Set(keys)).toEqual(new Set(['admin:address:2001:db8:5:6::/64']));
  });

  it('routes not served (no ADMIN_TOKEN) count nothing', async () => {
    const { keys } = adminWorker();
    const worker = createMcpWorker<Env>({
      sessions: (e) => e.MCP_SESSION,
      principals: (e) => e.MCP_PRINCIPALS,
      // Read once, when the Worker checks its bindings; never asked to count.
      rateLimit: () => ({ limit: () => expect.fail('not counted') }),
    });
    const response = await worker.fetch(
      new Request('http://localhost/admin/principals/x', { headers: { Host: 'localhost', Authorization: `Bearer ${TOKEN}` } }),
      env,
      createExecutionContext(),
    );
    expect(response.status).toBe(404);
    expect(keys).toEqual([]);
  });

  it('without a rate-limit binding, the routes answer as before (the token alone bounds a guess)', async () => {
    const { list } = adminWorker(false);
    for (let i = 0; i < ALLOWANCE + 2; i++) expect((await list(`guess-${i}`, '203.0.113.11')).status).toBe(401);
    expect((await list(TOKEN, '203.0.113.11')).status).toBe(200);
  });
});
