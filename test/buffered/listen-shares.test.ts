/**
 * Under AUTH=none the one principal is everyone, so an isolate's listens are shared per client
 * address, as the rate limit is (core/client-address.ts: an IPv6 client by its /64). Here
 * MAX_LISTEN_STREAMS=8 and MAX_LISTENS_PER_PRINCIPAL=6 (vitest.config.ts): one address gets 6,
 * its next is `429 too_many_listens`, and another address is served from the isolate's rest.
 */
import { describe, expect, it } from 'vitest';
import { HeldStreams, servedAgain, type Outcome } from '../support/held-streams.ts';
import { modernRequest } from '../support/modern-http.ts';

const ISOLATE = 8;
const SHARE = 6;

const listenFrom = (address: string) => () =>
  modernRequest('subscriptions/listen', { notifications: { toolsListChanged: true } }, {}, { 'CF-Connecting-IP': address });
const tooMany = { status: 429, code: -32000, message: expect.stringContaining(`${SHARE}`), reason: 'too_many_listens', limit: SHARE };
const times = <T>(n: number, value: T): T[] => Array.from({ length: n }, () => value);

describe('anonymous listens, per client address', () => {
  it(`one address gets its share (${SHARE}) of the isolate's ${ISOLATE}: its next is 429 too_many_listens, another address is served`, async () => {
    const held = new HeldStreams();
    try {
      const a = await held.outcomes(ISOLATE, listenFrom('203.0.113.7'));
      const b = await held.outcome(await listenFrom('203.0.113.8')());
      expect({ a, b }).toEqual({ a: [...times<Outcome>(SHARE, 'served'), ...times(ISOLATE - SHARE, tooMany)], b: 'served' });
      // A stream that ends gives its slot back to its address.
      await held.leave(0);
      expect(await servedAgain(held, listenFrom('203.0.113.7'))).toBe('served');
    } finally {
      await held.close();
    }
  });

  it('an IPv6 client is its /64: its addresses share one share, and the next /64 has its own', async () => {
    const held = new HeldStreams();
    try {
      const a = [];
      for (let i = 1; i <= SHARE + 1; i++) a.push(await held.outcome(await listenFrom(`2001:db8:1:2::${i.toString(16)}`)()));
      const b = await held.outcome(await listenFrom('2001:db8:1:3::1')());
      expect({ a, b }).toEqual({ a: [...times<Outcome>(SHARE, 'served'), tooMany], b: 'served' });
    } finally {
      await held.close();
    }
  });
});
