/**
 * A task's timeline as SEP-2694 events (draft): what each thing that happens to a task becomes —
 * a status change, a progress notification or a log message its tool sends, an event the tool
 * emits itself — and the `notifications/tasks/event` that carries one. Pure: the task object
 * stores each event (with its `seq`) before any client hears it; this only says what it is.
 *
 * The final result is not an event: it stays canonical in `tasks/get`, and the terminal status
 * event says so, so a stream and `tasks/get` can never disagree about it.
 */
import type { TaskRecord } from './task.ts';
import { TASK_EVENT_PREFIX } from './task-stream.ts';
import { utf8Length } from './utf8.ts';

/** An event before it has a place in the timeline. "Event payloads MUST be JSON objects." */
export interface TaskEventBody {
  readonly type: string;
  readonly payload: Readonly<Record<string, unknown>>;
}

/** An event in the timeline: "the first event in a task stream MUST use seq: 0, and each subsequent event ... increment by exactly 1". */
export interface TaskEvent extends TaskEventBody {
  readonly seq: number;
}

/** Our event types, each under our prefix ("Implementation-defined event types MUST use a vendor-specific prefix"). */
export const TASK_EVENT_TYPES = {
  status: `${TASK_EVENT_PREFIX}status`,
  progress: `${TASK_EVENT_PREFIX}progress`,
  log: `${TASK_EVENT_PREFIX}log`,
  /** In place of an event whose payload was over the bound: its type and size, so nothing is missing silently. */
  omitted: `${TASK_EVENT_PREFIX}omitted`,
} as const;

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/**
 * The task's status as an event: on `input_required` the questions it asks, on `failed` why, on
 * `completed` where the result is (it is never copied into the timeline).
 */
export function statusEvent(task: TaskRecord): TaskEventBody {
  const payload: Record<string, unknown> = { status: task.status };
  if (task.statusMessage !== null) payload.statusMessage = task.statusMessage;
  if (task.status === 'input_required' && task.inputRequests !== null) payload.inputRequests = task.inputRequests;
  if (task.status === 'failed' && task.error !== null) payload.error = task.error;
  if (task.status === 'completed') payload.result = 'tasks/get';
  return { type: TASK_EVENT_TYPES.status, payload };
}

/**
 * The notification that carries an event a tool emits itself (run-task.ts `emitTaskEvent`) on
 * its round's own stream, so that it takes its place in the timeline in the order the tool sent
 * it, among its progress and log lines. It never leaves the task's object.
 */
export const TOOL_EVENT_METHOD = 'notifications/mcp-edge-sessions/task-event';

/**
 * What the task's tool sent on its round's stream, as an event: `notifications/progress` (its
 * params without the round's own token), `notifications/message`, and the events it emits
 * itself; anything else is not part of the timeline (undefined).
 */
export function notificationEvent(method: string, params: Readonly<Record<string, unknown>>): TaskEventBody | undefined {
  if (method === TOOL_EVENT_METHOD) {
    const { type, payload } = params;
    return toolEventProblem(type, payload) === undefined
      ? { type: type as string, payload: payload as Record<string, unknown> }
      : undefined;
  }
  if (method === 'notifications/progress') {
    const { progressToken: _token, _meta, ...progress } = params;
    return typeof progress.progress === 'number' ? { type: TASK_EVENT_TYPES.progress, payload: progress } : undefined;
  }
  if (method === 'notifications/message') {
    const { _meta, ...message } = params;
    return { type: TASK_EVENT_TYPES.log, payload: message };
  }
  return undefined;
}

/**
 * Why an event a tool emits itself cannot go into the timeline, or undefined if it can. Its
 * type is the tool author's: under a namespace of its own (a dot in it, as `com.example.x`,
 * never an unprefixed name, which "MUST NOT be emitted ... unless defined by a future MCP
 * standard"), and never under ours, whose types this server defines; its payload a JSON object.
 */
