/**
 * The typed errors of the fork-safe client transport. Each names what the client can no longer
 * vouch for, so a caller can tell "the call's result may be lost" from "the server answered
 * with a stream that is not the one the call was on" without parsing messages.
 *
 * A call that fails with one of these rejects with it (the transport's `send` rejects, and the
 * SDK's `Client` hands that rejection to the caller); the transport's `onerror` sees it too.
 */
import type { TaskError } from '../core/task.ts';
import type { ForkReason } from './continuation.ts';
import type { DetailedTask } from './task-types.ts';

export type RequestId = string | number;

export class ForkSafeTransportError extends Error {
  override readonly name: string = 'ForkSafeTransportError';
}

/**
 * A resumed response is not the continuation of the cursor it answered: another stream, another
 * epoch, a gap or a rewind, or not flagged as resumed. Nothing of it was delivered.
 */
export class ForkDetectedError extends ForkSafeTransportError {
  override readonly name = 'ForkDetectedError';

  constructor(
    readonly reason: ForkReason,
    /** The cursor the client asked to continue from. */
    readonly cursor: string | undefined,
    detail: string,
  ) {
    super(`the server's stream does not continue ${cursor ?? 'the new stream'}: ${detail}`);
  }
}

/**
 * A connection carried nothing, not even a heartbeat, for `idleMs` (the transport's and
 * `followTask`'s `idleTimeoutMs`): the client took it as dead, and resumed. It is the cause of
 * that break, not a failure of the call: a connection kept that long counts as progress.
 */
export class IdleConnectionError extends ForkSafeTransportError {
  override readonly name = 'IdleConnectionError';

  constructor(readonly idleMs: number) {
    super(`the connection carried nothing for ${idleMs} ms`);
  }
}

/**
 * The server refused to continue the stream: `GET` + `Last-Event-ID` answered with a typed
 * refusal (`unknown_stream`, `cursor_ahead`, `stream_superseded`, `events_pruned`,
 * `malformed_cursor`), so what followed the cursor, the result included, is lost.
 */
export class StreamRefusedError extends ForkSafeTransportError {
  override readonly name = 'StreamRefusedError';

  constructor(
    /** `error.data.reason` of the refusal; `undefined` when the server gave none. */
    readonly reason: string | undefined,
    readonly status: number,
    readonly cursor: string,
    message: string,
  ) {
    super(`resuming from ${cursor} was refused (${status} ${reason ?? 'no reason'}): ${message}`);
  }
}

/**
 * The session is gone (404): the listed requests were still waiting for their answers and will
 * get none. Connecting the `Client` again (after `close()`) starts a new session.
 */
export class SessionLostError extends ForkSafeTransportError {
  override readonly name = 'SessionLostError';

  constructor(
    readonly sessionId: string | undefined,
    /** The requests that were waiting for an answer in the lost session. */
    readonly requestIds: readonly RequestId[],
  ) {
    super(
      `session ${sessionId ?? '(none)'} is gone` +
        (requestIds.length > 0 ? `; lost requests: ${requestIds.map((id) => JSON.stringify(id)).join(', ')}` : ''),
    );
  }
}

/** The connection kept breaking without any progress, past the configured number of attempts. */
export class ReconnectExhaustedError extends ForkSafeTransportError {
  override readonly name = 'ReconnectExhaustedError';

  constructor(
    readonly attempts: number,
    /** The last complete event id received, from which a later resume could still be tried. */
    readonly cursor: string | undefined,
    cause?: unknown,
  ) {
    super(`gave up after ${attempts} reconnection attempts without progress (cursor ${cursor ?? 'none'})`, { cause });
  }
}

/**
 * A request whose POST broke before any event, on a server that does not record request ids
 * (no `Mcp-Session-Epoch`): sending it again could run it twice, so it is not re-sent. It may or
 * may not have run.
 */
export class RequestLostError extends ForkSafeTransportError {
  override readonly name = 'RequestLostError';

  constructor(
    readonly requestId: RequestId,
    cause?: unknown,
  ) {
    super(`request ${JSON.stringify(requestId)} was cut before any event, and this server cannot tell a re-send from a new call`, {
      cause,
    });
  }
}

