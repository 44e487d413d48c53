/**
 * What `events/poll` and `events/stream` check before anything is read, in one order, each
 * failure its own typed error (SEP-3415, *Error Handling*; core/events-wire.ts holds the codes):
 * an unknown name is NotFound (`kind: "event"`); a delivery mode the type does not offer is
 * Unsupported (`{feature: "deliveryMode", value}`); arguments its `inputSchema` refuses are
 * InvalidParams (`invalid_arguments`); a principal the type does not authorize is Forbidden —
 * "When the caller is authenticated, the server MUST verify that the principal has permission to
 * subscribe to the requested event type with the given arguments", checked on every poll and
 * every stream opened, so that a cursor grants nothing; a cursor not minted by this server is
 * InvalidParams (`malformed_cursor`, `forged_cursor`). Whether a sealed cursor is a position in
 * the subscription's log is the log's decision (core/event-cursor.ts `decideStart`).
 */
import type { Principal } from '../auth/principal.ts';
import { type CursorKeys, decodeCursor, type EventCursor, refuseUndecodable } from '../core/event-cursor.ts';
import { type DeliveryMode, eventsError, type EventsError, type JsonObject, type SubscriptionParams } from '../core/events-wire.ts';
import type { EventCatalog } from './event-catalog.ts';
import type { LogName } from './event-log-store.ts';
import type { EventType } from './event-type.ts';

export interface Subscription {
  readonly type: EventType;
  /** The arguments as the type's schema output them. */
  readonly args: JsonObject;
  /** The log the subscription reads: its type's, or the partition its arguments name. */
  readonly log: LogName;
  readonly cursor: EventCursor | null;
  /** Whether the subscription receives an occurrence with `data`. */
  accepts(data: JsonObject): boolean;
}

export async function resolveSubscription(
  catalog: EventCatalog,
  params: SubscriptionParams,
  mode: DeliveryMode,
  principal: Principal,
  keys: CursorKeys,
): Promise<Subscription | { readonly error: EventsError }> {
  const type = catalog.get(params.name);
  if (type === undefined) return { error: eventsError('NotFound', `no event type ${JSON.stringify(params.name)}`, { kind: 'event' }) };
  if (!type.offers(mode)) {
    return { error: eventsError('Unsupported', `${type.name} is not delivered by ${mode}`, { feature: 'deliveryMode', value: mode }) };
  }
  const checked = await type.parseArguments(params.arguments);
  if (!checked.ok) {
    return {
      error: eventsError('InvalidParams', `arguments do not match the inputSchema: ${checked.invalid}`, { reason: 'invalid_arguments' }),
    };
  }
  const args = checked.value;
  if (!type.authorizes(principal, args)) {
    return {
      error: eventsError('Forbidden', `not permitted to subscribe to ${type.name} with these arguments`, { reason: 'not_permitted' }),
    };
  }
  let cursor: EventCursor | null = null;
  if (params.cursor !== null) {
    const decoded = await decodeCursor(params.cursor, keys);
    if (!decoded.ok) return { error: refuseUndecodable(decoded.reason).invalid };
    cursor = decoded.cursor;
  }
  return {
    type,
    args,
    log: { type: type.name, partition: type.partitionOf(args) },
    cursor,
    accepts: (data) => type.matches(args, data),
  };
}