export function toolEventProblem(type: unknown, payload: unknown): string | undefined {
  if (typeof type !== 'string' || !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$/.test(type)) {
    return 'an event type is a namespaced name, as com.example.review.comment';
  }
  if (type.startsWith(TASK_EVENT_PREFIX)) return `the ${TASK_EVENT_PREFIX} types are this server's own`;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return 'an event payload is a JSON object';
  return undefined;
}

/**
 * The task's `statusMessage` while it works: its latest progress (the progress's message, else
 * progress/total) or log line; undefined for any other event.
 */
export function statusLineOf({ type, payload }: TaskEventBody): string | undefined {
  if (type === TASK_EVENT_TYPES.progress) {
    if (typeof payload.message === 'string') return payload.message;
    if (typeof payload.progress !== 'number') return undefined;
    return typeof payload.total === 'number' ? `${payload.progress}/${payload.total}` : String(payload.progress);
  }
  if (type === TASK_EVENT_TYPES.log) return typeof payload.data === 'string' ? payload.data : JSON.stringify(payload.data);
  return undefined;
}

/** An event's type and its payload as JSON: what is stored, and what a stream sends, without parsing it again. */
export interface EncodedEventBody {
  readonly type: string;
  readonly payloadJson: string;
}

export interface EncodedEvent extends EncodedEventBody {
  readonly seq: number;
}

export const encodeBody = ({ type, payload }: TaskEventBody): EncodedEventBody => ({ type, payloadJson: JSON.stringify(payload) });

/** `event` encoded, or, when its payload is over `maxBytes` of JSON, the note that stands in for it. */
export function boundedEvent(event: TaskEventBody, maxBytes: number): EncodedEventBody {
  const encoded = encodeBody(event);
  const bytes = utf8Length(encoded.payloadJson);
  if (bytes <= maxBytes) return encoded;
  return encodeBody({ type: TASK_EVENT_TYPES.omitted, payload: { type: event.type, reason: 'too_large', bytes, maxBytes } });
}

/** A notification as JSON text, and its size in UTF-8 bytes. */
export interface EncodedNotification {
  readonly text: string;
  readonly bytes: number;
}

/**
 * `eventNotification` as JSON text, from the payload's JSON as stored: the same bytes
 * `JSON.stringify` gives (a table test holds them equal), with no parse and no second stringify
 * of the payload — a stream sends every event this way. Its UTF-8 size is counted from its
 * parts, each short and flat: the text is a rope of them, which a scan would first copy whole
 * (~1 µs an event, 5 ms of T3's 5,000; bench/README.md). Only the parts can hold non-ASCII.
 */
export function encodeEventNotification(taskId: string, { seq, type, payloadJson }: EncodedEvent): EncodedNotification {
  const id = JSON.stringify(taskId);
  const typeJson = JSON.stringify(type);
  const text =
    `{"jsonrpc":"2.0","method":"notifications/tasks/event","params":{"seq":${seq},"taskId":${id},"type":${typeJson},` +
    `"payload":${payloadJson},"_meta":{"${RELATED_TASK}":{"taskId":${id}}}}}`;
  return { text, bytes: text.length + 2 * beyondOneByte(id) + beyondOneByte(typeJson) + beyondOneByte(payloadJson) };
}

/** The UTF-8 bytes a text takes beyond one per UTF-16 unit. */
const beyondOneByte = (text: string) => utf8Length(text) - text.length;

/** The notification that carries `event` on a `tasks/stream`: "MUST include io.modelcontextprotocol/related-task" with the same task id. */
export function eventNotification(taskId: string, event: TaskEvent) {
  return {
    jsonrpc: '2.0' as const,
    method: 'notifications/tasks/event' as const,
    params: { seq: event.seq, taskId, type: event.type, payload: event.payload, _meta: { [RELATED_TASK]: { taskId } } },
  };
}
