/**
 * callToolAsTask: a tool called through the SDK's `Client`, which the server may answer with a
 * task (the Tasks extension, 2026-07-28), followed to its end.
 *
 * The call goes through `client.callTool`, so it is the Client's own request: its `_meta`
 * envelope (and with it the extension the Client declared), its `Mcp-*` headers, its
 * `input_required` rounds, its timeout. The task answer the SDK cannot read reaches the Client
 * as a rejection that carries it (task-answer.ts); from there the task is followed with
 * `followTask` (`tasks/stream`, resumed after the last event processed, then `tasks/get`), and
 * its end becomes the result or a typed error.
 *
 * One `tools/call`, never two. Once the server has answered with a task, the task id is the
 * call's only handle: every break from there on is a read (`tasks/stream` with `after`,
 * `tasks/get`), safe to repeat. A `tools/call` that breaks before its answer cannot be told from
 * one the server ran (or made a task of) and whose answer was lost, so it is not re-sent either:
 * it rejects with ToolCallLostError.
 */
import { reconnectOptions } from './backoff.ts';
import { TaskCancelledError, TaskFailedError, TaskInterruptedError, TaskProtocolError, ToolCallLostError } from './errors.ts';
import { idleLimit } from './idle-limit.ts';
import { catchTaskAnswers, taskOfRejection, type MessageSource } from './task-answer.ts';
import type { DetailedTask } from './task-types.ts';
import { followTask, type FollowTaskOptions } from './task-follower.ts';

/** A tool's result (`CallToolResult`): an inline answer's, or a completed task's. */
export interface ToolResult {
  readonly content?: readonly unknown[];
  readonly structuredContent?: unknown;
  /** The tool ran and reported a failure: a result still (a task that returns it ends `completed`). */
  readonly isError?: boolean;
  readonly _meta?: Readonly<Record<string, unknown>>;
  readonly [field: string]: unknown;
}

/** `tools/call`'s params. */
export interface ToolCallParams {
  readonly name: string;
  readonly arguments?: Readonly<Record<string, unknown>>;
  readonly _meta?: Readonly<Record<string, unknown>>;
}

