/**
 * `runTask`: the one call a tool makes to become a task where a client can take one, written
 * once for both eras. Where the tool is being served decides what it does:
 * - at the edge, for a 2026-07-28 client that declared the Tasks extension on this request:
 *   the task is created (stored in its own object, which runs the tool there) and the call is
 *   answered with it at once;
 * - at the edge for a client that did not declare it: the work runs inline, as any call — or,
 *   for a tool that only runs as a task, the call is refused with -32021;
 * - at the edge of a Worker given no `tasks`: the work runs inline for a client that did not
 *   declare the extension, as a Worker with tasks would answer it (the protocol's fallback); a
 *   client that declared it, or a tool that only runs as a task, is answered with the
 *   configuration error that names the fix (edge-tasks.ts): a task asked for and wanted, which
 *   only the Worker's configuration stands in the way of, is never quietly run inline;
 * - inside a task's object: the work runs (this is the task);
 * - in a session (2025 revisions): the work runs inline; its progress goes on the session's
 *   resumable stream, as for any other tool.
 * The code before `runTask` runs again inside the task's object, as code before an MRTR
 * question runs again on each round: keep it free of side effects.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ProtocolError, type CallToolResult, type InputRequiredResult } from '@modelcontextprotocol/server';
import type { Scope } from '../core/scope.ts';
import type { TaskError } from '../core/task.ts';
import { TOOL_EVENT_METHOD, toolEventProblem } from '../core/task-events.ts';
import type { TaskDirectory } from './task-directory.ts';

export type ToolOutcome = CallToolResult | InputRequiredResult;

/** Where a tool call is served, as far as tasks go (unset: in a session). */
export type TaskScope =
  | {
      readonly kind: 'edge';
      /** The requesting principal's tasks. */
      readonly directory: TaskDirectory;
      /** Whether the request declared the extension: "servers MUST NOT" answer with a task otherwise. */
      readonly declared: boolean;
      /** Stores the task and starts it; resolves to its `CreateTaskResult`. */
      create(): Promise<Record<string, unknown>>;
      /** Answers the call with -32021 instead of its result (a tool cannot: McpServer turns a throw into `isError`). */
      refuse(): void;
    }
  | {
      /** A 2026-07-28 call to a Worker that serves no tasks. */
      readonly kind: 'unserved';
      /** Whether the request declared the extension. */
      readonly declared: boolean;
      /** Answers the call with the configuration error instead of its result. */
      refuse(): void;
    }
  | {
      readonly kind: 'run';
      /** The tool threw a JSON-RPC error: the task ends `failed` with it, not `completed` with `isError`. */
      fail(error: TaskError): void;
    };

export const taskScope: Scope<TaskScope> = new AsyncLocalStorage<TaskScope>();

export interface RunTaskOptions {
  /** The tool only runs as a task: a client that did not declare the extension is refused with -32021. */
  readonly required?: boolean;
}

/**
 * What the call answers when it is refused; the Worker sends the refusal (-32021) instead
 * (edge/worker.ts), unless the tool had already sent a notification, which started the answer.
 */
const REFUSED: CallToolResult = {
  content: [{ type: 'text', text: 'This tool runs only as a task: declare the extension io.modelcontextprotocol/tasks' }],
  isError: true,
};

/** What the call answers when the Worker serves no tasks; the Worker sends the configuration error instead. */
const UNSERVED: CallToolResult = {
  content: [{ type: 'text', text: 'This server is misconfigured: this tool runs as a task, and the server serves no tasks' }],
  isError: true,
};

export async function runTask(
  work: () => ToolOutcome | Promise<ToolOutcome>,
  { required = false }: RunTaskOptions = {},
): Promise<ToolOutcome> {
  const scope = taskScope.getStore();
  if (scope?.kind === 'edge') {
    if (scope.declared) {
      // The SDK passes `resultType: "task"` through on tools/call; the callback's type does not know it.
      return { resultType: 'task', ...(await scope.create()) } as unknown as CallToolResult;
    }
    if (required) {
      scope.refuse();
      return REFUSED;
    }
    return work();
  }
  if (scope?.kind === 'unserved') {
    if (!scope.declared && !required) return work();
    scope.refuse();
    return UNSERVED;
  }
  if (scope?.kind === 'run') {
    try {
      return await work();
    } catch (error) {
      if (error instanceof ProtocolError) {
        scope.fail({ code: error.code, message: error.message, ...(error.data !== undefined && { data: error.data }) });
      }
      throw error;
    }
  }
  return work();
}

/**
 * Adds an event of the tool's own to its task's timeline (SEP-2694 `tasks/stream`): partial
 * content, a milestone — anything a client following the task should see in order with its
 * progress and log lines. It goes on the tool's own stream (`ctx.mcpReq.notify`), as they do,
 * so the timeline keeps the order the tool sent them in; the task's object stores it before any
 * client hears of it. Outside a task (inline, in a session) there is no timeline: nothing is sent.
 *
 * `type` is the tool author's namespaced name (`com.example.review.comment`): "implementation-
 * defined event types MUST use a vendor-specific prefix". `payload` is a JSON object. Either
 * wrong is a TypeError, thrown at the call.
 *
 * ```ts
 * return runTask(async () => {
 *   await emitTaskEvent(ctx, 'com.example.draft', { text: firstDraft });
 *   return { content: [{ type: 'text', text: final }] };
 * });
 * ```
 */
export async function emitTaskEvent(
  ctx: { readonly mcpReq: { notify(notification: { method: string; params?: Record<string, unknown> }): Promise<void> } },
  type: string,
  payload: Readonly<Record<string, unknown>>,
): Promise<void> {
  const problem = toolEventProblem(type, payload);
  if (problem !== undefined) throw new TypeError(`emitTaskEvent: ${problem}`);
  if (taskScope.getStore()?.kind !== 'run') return;
  await ctx.mcpReq.notify({ method: TOOL_EVENT_METHOD, params: { type, payload } });
}
