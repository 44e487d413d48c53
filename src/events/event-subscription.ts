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
 * the subscription's log is the log's decision (core/event-cursor.ts `decideStart`); for an
 * upstream-backed type (upstream-event-type.ts) there is no log to ask, and it is decided here
 * (`decideUpstreamStart`): a log cursor, another type's or another partition's is refused before
 * the author's `read` is called.
 */
import type { Principal } from '../auth/principal.ts';
import {
  type CursorKeys,
  decideUpstreamStart,
  decodeCursor,
  type EventCursor,
  logCursorOf,
  refuseUndecodable,
  type SealedCursor,
} from '../core/event-cursor.ts';
import { type DeliveryMode, eventsError, type EventsError, type JsonObject, type SubscriptionParams } from '../core/events-wire.ts';
import type { EventCatalog } from './event-catalog.ts';
import type { LogName } from './event-log-store.ts';
import type { EventType } from './event-type.ts';
import { UpstreamEventType } from './upstream-event-type.ts';

export interface Subscription {
  readonly type: EventType;
  /** The arguments as the type's schema output them. */
  readonly args: JsonObject;
  /** The log the subscription reads: its type's, or the partition its arguments name. */
  readonly log: LogName;
  /** Where a log-backed type's subscription starts (its log decides); null for an upstream-backed one. */
  readonly cursor: EventCursor | null;
  /** An upstream-backed type's subscription: its type, and the upstream's position to read after (null: from now). */
  readonly upstream?: { readonly type: UpstreamEventType; readonly from: string | null };
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
  let sealed: SealedCursor | null = null;
  if (params.cursor !== null) {
    const decoded = await decodeCursor(params.cursor, keys);
    if (!decoded.ok) return { error: refuseUndecodable(decoded.reason).invalid };
    sealed = decoded.cursor;
  }
  const log = { type: type.name, partition: type.partitionOf(args) };
  const accepts = (data: JsonObject) => type.matches(args, data);
  if (type instanceof UpstreamEventType) {
    const start = decideUpstreamStart(sealed, log);
    if (start.kind === 'refused') return { error: start.invalid };
    return { type, args, log, cursor: null, upstream: { type, from: start.kind === 'continue' ? start.upstream : null }, accepts };
  }
  const cursor = sealed === null ? null : logCursorOf(sealed, type.name);
  if (cursor !== null && 'invalid' in cursor) return { error: cursor.invalid };
  return { type, args, log, cursor, accepts };
}