/**
 * The request's stream ended without its answer: the server cancelled the request (another
 * client of the session sent `notifications/cancelled` for it), and a cancelled request gets no
 * response. The tool may have partly run; it is not run again.
 */
export class RequestCancelledError extends ForkSafeTransportError {
  override readonly name = 'RequestCancelledError';

  constructor(
    readonly requestIds: readonly RequestId[],
    /** Where the stream was resumed from (the last event received, or its start): its final event. */
    readonly cursor: string,
  ) {
    super(
      `the stream of request ${requestIds.map((id) => JSON.stringify(id)).join(', ')} ended at ${cursor} without an answer: it was cancelled`,
    );
  }
}

/** An HTTP answer the transport has no way to recover from (a 400, 403, 415, …). */
export class HttpStatusError extends ForkSafeTransportError {
  override readonly name = 'HttpStatusError';

  constructor(
    readonly status: number,
    /** The JSON-RPC error of the body, when it had one. */
    readonly error: { readonly code?: number; readonly message?: string; readonly data?: unknown } | undefined,
    readonly text: string,
  ) {
    super(`the server answered ${status}${error?.message === undefined ? '' : `: ${error.message}`}`);
  }
}

// ---- Following a task's events (task-follower.ts; its requests: task-opener.ts) ------------

/** The task methods the follower sends. */
export type TaskMethod = 'tasks/stream' | 'tasks/get';

/**
 * The task's events right after the cursor are no longer retained (`events_gone`): the server
 * "MUST NOT silently skip retained events", and neither does the follower. The caller decides:
 * follow again with `after: earliestSeq - 1` (from the oldest event still retained), without
 * `after` (everything retained), or report the gap.
 */
export class TaskEventsGoneError extends ForkSafeTransportError {
  override readonly name = 'TaskEventsGoneError';

  constructor(
    readonly taskId: string,
    /** The oldest event the server still retains (`error.data.earliestSeq`); undefined when it did not say. */
    readonly earliestSeq: number | undefined,
    /** The cursor that was refused. */
    readonly after: number | undefined,
  ) {
    super(
      `the events of task ${taskId} after ${after ?? 'its start'} are no longer retained` +
        (earliestSeq === undefined ? '' : ` (the earliest retained is ${earliestSeq})`),
    );
  }
}

/**
 * A task method answered with a JSON-RPC error the follower cannot recover from: `-32602` for
 * a task unknown to this principal (never created, expired, another's) or a cursor it never
 * issued, or any other refusal that is not worth another attempt.
 */
export class TaskRefusedError extends ForkSafeTransportError {
  override readonly name = 'TaskRefusedError';

  constructor(
    readonly method: TaskMethod,
    readonly taskId: string,
    /** The HTTP status the error came with (200 for one in the body of a successful answer). */
    readonly status: number,
    readonly code: number | undefined,
    /** `error.data.reason`, when the server gave one. */
    readonly reason: string | undefined,
    readonly detail: string,
  ) {
    super(`${method} for task ${taskId} was refused (${code ?? status}${reason === undefined ? '' : ` ${reason}`}): ${detail}`);
  }
}

/** `-32601` (Method not found): the server does not serve this task method (for `tasks/stream`, no task event streams). */
export class TaskMethodNotFoundError extends ForkSafeTransportError {
  override readonly name = 'TaskMethodNotFoundError';

  constructor(
    readonly method: TaskMethod,
    readonly taskId: string,
  ) {
    super(`the server does not support ${method} (asked for task ${taskId})`);
  }
}

/**
 * What the server sent breaks the task stream's contract, so nothing from the offending
 * message on is delivered: `gap` (a seq skipped: "each subsequent event ... MUST increment by
 * exactly 1"), `wrong_task` (an event or task for another task id, in its params or its
 * related-task metadata), `malformed_event`, `malformed_message` (not JSON-RPC),
 * `unexpected_response` (an answer to another request, or of another kind), `malformed_task`
 * (a `tasks/get` answer without a readable task).
 */
