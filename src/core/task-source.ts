/**
 * A task's timeline as an MCP Events event type: the task event sources proposal
 * (experimental-ext-triggers-events, proposals/XXXX-task-event-sources.md, draft) over the
 * timeline `tasks/stream` serves (core/task-stream.ts, task-events.ts). One timeline, two ways
 * to read it: `tasks/stream` numbers it by `seq` and `after`; `events/poll` and `events/stream`
 * by a sealed cursor (core/event-cursor.ts) whose position is the same `seq`. Nothing is stored
 * twice: an occurrence is a timeline event, written once by the task's object, read either way.
 *
 * What this module fixes, in one place, so that the object (tasks/task-sources.ts) and the edge
 * (events/task-source.ts) agree:
 * - the type's name, `mcp-edge-sessions.task` (the proposal mandates no convention: "a single
 *   generic task.intermediate_results event type or tool-specific types"; this is the generic
 *   one, under the namespace of this server's own task event types), its `inputSchema`
 *   (`{taskId}`) and `payloadSchema`;
 * - the log a task's cursor names: type, partition = the task id, log id `timeline` — one for
 *   every task, because a task's timeline is never reset (its seqs are never reused; events
 *   dropped past TASK_MAX_EVENTS answer `truncated`, as retention does);
 * - position = the seq of the next timeline event to deliver, so `initialCursor` (position 0)
 *   is before the task's creation event, and a cursor at `n` is `tasks/stream`'s `after: n - 1`;
 * - an occurrence: `eventId` `<taskId>-<seq>`, `timestamp` when the event was stored, `data`
 *   the event as `tasks/stream` sends it (`notifications/tasks/event` params without `_meta`:
 *   `{seq, taskId, type, payload}`) — the task's status changes, progress, log lines and the
 *   events its tool emits (`emitTaskEvent`), which are its intermediate results;
 * - the end: once the task is terminal and a reader has had its last event, the subscription is
 *   over, answered NotFound `{kind: "subscription", reason: "task_ended"}` (see taskEnded).
 * Pure, no I/O.
 */
import type { EventCursor, LogIdentity, StartDecision } from './event-cursor.ts';
import { eventsError, type EventsError, type JsonObject, type TaskEventSource } from './events-wire.ts';
import type { TaskStatus } from './task.ts';
import { TASK_EVENT_PREFIX } from './task-stream.ts';

/** The event type every task's timeline is served as. */
export const TASK_SOURCE_TYPE = `${TASK_EVENT_PREFIX}task`;

/** The log id of every task's timeline: a timeline is never reset, so its generation never changes. */
export const TASK_TIMELINE_LOG_ID = 'timeline';

/** The log a task's cursors name. */
export function taskTimelineIdentity(taskId: string): LogIdentity {
  return { type: TASK_SOURCE_TYPE, partition: taskId, logId: TASK_TIMELINE_LOG_ID };
}

export const TASK_SOURCE_DESCRIPTION =
  "A task's timeline, from its creation to its terminal status: its status changes, progress, log lines and the events " +
  'its tool emits, each as tasks/stream sends it. A task created by a tools/call that declared this extension names it ' +
  'in its CreateTaskResult (eventSource); the subscription ends when the task reaches a terminal status.';

export const TASK_SOURCE_INPUT_SCHEMA = {
  type: 'object',
  properties: { taskId: { type: 'string', description: 'The task, as its CreateTaskResult named it' } },
  required: ['taskId'],
} as const satisfies JsonObject;

export const TASK_SOURCE_PAYLOAD_SCHEMA = {
  type: 'object',
  description: 'One event of the task timeline: the params of notifications/tasks/event (tasks/stream) without _meta',
  properties: {
    seq: { type: 'integer', minimum: 0, description: "Its place in the task's timeline: 0 its creation, the last its terminal status" },
    taskId: { type: 'string' },
    type: {
      type: 'string',
      description: `${TASK_EVENT_PREFIX}status, ${TASK_EVENT_PREFIX}progress, ${TASK_EVENT_PREFIX}log, ${TASK_EVENT_PREFIX}omitted, or the tool's own namespaced type`,
    },
    payload: { type: 'object' },
  },
  required: ['seq', 'taskId', 'type', 'payload'],
} as const satisfies JsonObject;

