/**
 * How the Worker, a tool or an alarm reaches an event type's log: one `McpEventLog` object per
 * log, named by the type and partition it holds (`["event-log", type, partition]` as JSON, so no
 * two logs share a name however their parts are spelled), called by RPC. A log's class declared
 * without SQLite is found where an object first touches its storage, and answered with the
 * configuration error that names the fix (edge/storage-guard.ts).
 */
import { BINDING_USES } from '../core/binding-check.ts';
import { placedNamespace } from '../edge/placement.ts';
import { namespaceGuard } from '../edge/storage-guard.ts';
import type { ReadAnswer, ReadRequest } from './event-log-object.ts';
import type { Appended, LogName, NewOccurrence } from './event-log-store.ts';
import type { Retention } from './event-retention.ts';
import type { AddSubscriberAnswer, AddSubscriberRequest } from './log-subscribers.ts';

/** The RPC surface of an `McpEventLog` stub, as the library calls it. */
export interface EventLogStub {
  append(name: LogName, retention: Retention, occurrence: NewOccurrence): Promise<Appended>;
  read(request: ReadRequest): Promise<ReadAnswer>;
  reset(name: LogName, retention: Retention): Promise<string>;
  fetch(request: Request): Promise<Response>;
  /**
   * A webhook subscription joins the log's subscribers (log-subscribers.ts): where its delivery
   * starts is decided in the same turn as its row is written, so no occurrence falls between
   * "where it starts" and "who is poked". Refused: the cursor's refusal, or ResourceExhausted at
   * MAX_WEBHOOKS_PER_LOG. Idempotent: an id already subscribed keeps its row and gets a decision.
   */
  addSubscriber(request: AddSubscriberRequest): Promise<AddSubscriberAnswer>;
  /** The subscriber's row is dropped (idempotent). */
  removeSubscriber(name: LogName, id: string): Promise<void>;
}

// Declared in log-subscribers.ts (which event-log-object.ts imports: declared here, they would close an import circle).
export type { AddSubscriberAnswer, AddSubscriberRequest };

/** The binding of the `McpEventLog` class (`MCP_EVENTS`). */
export interface EventLogNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): unknown;
}

export function logObjectName({ type, partition }: LogName): string {
  return JSON.stringify(['event-log', type, partition]);
}

/** The log `name`'s object, its calls guarded. */
export function eventLog(namespace: EventLogNamespace, name: LogName): EventLogStub {
  const guard = namespaceGuard(namespace, BINDING_USES.events.usualName, 'McpEventLog, the event logs');
  const stub = namespace.get(namespace.idFromName(logObjectName(name))) as EventLogStub;
  return {
    append: (logName, retention, occurrence) => guard.call(() => stub.append(logName, retention, occurrence)),
    read: (request) => guard.call(() => stub.read(request)),
    reset: (logName, retention) => guard.call(() => stub.reset(logName, retention)),
    fetch: (request) => guard.call(() => stub.fetch(request)),
    addSubscriber: (request) => guard.call(() => stub.addSubscriber(request)),
    removeSubscriber: (logName, id) => guard.call(() => stub.removeSubscriber(logName, id)),
  };
}

/**
 * Drops every occurrence of a log and gives it a new log id (an operator's action): every cursor
 * of the old generation is then answered `truncated: true` from the new log's start, never read
 * as a position of it; open push streams are told the same. `logs` is placed as the Worker's
 * DO_JURISDICTION and DO_LOCATION_HINT say (edge/placement.ts).
 */
export function resetEventLog(
  logs: EventLogNamespace,
  type: { readonly name: string; readonly retention: Retention },
  partition = '',
): Promise<string> {
  const name = { type: type.name, partition };
  return eventLog(placedNamespace(logs), name).reset(name, type.retention);
}
