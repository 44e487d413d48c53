/**
 * A refresh of a live webhook subscription (MCP Events, SEP-3415, *Subscription lifecycle*):
 * what one `events/subscribe` of a key already subscribed changes, as one decision, so the
 * object stores it in one UPDATE. Pure.
 *
 * - "The server grants a TTL again on each refresh": the new expiry replaces the old (a
 *   no-expiry subscription may become finite and back).
 * - A different `delivery.secret` replaces the stored one; the old one keeps signing beside it
 *   until `now + graceMs` ("SHOULD dual-sign … for a short grace window"). The same secret
 *   changes nothing, a grace already running included.
 * - A suspended subscription is reactivated: its streak starts over (webhook-retry.ts
 *   `reactivated`), the suspended time is added to `pausedTotalMs` ("Time spent with delivery
 *   suspended pauses the window and does not consume it"), and its held deliveries are due.
 * - The refreshing request's grant takes the subscription over (a revocation of it ends it).
 * - The cursor is not an input: "If the subscription is live and the cursor is at or behind the
 *   current in-flight position, this is a no-op"; one ahead of it is a no-op as well (never skip
 *   a pending occurrence on the client's word), and `maxAgeMs` is ignored on a live one.
 * - `deliveryStatus` reports `active` as it was before this refresh ("`false` … if this refresh
 *   has just reactivated it"), the last delivery, the last error's category, and `failedSince`
 *   while a failure streak lasts.
 */
import { deliveryStatus, type DeliveryStatus } from './events-webhook-wire.ts';
import { reactivated, type SubscriptionHealth } from './webhook-retry.ts';
import type { SubscriptionState } from './webhook-schedule.ts';

export interface RefreshableState {
  readonly grant: string;
  readonly secret: string;
  readonly previousSecret: string | null;
  readonly previousUntil: number | null;
  readonly expiresAt: number | null;
  readonly state: SubscriptionState;
  readonly suspendedAt: number | null;
  readonly pausedTotalMs: number;
  readonly health: SubscriptionHealth;
}

export interface RefreshInput {
  readonly grant: string;
  readonly secret: string;
  readonly expiresAt: number | null;
}

export interface RefreshDecision {
  readonly change: RefreshableState;
  readonly reactivated: boolean;
  readonly deliveryStatus: DeliveryStatus;
}

/** The refresh of `current` (not terminating: a terminating subscription is not live) by `input` at `now`. */
export function decideRefresh(current: RefreshableState, input: RefreshInput, now: number, graceMs: number): RefreshDecision {
  if (current.state === 'terminating') throw new RangeError('a terminating subscription is not refreshed');
  const status = deliveryStatus({
    active: current.state === 'active',
    lastDeliveryAt: current.health.lastDeliveryAt,
    lastError: current.health.lastError,
    failingSince: current.health.failingSince,
  });
  const rotated = input.secret !== current.secret;
  const wasSuspended = current.state === 'suspended';
  const change: RefreshableState = {
    grant: input.grant,
    secret: input.secret,
    previousSecret: rotated ? current.secret : current.previousSecret,
    previousUntil: rotated ? now + graceMs : current.previousUntil,
    expiresAt: input.expiresAt,
    state: 'active',
    suspendedAt: null,
    pausedTotalMs: wasSuspended ? current.pausedTotalMs + Math.max(0, now - (current.suspendedAt ?? now)) : current.pausedTotalMs,
    health: wasSuspended ? reactivated(current.health) : current.health,
  };
  return { change, reactivated: wasSuspended, deliveryStatus: status };
}
