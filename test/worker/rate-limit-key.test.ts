/**
 * What an anonymous request (AUTH=none) counts against in the rate limit: its client address,
 * an IPv6 client by its /64 (core/client-address.ts), so rotating through the addresses it owns
 * buys no new allowance.
 */
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { createMcpWorker } from '../../src/lib.ts';

function recordingWorker(vars: Record<string, string> = {}) {
  const keys: string[] = [];
  const limiter = {
    limit: async ({ key }: { key: string }) => {
      keys.push(key);
      return { success: true };
    },
  };
  const worker = createMcpWorker<Env>({ sessions: (e) => e.MCP_SESSION, rateLimit: () => limiter });
  const environment = { ...env, ...vars };
  const ping = (address: string | undefined) =>
    worker.fetch(
      new Request('http://localhost/mcp', {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'Mcp-Session-Id': 'A'.repeat(43),
          'MCP-Protocol-Version': '2025-11-25',
          ...(address !== undefined && { 'CF-Connecting-IP': address }),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      }),
      environment,
      createExecutionContext(),
    );
  return { keys, ping };
}

describe('the anonymous rate-limit key', () => {
  it('is the /64 of an IPv6 client, whichever of its addresses it uses', async () => {
    const { keys, ping } = recordingWorker();
    for (const address of ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0DB8:0001:0002:abcd::9%eth0']) await ping(address);
    expect(keys).toEqual(['address:2001:db8:1:2::/64', 'address:2001:db8:1:2::/64', 'address:2001:db8:1:2::/64']);
  });

  it('is the whole address of an IPv4 client, also seen IPv4-mapped', async () => {
    const { keys, ping } = recordingWorker();
    await ping('203.0.113.7');
    await ping('::ffff:203.0.113.7');
    await ping('203.0.113.8');
    expect(keys).toEqual(['address:203.0.113.7', 'address:203.0.113.7', 'address:203.0.113.8']);
  });

  it('is one shared key without an address, or with one that is not', async () => {
    const { keys, ping } = recordingWorker();
    await ping(undefined);
    await ping('not an address');
    expect(keys).toEqual(['address:unknown', 'address:unknown']);
  });

  it('follows RATE_LIMIT_IPV6_PREFIX', async () => {
    const { keys, ping } = recordingWorker({ RATE_LIMIT_IPV6_PREFIX: '48' });
    await ping('2001:db8:1:2::1');
    await ping('2001:db8:1:3::1');
    expect(keys).toEqual(['address:2001:db8:1::/48', 'address:2001:db8:1::/48']);
  });
});
