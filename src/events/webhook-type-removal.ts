/**
 * Whether a webhook subscription's event type is still served by webhook in this deploy, and if
 * not, the `terminated` its object ends it with (SEP-3415, *Event type removal*: "The server
 * SHOULD end them with each mode's termination signal"; docs/events.md, *Webhooks*, choice 8).
 * The object's types are the deploy's (the list given to createMcpWorker), so a deploy that drops
 * a type, or stops offering it by webhook, is seen at the subscription's next wake: a poke from
 * its log or its alarm (webhook-object.ts). Pure: the object terminates, this only decides.
 *
 * Two signals, each what a fresh `events/subscribe` of the same key would now be refused with, so
 * a client that subscribes again hears the same thing twice:
 * - the type is gone: NotFound `{kind: "event"}` (the SEP's signal on removal);
 * - the type is still listed but no longer offers `webhook`: Unsupported `{feature:
 *   "deliveryMode", value: "webhook"}` (webhook-methods.ts's refusal): NotFound would contradict
 *   `events/list`, which still lists the type, and its poll or stream still serves it.
 * Anything else (a schema changed additively, another description) is no change: "Purely
 * additive changes MUST NOT terminate subscriptions" (schemas are never compared).
 */
import { eventsError } from '../core/events-wire.ts';
import type { EventType } from './event-type.ts';
import type { Termination } from './webhook-subscriptions.ts';

/** null: `name` is still delivered by webhook; else the termination of its subscriptions. */
export function typeRemoval(types: readonly EventType[], name: string): Termination | null {
  const type = types.find((candidate) => candidate.name === name);
  if (type === undefined) {
    return { error: eventsError('NotFound', 'this event type is no longer served', { kind: 'event' }), cause: 'type_removed' };
  }
  if (!type.offers('webhook')) {
    return {
      error: eventsError('Unsupported', `${name} is no longer delivered by webhook`, { feature: 'deliveryMode', value: 'webhook' }),
      cause: 'type_removed',
    };
  }
  return null;
}
