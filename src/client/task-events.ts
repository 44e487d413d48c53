/**
 * What a `tasks/stream` answer (SEP-2694, Resumable Task Event Streams, draft) and a `tasks/get`
 * answer carry, read as untrusted data: "Receivers SHOULD treat event payloads as untrusted
 * data". Every message is checked for the shape the follower relies on before anything of it is
 * delivered; payloads are passed on as JSON objects, read further only by `readTaskEvent`, which
 * knows this server's own event types. Pure: the follower (task-follower.ts) acts on the verdicts.
 * The shapes it hands on, the task and its events, are declared below it in task-types.ts.
 */
import { TASK_EVENT_TYPES } from '../core/task-events.ts';
import { isTerminal, type TaskError, type TaskStatus } from '../core/task.ts';
import type { TaskProtocolReason } from './errors.ts';
import type { ErrorObject } from './http.ts';
import type { DetailedTask, TaskStreamEvent } from './task-types.ts';

/** "Task events related to a task MUST include io.modelcontextprotocol/related-task with the same taskId." */
export const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

/** Not what the follower may act on: why, for its TaskProtocolError. */
export interface Invalid {
  readonly kind: 'invalid';
  readonly reason: TaskProtocolReason;
  readonly detail: string;
}

export type StreamMessage =
  | { readonly kind: 'event'; readonly event: TaskStreamEvent }
  /** The response to the stream's request: the stream ended normally. */
  | { readonly kind: 'end' }
  | { readonly kind: 'error'; readonly error: ErrorObject }
  /** Something the follower need not read (a progress notification for the request itself). */
  | { readonly kind: 'other' }
  | Invalid;

export type TaskAnswer =
  | { readonly kind: 'task'; readonly task: DetailedTask }
  | { readonly kind: 'error'; readonly error: ErrorObject }
  | Invalid;

const STATUSES: readonly TaskStatus[] = ['working', 'input_required', 'completed', 'failed', 'cancelled'];

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isSeq = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const invalid = (reason: TaskProtocolReason, detail: string): Invalid => ({ kind: 'invalid', reason, detail });
const brief = (value: unknown): string => (JSON.stringify(value) ?? String(value)).slice(0, 200);

/** One message of the answer to `tasks/stream` request `requestId` for `taskId`. */
export function readStreamMessage(value: unknown, requestId: number, taskId: string): StreamMessage {
  if (!isObject(value) || value.jsonrpc !== '2.0') return invalid('malformed_message', `not a JSON-RPC message: ${brief(value)}`);
  if (typeof value.method === 'string') {
    if (value.method !== 'notifications/tasks/event' || 'id' in value) return { kind: 'other' };
    return readEvent(value.params, taskId);
  }
  const answer = readResponse(value, requestId);
  if (answer.kind !== 'result') return answer;
  // 2026-07-28 results name their kind; the stream's is an empty one ("TaskStreamResult = EmptyResult").
  const { resultType } = answer.result;
  if (resultType !== undefined && resultType !== 'complete') {
    return invalid('unexpected_response', `the stream ended with a result of type ${brief(resultType)}`);
  }
  return { kind: 'end' };
}

function readEvent(params: unknown, taskId: string): StreamMessage {
  if (!isObject(params)) return invalid('malformed_event', 'an event without params');
  const { seq, type, payload, _meta } = params;
  if (!isSeq(seq)) return invalid('malformed_event', `seq ${brief(seq)} is not a non-negative integer`);
  if (params.taskId !== taskId) return invalid('wrong_task', `event ${seq} is of task ${brief(params.taskId)}`);
  if (typeof type !== 'string' || type === '') return invalid('malformed_event', `event ${seq} has no type`);
  // "Event payloads MUST be JSON objects."
  if (!isObject(payload)) return invalid('malformed_event', `event ${seq}'s payload is not a JSON object`);
  // "The metadata task ID MUST match params.taskId."
  const related = isObject(_meta) ? _meta[RELATED_TASK_META] : undefined;
  if (!isObject(_meta) || !isObject(related)) return invalid('malformed_event', `event ${seq} has no ${RELATED_TASK_META} metadata`);
  if (related.taskId !== taskId) return invalid('wrong_task', `event ${seq}'s ${RELATED_TASK_META} names task ${brief(related.taskId)}`);
  return { kind: 'event', event: { seq, taskId, type, payload, _meta } };
}

/** The answer to `tasks/get` request `requestId` for `taskId`. */
export function readTaskAnswer(value: unknown, requestId: number, taskId: string): TaskAnswer {
  if (!isObject(value) || value.jsonrpc !== '2.0') return invalid('malformed_task', `not a JSON-RPC message: ${brief(value)}`);
  const answer = readResponse(value, requestId);
  if (answer.kind !== 'result') return answer.kind === 'invalid' ? { ...answer, reason: 'malformed_task' } : answer;
  const task = readTask(answer.result);
  if (typeof task === 'string') return invalid('malformed_task', task);
  if (task.taskId !== taskId) return invalid('wrong_task', `tasks/get answered with task ${brief(task.taskId)}`);
  return { kind: 'task', task };
}

