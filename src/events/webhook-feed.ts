/**
 * Where a webhook subscription's new occurrences come from (docs/events.md, *Webhooks*): the
 * poke's own occurrences when they cover the subscription's position, else a page of its log
 * read from that position with the log's `read` (the same decision a poll's cursor gets). What
 * a page says besides its occurrences is what the object must act on: the log was reset (a new
 * log id: the old generation's positions name nothing), or it no longer keeps the position
 * (retention pruned past it while the subscription was held or down: a loss to announce).
 */
import type { JsonObject } from '../core/events-wire.ts';
import type { StoredOccurrence } from './event-log-store.ts';
import { eventLog, type EventLogNamespace } from './event-logs.ts';
import type { Retention } from './event-retention.ts';
import type { Occurrence } from './webhook-delivery.ts';
import type { SubscriptionRecord } from './webhook-store.ts';
import type { Poke } from './webhook-subscriptions.ts';

/** Occurrences one page reads at most, and the data bytes it stops before: the attach backlog's bounds. */
export const PAGE_LIMIT = 64;
export const PAGE_MAX_BYTES = 1024 * 1024;

export type Page =
  /** From `from` on, in order (none: at the head); `head`: the log's next seq when read. */
  | { readonly kind: 'page'; readonly occurrences: readonly Occurrence[]; readonly head: number; readonly lostTo?: number }
  /** The log has another id than the subscription's: it was reset; it now keeps from `earliestSeq`. */
  | { readonly kind: 'reset'; readonly logId: string; readonly earliestSeq: number };

function occurrenceOf(stored: StoredOccurrence): Occurrence {
  return {
    seq: stored.seq,
    storedAt: stored.storedAt,
    eventId: stored.eventId,
    timestamp: stored.timestamp,
    data: JSON.parse(stored.data) as JsonObject,
  };
}

/** The poke's occurrences from `from` on, when they reach back to it and end at its head; else undefined. */
export function pokedPage(poke: Poke, from: number): Page | undefined {
  const occurrences = poke.occurrences;
  if (occurrences === undefined || occurrences.length === 0) return undefined;
  if (occurrences[0]!.seq > from || occurrences[occurrences.length - 1]!.seq !== poke.head - 1) return undefined;
  return { kind: 'page', occurrences: occurrences.filter(({ seq }) => seq >= from).map(occurrenceOf), head: poke.head };
}

/**
 * A page of the log from `from`. `lostTo`: the log no longer keeps `from`; its page starts there
 * instead, and the occurrences in between (matching or not: unknown now) are lost.
 */
export async function readPage(logs: EventLogNamespace, record: SubscriptionRecord, retention: Retention, from: number): Promise<Page> {
  const name = { type: record.name, partition: record.partition };
  const answer = await eventLog(logs, name).read({
    ...name,
    retention,
    cursor: { ...name, logId: record.logId, next: from },
    limit: PAGE_LIMIT,
    maxBytes: PAGE_MAX_BYTES,
  });
  const { decision } = answer;
  // A position past the head of a log of the same id cannot be ours unless the log lost what it had: read as a reset.
  if (decision.kind === 'refused') return { kind: 'reset', logId: answer.logId, earliestSeq: answer.nextSeq };
  if (decision.kind === 'truncated' && decision.cause === 'log_reset')
    return { kind: 'reset', logId: answer.logId, earliestSeq: decision.fromSeq };
  const occurrences = answer.occurrences.map(occurrenceOf);
  return decision.kind === 'truncated'
    ? { kind: 'page', occurrences, head: answer.nextSeq, lostTo: decision.fromSeq }
    : { kind: 'page', occurrences, head: answer.nextSeq };
}