/** Options of the SDK's `callTool` that apply to the `tools/call` request itself. */
export interface ToolCallRequestOptions {
  /** The SDK's per-request timeout (its default: 60 s); past it, the call rejects with ToolCallLostError. */
  readonly timeout?: number;
  readonly maxTotalTimeout?: number;
  readonly resetTimeoutOnProgress?: boolean;
  /** Progress of an inline answer. A task's progress comes as its events (`onEvent`). */
  readonly onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/**
 * The SDK's `Client` (`@modelcontextprotocol/client`), the members used, declared structurally
 * so the client entry names no SDK package (test/types/sdk-transport.ts checks the SDK's fits).
 */
export interface TaskCallingClient {
  callTool(params: ToolCallParams, options?: ToolCallRequestOptions & { signal?: AbortSignal }): Promise<ToolResult>;
  readonly transport?: MessageSource | undefined;
}

export interface CallToolAsTaskOptions extends Omit<FollowTaskOptions, 'taskId' | 'after'> {
  /**
   * Called once, with the task as the server created it, before it is followed. Keep its
   * `taskId` (and each event's `seq`, from `onEvent`) where a restart can find it: with them,
   * `followTask({ url, taskId, after })` picks the task up again, where calling the tool again
   * would run it again. A throw ends the call with that error (the task goes on).
   */
  readonly onTask?: (task: DetailedTask) => void | Promise<void>;
  /** Passed to the SDK's `callTool` (its `signal` is this call's `signal`). */
  readonly call?: ToolCallRequestOptions;
}

export interface ToolCallOutcome {
  /** The tool's result: the inline answer's, or the completed task's. */
  readonly result: ToolResult;
  /** The task the server made of the call, in its final state (`completed`); undefined when it answered inline. */
  readonly task: DetailedTask | undefined;
  /** The last task event processed; undefined when answered inline (or no event came). */
  readonly lastSeq: number | undefined;
}

/**
 * Calls tool `params.name` through `client` (the SDK's Client, connected) so that the server may
 * make the call a task, and follows the task to its end.
 *
 * ```ts
 * import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
 * import { callToolAsTask, TASKS_EXTENSION } from 'mcp-edge-sessions/client';
 *
 * const url = 'https://mcp.example.com/mcp';
 * // The server makes a task only for a client that declares the extension, in 2026-07-28.
 * const client = new Client(
 *   { name: 'my-app', version: '1.0.0' },
 *   { capabilities: { extensions: { [TASKS_EXTENSION]: {} } }, versionNegotiation: { mode: 'auto' } },
 * );
 * await client.connect(new StreamableHTTPClientTransport(new URL(url)));
 * const { result, task } = await callToolAsTask(client, { name: 'report', arguments: { month: '2026-11' } }, {
 *   url, // where the task is followed (tasks/stream, tasks/get)
 *   onTask: (task) => saveTaskId(task.taskId),
 * });
 * ```
 *
 * Resolves with the result of a task that ended `completed` (an `isError` result included) or
 * of a call the server answered inline (no task: the tool never makes one, the Client did not
 * declare the extension, a 2025 session). Rejects with TaskFailedError (TaskInterruptedError
 * when its instance ended), TaskCancelledError, ToolCallLostError (the `tools/call` broke
 * before its answer: not re-sent), what `followTask` rejects with (the task goes on: `onTask`
 * gave its id), or what the SDK's `callTool` rejects with when the server refused the call (a
 * JSON-RPC error, a 4xx: nothing ran).
 */
export async function callToolAsTask(
  client: TaskCallingClient,
  params: ToolCallParams,
  options: CallToolAsTaskOptions,
): Promise<ToolCallOutcome> {
  const { onTask, call, ...follow } = options;
  // Checked before the call: an option that would fail the follow must not fail it after the task exists.
  new URL(follow.url);
  reconnectOptions(follow.reconnect);
  idleLimit(follow.idleTimeoutMs, true);
  follow.signal?.throwIfAborted();
  const transport = client.transport;
  if (transport === undefined) throw new TypeError('the Client is not connected: connect it first');
  catchTaskAnswers(transport);

  let result: ToolResult;
  try {
    result = await client.callTool(params, { ...call, ...(follow.signal !== undefined && { signal: follow.signal }) });
  } catch (error) {
    const answer = taskOfRejection(error);
    if (answer === undefined) throw refusedOrLost(params.name, error);
    if ('problem' in answer) throw new TaskProtocolError(answer.taskId, 'malformed_task', undefined, answer.problem);
    await onTask?.(answer.task);
    const { task, lastSeq } = await followTask({ ...follow, taskId: answer.task.taskId });
    return { result: resultOf(task, lastSeq), task, lastSeq };
  }
  return { result, task: undefined, lastSeq: undefined };
}

/** A completed task's result; any other end as its typed error. */
function resultOf(task: DetailedTask, lastSeq: number | undefined): ToolResult {
  switch (task.status) {
    case 'completed': {
      const { result } = task;
      // Untrusted as any result: the fields a caller reads of a CallToolResult must have their types.
      if (result === undefined) throw new TaskProtocolError(task.taskId, 'malformed_task', lastSeq, 'a completed task without its result');
      if (result.content !== undefined && !Array.isArray(result.content))
        throw new TaskProtocolError(task.taskId, 'malformed_task', lastSeq, "the result's content is not an array");
      if (result.isError !== undefined && typeof result.isError !== 'boolean')
        throw new TaskProtocolError(task.taskId, 'malformed_task', lastSeq, "the result's isError is not a boolean");
      return result as ToolResult;
    }
    case 'failed': {
      const failed = new TaskFailedError(task, lastSeq);
      throw failed.reason === 'task_interrupted' ? new TaskInterruptedError(task, lastSeq) : failed;
    }
    case 'cancelled':
      throw new TaskCancelledError(task, lastSeq);
    default:
      // followTask returns only once the task has ended.
      throw new TaskProtocolError(task.taskId, 'malformed_task', lastSeq, `the follow ended with the task ${task.status}`);
  }
}

/**
 * SDK errors raised before anything was sent, or after answers that made no task (rounds of
 * `input_required` past the Client's limit): the call is known not to be a task.
 */
const NOT_LOST = new Set([
  'NOT_CONNECTED',
  'CAPABILITY_NOT_SUPPORTED',
  'METHOD_NOT_SUPPORTED_BY_PROTOCOL_VERSION',
  'INPUT_REQUIRED_ROUNDS_EXCEEDED',
]);

/** The call's rejection as it came when the server refused it (or it was never sent); otherwise ToolCallLostError. */
function refusedOrLost(toolName: string, error: unknown): unknown {
  if (typeof error !== 'object' || error === null) return new ToolCallLostError(toolName, error);
  const { code, status } = error as { code?: unknown; status?: unknown };
  // A JSON-RPC error (the SDK's ProtocolError): the server answered, with no task.
  if (typeof code === 'number') return error;
  if (typeof code === 'string' && NOT_LOST.has(code)) return error;
  // An HTTP refusal (the SDK's SdkHttpError): a 4xx is answered before anything runs.
  if (typeof status === 'number' && status >= 400 && status < 500) return error;
  return new ToolCallLostError(toolName, error);
}