function readResponse(
  value: Record<string, unknown>,
  requestId: number,
): { kind: 'result'; result: Record<string, unknown> } | { kind: 'error'; error: ErrorObject } | Invalid {
  if (value.id !== requestId) return invalid('unexpected_response', `a response to ${brief(value.id)}, not to request ${requestId}`);
  if (isObject(value.error)) return { kind: 'error', error: value.error as ErrorObject };
  if (isObject(value.result)) return { kind: 'result', result: value.result };
  return invalid('unexpected_response', `a response with neither result nor error: ${brief(value)}`);
}

/**
 * The DetailedTask in `result` (a `tasks/get` answer, or the `CreateTaskResult` a `tools/call`
 * was answered with: the same fields), or what is wrong with it. Fields it has of the wrong type
 * are refused, not dropped.
 */
export function readTask(result: Record<string, unknown>): DetailedTask | string {
  const { taskId, status } = result;
  if (typeof taskId !== 'string') return 'the task has no taskId';
  if (!STATUSES.includes(status as TaskStatus)) return `the task's status ${brief(status)} is not one of ${STATUSES.join(', ')}`;
  const task: Record<string, unknown> = { taskId, status };
  const fields: Record<string, (value: unknown) => boolean> = {
    statusMessage: (value) => typeof value === 'string',
    createdAt: (value) => typeof value === 'string',
    lastUpdatedAt: (value) => typeof value === 'string',
    ttlMs: (value) => typeof value === 'number',
    pollIntervalMs: (value) => typeof value === 'number',
    inputRequests: isObject,
    result: isObject,
    error: (value) => isObject(value) && typeof value.code === 'number' && typeof value.message === 'string',
  };
  for (const [name, fits] of Object.entries(fields)) {
    const value = result[name];
    if (value === undefined) continue;
    if (!fits(value)) return `the task's ${name} is malformed: ${brief(value)}`;
    task[name] = value;
  }
  return task as unknown as DetailedTask;
}

/** This server's event types, their payloads checked; see docs/tasks.md. */
export type KnownTaskEvent =
  | {
      readonly kind: 'status';
      readonly status: TaskStatus;
      readonly statusMessage?: string;
      readonly inputRequests?: Readonly<Record<string, unknown>>;
      readonly error?: TaskError;
    }
  | { readonly kind: 'progress'; readonly progress: number; readonly total?: number; readonly message?: string }
  | { readonly kind: 'log'; readonly level: string; readonly logger?: string; readonly data: unknown }
  /** An event the server dropped as too large: its type and size stand in for it, so nothing is missing silently. */
  | { readonly kind: 'omitted'; readonly type: string; readonly reason: string };

/**
 * `event` read as one of this server's own types; undefined for any other type (a tool's own,
 * another implementation's), or for a payload that does not have the type's shape.
 */
export function readTaskEvent({ type, payload: p }: TaskStreamEvent): KnownTaskEvent | undefined {
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const number = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
  const optional = <T>(name: string, value: T | undefined) => (value === undefined ? {} : { [name]: value });
  switch (type) {
    case TASK_EVENT_TYPES.status: {
      if (!STATUSES.includes(p.status as TaskStatus)) return undefined;
      const error = isObject(p.error) && typeof p.error.code === 'number' && typeof p.error.message === 'string' ? p.error : undefined;
      return {
        kind: 'status',
        status: p.status as TaskStatus,
        ...optional('statusMessage', text(p.statusMessage)),
        ...optional('inputRequests', isObject(p.inputRequests) ? p.inputRequests : undefined),
        ...optional('error', error as TaskError | undefined),
      };
    }
    case TASK_EVENT_TYPES.progress: {
      const progress = number(p.progress);
      if (progress === undefined) return undefined;
      return { kind: 'progress', progress, ...optional('total', number(p.total)), ...optional('message', text(p.message)) };
    }
    case TASK_EVENT_TYPES.log: {
      const level = text(p.level);
      if (level === undefined || !('data' in p)) return undefined;
      return { kind: 'log', level, ...optional('logger', text(p.logger)), data: p.data };
    }
    case TASK_EVENT_TYPES.omitted: {
      const [omitted, reason] = [text(p.type), text(p.reason)];
      return omitted === undefined || reason === undefined ? undefined : { kind: 'omitted', type: omitted, reason };
    }
    default:
      return undefined;
  }
}

/** Whether `event` is this server's status event for a terminal status: the stream's last event. */
export function isTerminalEvent(event: TaskStreamEvent): boolean {
  const known = readTaskEvent(event);
  return known?.kind === 'status' && isTerminal(known.status);
}
