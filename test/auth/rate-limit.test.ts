/**
 * A flood from one principal is refused with 429 and `Retry-After` once it passes the
 * rate-limit binding's allowance (60 a minute in this project); other principals are served.
 */
import { describe, expect, it } from 'vitest';
import { errorOf, postRaw } from '../support/mcp-http.ts';
import { bearer } from '../support/tokens.ts';

describe('a flood', () => {
  it('is answered 429 with Retry-After beyond the allowance, for its principal only', async () => {
    const flooder = await bearer(`flooder-${crypto.randomUUID()}`);
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    const session = { 'Mcp-Session-Id': 'A'.repeat(43), 'MCP-Protocol-Version': '2025-11-25' };
    // The binding counts in fixed 60-second windows: a window may turn during the flood, so the
    // first refusal comes within two allowances, never later.
    const statuses: number[] = [];
    while (statuses.at(-1) !== 429 && statuses.length <= 121) statuses.push((await postRaw(ping, { ...flooder, ...session })).status);
    expect(statuses.at(-1)).toBe(429);
    expect(
      statuses.slice(0, -1).every((status) => status === 404),
      'answered until the allowance is spent',
    ).toBe(true);
    expect(statuses.length).toBeGreaterThan(60);
    const refused = await postRaw(ping, { ...flooder, ...session });
    expect(refused.headers.get('Retry-After')).toBe('60');
    expect(await errorOf(refused)).toMatchObject({ status: 429, reason: 'rate_limited' });
    expect((await postRaw(ping, { ...(await bearer(`neighbour-${crypto.randomUUID()}`)), ...session })).status).toBe(404);
  });
});