/** The `eventSource` of a task's CreateTaskResult, its `initialCursor` minted by the caller at position 0. */
export function taskEventSource(taskId: string, initialCursor: string): TaskEventSource {
  return { name: TASK_SOURCE_TYPE, input: { taskId }, initialCursor };
}

/** Where `initialCursor` stands: before the task's first timeline event, so a subscriber replays all it missed. */
export function initialPosition(taskId: string): EventCursor {
  return { ...taskTimelineIdentity(taskId), next: 0 };
}

/** A timeline event as the object reads it: its payload as stored (JSON text) and when it was stored. */
export interface TimedEvent {
  readonly seq: number;
  readonly type: string;
  readonly payloadJson: string;
  /** Epoch ms. */
  readonly at: number;
}

/** An occurrence as it travels from the task's object to the Worker (the shape of an event log's stored occurrence). */
export interface TaskOccurrence {
  readonly seq: number;
  readonly storedAt: number;
  readonly eventId: string;
  readonly timestamp: string;
  /** JSON text of `{seq, taskId, type, payload}`. */
  readonly data: string;
}

export function taskOccurrence(taskId: string, { seq, type, payloadJson, at }: TimedEvent): TaskOccurrence {
  // The payload as stored, not parsed and written again: the same JSON tasks/stream sends.
  const data = `{"seq":${seq},"taskId":${JSON.stringify(taskId)},"type":${JSON.stringify(type)},"payload":${payloadJson}}`;
  return { seq, storedAt: at, eventId: `${taskId}-${seq}`, timestamp: new Date(at).toISOString(), data };
}

/**
 * "The server MUST terminate the event stream when the task reaches a terminal status." The
 * answer to a read or attach of a terminal task's subscription with nothing left after its
 * position: the poll's signal ("a JSON-RPC error response to the next events/poll request") and
 * the nested error of push's `notifications/events/terminated`, the same in both modes.
 * NotFound because the subscription no longer exists and never will again (a client neither
 * retries it nor treats it as a transient fault), `kind: "subscription"` because the event type
 * does (`"event"` would tell a client the type was removed); `reason` and `status` are ours.
 * Not a task failure: "The client MUST NOT treat the subscription failure as a task failure."
 */
export function taskEnded(taskId: string, status: TaskStatus): EventsError<'NotFound'> {
  return eventsError('NotFound', `task ${taskId} is ${status}: its event stream has ended`, {
    kind: 'subscription',
    reason: 'task_ended',
    status,
  });
}

/** A task this principal does not have: never created, expired, or another principal's — one answer for all. */
export function unknownTask(): EventsError<'NotFound'> {
  return eventsError('NotFound', 'no such task', { kind: 'subscription', reason: 'unknown_task' });
}

/** What the Worker asks a task's object to read (a poll, a push stream catching up). */
export interface TaskSourceRead {
  /** The decoded cursor (its MAC verified by the Worker), or null: from now. */
  readonly cursor: EventCursor | null;
  readonly maxAgeMs?: number;
  readonly limit: number;
  /** Data bytes a page stops before (the first occurrence is always answered). */
  readonly maxBytes: number;
}

/** A start that delivers: where, and whether anything before it was skipped. */
export type DeliveringStart = Exclude<StartDecision, { readonly kind: 'refused' }>;

export type TaskSourceReadAnswer =
  | { readonly refusal: EventsError }
  | {
      readonly decision: DeliveringStart;
      readonly logId: string;
      readonly nextSeq: number;
      readonly occurrences: readonly TaskOccurrence[];
    };

/** Sent over a task source's socket, in order: the start, then occurrences; closed after the terminal one. */
export type TaskFeedMessage =
  | { readonly start: { readonly logId: string; readonly fromSeq: number; readonly truncated: boolean } }
  | { readonly occurrence: TaskOccurrence };
