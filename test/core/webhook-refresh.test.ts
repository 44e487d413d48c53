import { describe, expect, it } from 'vitest';
import { decideRefresh, type RefreshableState } from '../../src/core/webhook-refresh.ts';
import { HEALTHY } from '../../src/core/webhook-retry.ts';

const now = 1_000_000;
const grace = 3_600_000;
const live: RefreshableState = {
  grant: 'g1',
  secret: 'whsec_A',
  previousSecret: null,
  previousUntil: null,
  expiresAt: now + 10,
  state: 'active',
  suspendedAt: null,
  pausedTotalMs: 0,
  health: { ...HEALTHY, lastDeliveryAt: now - 5 },
};
const same = { grant: 'g1', secret: 'whsec_A', expiresAt: now + 60_000 };

describe('decideRefresh', () => {
  it('the TTL is granted again; the same secret changes nothing else', () => {
    const { change, reactivated } = decideRefresh(live, same, now, grace);
    expect(change).toEqual({ ...live, expiresAt: now + 60_000 });
    expect(reactivated).toBe(false);
  });

  it('no expiry can be asked for on a refresh, and a finite one again after', () => {
    expect(decideRefresh(live, { ...same, expiresAt: null }, now, grace).change.expiresAt).toBeNull();
    expect(decideRefresh({ ...live, expiresAt: null }, same, now, grace).change.expiresAt).toBe(now + 60_000);
  });

  it('a new secret: the old one is kept as previous until now + grace ("SHOULD dual-sign … for a short grace window")', () => {
    const { change } = decideRefresh(live, { ...same, secret: 'whsec_B' }, now, grace);
    expect(change).toMatchObject({ secret: 'whsec_B', previousSecret: 'whsec_A', previousUntil: now + grace });
  });

  it('the same secret again during a grace: the grace runs on unchanged', () => {
    const rotating = { ...live, secret: 'whsec_B', previousSecret: 'whsec_A', previousUntil: now + 5 };
    expect(decideRefresh(rotating, { ...same, secret: 'whsec_B' }, now, grace).change).toMatchObject({
      previousSecret: 'whsec_A',
      previousUntil: now + 5,
    });
  });

  it('another grant of the principal takes the subscription over', () => {
    expect(decideRefresh(live, { ...same, grant: 'g2' }, now, grace).change.grant).toBe('g2');
  });

  it('suspended: reactivated, its suspended time added to the pause, its streak started over, deliveryStatus active: false with failedSince', () => {
    const suspended: RefreshableState = {
      ...live,
      state: 'suspended',
      suspendedAt: now - 700,
      pausedTotalMs: 50,
      health: { consecutiveFailures: 20, failingSince: now - 900, lastError: 'http_5xx', lastDeliveryAt: now - 1_000 },
    };
    const { change, reactivated, deliveryStatus } = decideRefresh(suspended, same, now, grace);
    expect(reactivated).toBe(true);
    expect(change).toMatchObject({ state: 'active', suspendedAt: null, pausedTotalMs: 750 });
    expect(change.health).toEqual({ consecutiveFailures: 0, failingSince: null, lastError: 'http_5xx', lastDeliveryAt: now - 1_000 });
    expect(deliveryStatus).toEqual({
      active: false,
      lastDeliveryAt: new Date(now - 1_000).toISOString(),
      lastError: 'http_5xx',
      failedSince: new Date(now - 900).toISOString(),
    });
  });

  it('active and healthy: deliveryStatus active: true, no failedSince', () => {
    expect(decideRefresh(live, same, now, grace).deliveryStatus).toEqual({
      active: true,
      lastDeliveryAt: new Date(now - 5).toISOString(),
      lastError: null,
    });
  });

  it('a terminating subscription is not live: refreshing it is a bug', () => {
    expect(() => decideRefresh({ ...live, state: 'terminating' }, same, now, grace)).toThrow(RangeError);
  });
});
