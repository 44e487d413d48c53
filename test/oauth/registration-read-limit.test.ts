/**
 * Issue 42, finding 7: reads of a registration's URI (RFC 7592) were outside the rate limit —
 * 700 reads with `Bearer x` from one address were 700 `401`s and 700 KV reads. They count
 * against the same allowance per client address as registrations (the oauth project allows 60 a
 * minute), and a read past it is refused `429` before any KV read. KV reads are observed on the
 * binding the Worker is given (the tests run in the Worker's isolate, with its `env`).
 */
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CLIENT, freshAddress, register, send } from './oauth-flow.ts';

afterEach(() => vi.restoreAllMocks());

describe('reads of a registration, from one address', () => {
  it('are refused 429 past the allowance, with Retry-After, and read nothing from KV', async () => {
    const registered = (await (await register(CLIENT, freshAddress())).json()) as { registration_client_uri: string };
    const path = new URL(registered.registration_client_uri).pathname;
    const address = freshAddress();
    const read = () => send(path, { headers: { Authorization: 'Bearer x' }, address });
    const reads = vi.spyOn(env.OAUTH_KV, 'get');

    // The allowance counts in fixed 60-second windows: the first refusal comes within two.
    const statuses: number[] = [];
    while (statuses.at(-1) !== 429 && statuses.length <= 121) statuses.push((await read()).status);
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.length).toBeGreaterThan(60);
    expect(statuses.slice(0, -1).every((status) => status === 401)).toBe(true);
    // Each read within the allowance read KV (what makes the next assertion able to fail).
    expect(reads.mock.calls.length).toBeGreaterThanOrEqual(statuses.length - 1);

    reads.mockClear();
    for (let i = 0; i < 20; i++) {
      const refused = await read();
      expect(refused.status).toBe(429);
      expect(refused.headers.get('Retry-After')).toBe('60');
      expect(((await refused.json()) as { error: string }).error).toBe('temporarily_unavailable');
    }
    expect(reads).not.toHaveBeenCalled();
  });

  it('share the allowance with registrations', async () => {
    const address = freshAddress();
    const statuses: number[] = [];
    while (statuses.at(-1) !== 429 && statuses.length <= 121) statuses.push((await register(CLIENT, address)).status);
    expect(statuses.at(-1)).toBe(429);
    const read = await send('/oauth/register/someone', { headers: { Authorization: 'Bearer x' }, address });
    expect(read.status).toBe(429);
  });
});