export type TaskProtocolReason = 'gap' | 'wrong_task' | 'malformed_event' | 'malformed_message' | 'unexpected_response' | 'malformed_task';

export class TaskProtocolError extends ForkSafeTransportError {
  override readonly name = 'TaskProtocolError';

  constructor(
    readonly taskId: string,
    readonly reason: TaskProtocolReason,
    /** The last event processed before it; undefined if none was. */
    readonly lastSeq: number | undefined,
    readonly detail: string,
  ) {
    super(`task ${taskId}: ${reason} after ${lastSeq ?? 'no event'}: ${detail}`);
  }
}

/**
 * The caller's signal aborted the follow: its stream was closed (over HTTP, the task stream's
 * cancellation), the task itself left running. `lastSeq` is where a later follow can resume.
 */
export class TaskFollowCancelledError extends ForkSafeTransportError {
  override readonly name = 'TaskFollowCancelledError';

  constructor(
    readonly taskId: string,
    /** The last event fully processed; undefined if none was. */
    readonly lastSeq: number | undefined,
    /** The signal's reason. */
    cause: unknown,
  ) {
    super(`following task ${taskId} was cancelled after ${lastSeq ?? 'no event'}`, { cause });
  }
}

// ---- Calling a tool that may become a task (task-call.ts) ----------------------------------

/**
 * The task ended `failed`, with `error`, the JSON-RPC error it inlined: the tool's own (a
 * ProtocolError it threw) or one no tool chose (docs/tasks.md, *Failures no tool chose*), told
 * apart by `reason`. A tool that returned `isError: true` ended `completed`: its result, not this.
 */
export class TaskFailedError extends ForkSafeTransportError {
  override readonly name: string = 'TaskFailedError';
  readonly taskId: string;
  /** The task's `error`; undefined when the server gave none. */
  readonly error: TaskError | undefined;
  /** `error.data.reason`, when it has one (`task_interrupted`, `no_answer`, …). */
  readonly reason: string | undefined;

  constructor(
    /** The task's final state, from `tasks/get`. */
    readonly task: DetailedTask,
    /** The last event processed: where a later follow would resume. */
    readonly lastSeq: number | undefined,
  ) {
    super(`task ${task.taskId} failed${task.error === undefined ? '' : ` (${task.error.code}): ${task.error.message}`}`);
    this.taskId = task.taskId;
    this.error = task.error;
    const data = task.error?.data;
    const reason = typeof data === 'object' && data !== null ? (data as { reason?: unknown }).reason : undefined;
    this.reason = typeof reason === 'string' ? reason : undefined;
  }
}

/**
 * The task failed `task_interrupted`: the instance running it ended (a restart, a deploy, a
 * crash) before the tool did. The server does not run it again, and neither does the client:
 * what the tool did before is done, the rest is not. Calling the tool again is a new call.
 */
export class TaskInterruptedError extends TaskFailedError {
  override readonly name: string = 'TaskInterruptedError';
}

/** The task ended `cancelled` (`tasks/cancel`, from this client or any other of its principal). */
export class TaskCancelledError extends ForkSafeTransportError {
  override readonly name = 'TaskCancelledError';
  readonly taskId: string;

  constructor(
    readonly task: DetailedTask,
    readonly lastSeq: number | undefined,
  ) {
    super(`task ${task.taskId} was cancelled`);
    this.taskId = task.taskId;
  }
}

/**
 * The `tools/call` ended without an answer this client can act on: the connection broke, the
 * request timed out or was aborted, or the answer was cut or unreadable. The server may have run
 * the tool, or made it a task whose id never arrived; the call is not re-sent, since a second
 * `tools/call` is a second run of the tool. Whether to call it again is the caller's decision.
 */
export class ToolCallLostError extends ForkSafeTransportError {
  override readonly name = 'ToolCallLostError';

  constructor(
    readonly toolName: string,
    cause: unknown,
  ) {
    super(
      `tools/call ${toolName} ended without a usable answer: it may have run, or become a task whose id is unknown; it is not re-sent`,
      {
        cause,
      },
    );
  }
}
