/**
 * A `tools/call` answered with a task, made readable to the SDK's Client.
 *
 * `@modelcontextprotocol/client` 2.4.0 decodes every 2026-07-28 result by its `resultType`
 * before any schema sees it, and refuses any kind but `complete` and `input_required`:
 * `Unsupported result type 'task' for tools/call`, an error that does not carry the task. The
 * task exists by then ("the task MUST be durably created before the answer"), so the tool is
 * running with no one holding its id, and calling again would run it twice.
 *
 * So the answer is changed where it enters the Client: the Client reads every message through
 * its transport's `onmessage`, which `connect` sets; `catchTaskAnswers` wraps that function once
 * per connection. A response whose result is a task (`resultType: "task"` with a `taskId`) is
 * handed on as a JSON-RPC error whose `data` carries the task whole
 * (`{ reason: "task_answer", task }`), so the call that sent it rejects with the SDK's
 * ProtocolError holding the id; every other message passes untouched. Each rejection goes to the
 * request the answer is for (its JSON-RPC id), so concurrent calls keep their own tasks. The code
 * is -32603: never -32020, on which `callTool` sends the call again (after re-reading the tool
 * list), which after a task was created would run the tool twice.
 *
 * Nothing is sent: this changes only what the Client is told. Once a Client's transport is
 * wrapped, a plain `callTool` answered with a task rejects with that ProtocolError (its
 * `data.task.taskId` names the task to follow) instead of the SDK's error without the id.
 */
import { readTask } from './task-events.ts';
import type { DetailedTask } from './task-types.ts';

/** `error.data.reason` of a task answer handed to the Client as an error. */
export const TASK_ANSWER = 'task_answer';
const INTERNAL_ERROR = -32603;

/** The transport's member the wrapper replaces: typed loosely, so the SDK's Transport fits it as it is. */
export interface MessageSource {
  onmessage?: unknown;
}

/** The wrappers this module installed: a transport already wrapped is left as it is. */
const wrappers = new WeakSet<object>();

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Wraps the connected transport's `onmessage` (once) so that task answers reach the Client as errors that carry them. */
export function catchTaskAnswers(transport: MessageSource): void {
  const deliver = transport.onmessage;
  if (typeof deliver !== 'function') throw new TypeError('the Client is not connected (its transport has no onmessage): connect it first');
  if (wrappers.has(deliver)) return;
  const wrapper = function (this: unknown, message: unknown, ...rest: unknown[]): unknown {
    return Reflect.apply(deliver, this, [asTaskAnswerError(message), ...rest]);
  };
  wrappers.add(wrapper);
  transport.onmessage = wrapper;
}

/** A response whose result is a task, as the error the Client can read; any other message as it is. */
export function asTaskAnswerError(message: unknown): unknown {
  if (!isObject(message) || 'method' in message || !isObject(message.result) || message.result.resultType !== 'task') return message;
  const { taskId } = message.result;
  // Without an id there is nothing to follow: the SDK refuses it as it always has.
  if (typeof taskId !== 'string' || taskId === '') return message;
  return {
    jsonrpc: '2.0',
    id: message.id,
    error: {
      code: INTERNAL_ERROR,
      message:
        `tools/call was answered with task ${taskId}, which the SDK's Client cannot read: follow it with followTask, ` +
        'or call the tool with callToolAsTask (mcp-edge-sessions/client)',
      data: { reason: TASK_ANSWER, task: message.result },
    },
  };
}

/**
 * The task a call's rejection carries, if it is a task answer: the task as created, or what is
 * wrong with it (with its id, which the wrapper checked). Undefined for any other rejection.
 */
export function taskOfRejection(error: unknown): { task: DetailedTask } | { taskId: string; problem: string } | undefined {
  if (!isObject(error) || !isObject(error.data) || error.data.reason !== TASK_ANSWER || !isObject(error.data.task)) return undefined;
  const created = error.data.task;
  if (typeof created.taskId !== 'string' || created.taskId === '') return undefined;
  const task = readTask(created);
  return typeof task === 'string' ? { taskId: created.taskId, problem: task } : { task };
}
