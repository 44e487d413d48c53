/**
 * The task and its events as this client hands them to its callers: `DetailedTask`, a task's
 * state as `tasks/get` answers it, and `TaskStreamEvent`, one event of its `tasks/stream`. Plain
 * types, apart from task-events.ts (which reads both out of untrusted answers) so that errors.ts,
 * whose TaskFailedError and TaskCancelledError carry the task, can name it without importing the
 * readers, which import errors.ts's reasons: the types sit below both, and no import goes round.
 */
import type { TaskError, TaskStatus } from '../core/task.ts';

/** One event of a task's stream, as it came (its payload unread). */
export interface TaskStreamEvent {
  /** The event's place in the task's timeline: 0 for its first, each next one +1. */
  readonly seq: number;
  readonly taskId: string;
  /** A namespaced type: this server's are `mcp-edge-sessions.*`; a tool may emit its own (`com.example.partial`). */
  readonly type: string;
  /** Untrusted: read it with readTaskEvent, or check it before use; never run it. */
  readonly payload: Readonly<Record<string, unknown>>;
  readonly _meta?: Readonly<Record<string, unknown>>;
}

/** The task as `tasks/get` answers it (the Tasks extension's `DetailedTask`), the fields this client reads. */
export interface DetailedTask {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  readonly createdAt?: string;
  readonly lastUpdatedAt?: string;
  readonly ttlMs?: number;
  readonly pollIntervalMs?: number;
  /** `input_required`: the questions still open, by key. */
  readonly inputRequests?: Readonly<Record<string, unknown>>;
  /** `completed`: the tool's result (a `CallToolResult`), untrusted as any result is. */
  readonly result?: Readonly<Record<string, unknown>>;
  /** `failed`: why, as a JSON-RPC error. */
  readonly error?: TaskError;
}
