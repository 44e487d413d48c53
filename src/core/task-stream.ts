/**
 * `tasks/stream` (SEP-2694, Resumable Task Event Streams, draft): a task's timeline as events
 * numbered `seq` 0, 1, 2, … per task, and the decision of where a stream starts — the task's
 * counterpart of the sessions' reconnect table (resume.ts). The question is the same: not "is
 * this a cursor?" but "can this stream continue right after it, with nothing skipped?"; when
 * it cannot, a typed refusal, never a silent start elsewhere.
 *
 * Pure: the task object reads what it retains and applies the verdict in the same turn.
 */
import type { JsonRpcId } from './errors.ts';
import { JsonRpcCode } from './wire.ts';

/**
 * Our event types' namespace. "Implementation-defined event types MUST use a vendor-specific
 * prefix" and unprefixed ones "MUST NOT be emitted by implementations unless defined by a
 * future MCP standard": every type this server emits begins with it (the package's own name,
 * which this project controls).
 */
export const TASK_EVENT_PREFIX = 'mcp-edge-sessions.';

/** What a task's log holds when a stream asks to start (the task object reads it). */
export interface TaskTimeline {
  /** The seq the next event will take: the number of events the task ever had (0: none yet). */
  readonly nextSeq: number;
  /** The lowest seq still retained; `nextSeq` when none is (none yet, or all dropped). */
  readonly earliestSeq: number;
  /** Whether the task reached a terminal status (its final event, if any, is in the log). */
  readonly terminal: boolean;
}

export type StreamVerdict =
  /** Send every retained event from `fromSeq` on, then live ones; end with the empty result after the terminal event. */
  | { readonly kind: 'stream'; readonly fromSeq: number }
  /** Nothing after the cursor and nothing will come: the empty result at once, no event. */
  | { readonly kind: 'complete' }
  /** The events right after the cursor are no longer retained (`events_gone`). */
  | { readonly kind: 'gone'; readonly earliestSeq: number }
  /** `after` names an event the task never had. */
  | { readonly kind: 'invalid'; readonly message: string };

/**
 * Where a stream with cursor `after` (undefined: omitted) starts.
 * - Omitted: "the receiver MUST start at the earliest event it still retains for the task,
 *   then continue with live events"; with none retained, live events for a task that goes
 *   on, and for a terminal one "MUST return TaskStreamResult immediately".
 * - Given: "Deliver retained events with seq greater than the supplied value, then continue
 *   with live events", or "Return an events_gone error if events after the supplied sequence
 *   number are no longer retained"; with nothing after it on a terminal task, "MUST return
 *   TaskStreamResult immediately with no event notifications".
 * - A cursor past the last event was never issued: refused as invalid params (the SEP leaves
 *   it open; accepting it would wait for events the client claims to have seen).
 */
export function decideTaskStream(after: number | undefined, timeline: TaskTimeline): StreamVerdict {
  const { nextSeq, earliestSeq, terminal } = timeline;
  if (after === undefined) {
    if (earliestSeq < nextSeq) return { kind: 'stream', fromSeq: earliestSeq };
    return terminal ? { kind: 'complete' } : { kind: 'stream', fromSeq: nextSeq };
  }
  if (after >= nextSeq) {
    return {
      kind: 'invalid',
      message:
        nextSeq === 0 ? `after ${after}: the task has no events yet` : `after ${after} is beyond the task's last event (${nextSeq - 1})`,
    };
  }
  // "Receivers MUST NOT silently skip retained events after the requested cursor."
  if (after + 1 < earliestSeq) return { kind: 'gone', earliestSeq };
  if (after + 1 === nextSeq && terminal) return { kind: 'complete' };
  return { kind: 'stream', fromSeq: after + 1 };
}

/** `tasks/stream` params as the SEP defines them. */
export interface TaskStreamParams {
  readonly taskId: string;
  readonly after: number | undefined;
}

/**
 * The params of a `tasks/stream` request, or why they are invalid: "Receivers MUST return
 * -32602 (Invalid params) if after is negative, not an integer, or otherwise not a valid
 * sequence number value."
 */
export function parseTaskStreamParams(params: unknown): TaskStreamParams | { readonly invalid: string } {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return { invalid: 'params must be an object' };
  const { taskId, after } = params as { taskId?: unknown; after?: unknown };
  if (typeof taskId !== 'string') return { invalid: 'taskId must be a string' };
  if (after === undefined) return { taskId, after: undefined };
  if (typeof after !== 'number' || !Number.isSafeInteger(after) || after < 0) {
    return { invalid: 'after must be a non-negative integer: the seq of the last event processed' };
  }
  return { taskId, after };
}

/**
 * The `events_gone` error. The SEP's example code, -32010, is in the implementation-defined
 * range, where receivers "must not assign cross-implementation semantics": clients key on
 * `data.reason`, which this carries with the task and the oldest event still retained.
 */
export function eventsGoneError(id: JsonRpcId, taskId: string, earliestSeq: number) {
  return {
    jsonrpc: '2.0' as const,
    id,
    error: {
      code: EVENTS_GONE_CODE,
      message: 'Task events are no longer available',
      data: { reason: 'events_gone' as const, taskId, earliestSeq },
    },
  };
}

export const EVENTS_GONE_CODE = -32010;

/** The invalid-params error of a `tasks/stream` request. */
export function invalidStreamParams(id: JsonRpcId, message: string) {
  return { jsonrpc: '2.0' as const, id, error: { code: JsonRpcCode.InvalidParams, message: `Invalid params: ${message}` } };
}
