/**
 * The operator's routes under the project's real Rate Limiting binding (60 a minute per key):
 * from one address, the 61st request of a minute is `429` whatever its token, so a guesser gets
 * 60 guesses a minute and the right one past them is not told apart. The counting itself, key by
 * key, is test/worker/admin-throttle.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import { TEST_ADMIN_TOKEN } from '../support/tokens.ts';
import { freshAddress, send } from './oauth-flow.ts';

const ALLOWANCE = 60;

const list = (token: string, address: string) =>
  send(`/admin/principals/${encodeURIComponent('oauth#nobody')}`, { headers: { Authorization: `Bearer ${token}` }, address });

describe('the admin routes, throttled by the Worker’s rate limit per address', () => {
  it('past 60 wrong tokens a minute, the right one is 429 too; another address is served', async () => {
    const address = freshAddress();
    for (let i = 0; i < ALLOWANCE; i++) expect((await list(`guess-${i}`, address)).status).toBe(401);
    const right = await list(TEST_ADMIN_TOKEN, address);
    expect(right.status).toBe(429);
    expect(right.headers.get('Retry-After')).toBe('60');
    expect((await list('guess', address)).status).toBe(429);
    expect((await list(TEST_ADMIN_TOKEN, freshAddress())).status).toBe(200);
  });
});
