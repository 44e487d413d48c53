/**
 * The Tasks extension for one 2026-07-28 request at the edge: the scope `runTask` reads
 * (run-task.ts), and the McpServer decoration that serves the task methods. The Worker builds
 * one per request, from the body it has parsed and the principal it has established.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import { declarationOf } from '../core/binding-check.ts';
import { McpHttpError } from '../core/errors.ts';
import { log } from '../core/log.ts';
import { MisconfiguredError, unservedTaskProblem } from '../core/misconfiguration.ts';
import type { TaskEventSource } from '../core/events-wire.ts';
import { declaresTasks, TASKS_EXTENSION, TASKS_REQUIRED } from '../core/task.ts';
import { JsonRpcCode } from '../core/wire.ts';
import { taskScope, type TaskScope } from './run-task.ts';
import { serveTaskMethods, type TaskDirectory } from './task-directory.ts';
import type { TaskCall } from './task-store.ts';

type JsonRpcMessage = { id?: unknown; method?: unknown; params?: unknown };

/** Resolves, before a task is created, what its `eventSource` (task event sources, MCP Events) is made from. */
export type EventSources = () => Promise<(taskId: string) => Promise<TaskEventSource>>;

export class EdgeTasks implements Extract<TaskScope, { kind: 'edge' }> {
  readonly kind = 'edge';
  readonly declared: boolean;
  /**
   * Set when a tool that only runs as a task was called without the extension, or a
   * tasks/stream's Mcp-Name disagrees with its task id: the Worker sends it instead of the SDK's answer.
   */
  refusal: McpHttpError | undefined;
  /** Set by a `tasks/stream` that streams: the task and its object's first answer, which the Worker relays instead of the SDK's. */
  stream: { readonly taskId: string; readonly first: Response } | undefined;

  readonly #message: JsonRpcMessage | undefined;
  readonly #headers: Headers;
  readonly #eventSources: EventSources | undefined;

  /**
   * `eventSources`: where the call declared MCP Events and the Worker serves them, what the
   * CreateTaskResult's `eventSource` is made with (events/edge-events.ts `taskEventSources`).
   */
  constructor(
    readonly directory: TaskDirectory,
    message: unknown,
    headers: Headers,
    eventSources?: EventSources,
  ) {
    this.#message = typeof message === 'object' && message !== null && !Array.isArray(message) ? (message as JsonRpcMessage) : undefined;
    this.#headers = headers;
    this.#eventSources = eventSources;
    this.declared = this.#message?.method === 'tools/call' && declaresTasks(this.#message.params);
  }

  async create(): Promise<Record<string, unknown>> {
    try {
      // Before the task exists: a configuration error answers the call, and no task runs unseen.
      const sourceOf = await this.#eventSources?.();
      const created = await this.directory.create(this.#call());
      return sourceOf === undefined ? created : { ...created, eventSource: await sourceOf(created.taskId as string) };
    } catch (error) {
      // A refusal of the edge's own (the principal's task limit) answers the call, not the tool's isError.
      if (error instanceof McpHttpError) {
        const id = this.#message?.id;
        this.refusal = new McpHttpError(error.status, error.code, error.message, error.data, isId(id) ? id : null, error.headers);
      }
      throw error;
    }
  }

  refuse(): void {
    const id = this.#message?.id;
    this.refusal = new McpHttpError(
      400,
      JsonRpcCode.MissingRequiredClientCapability,
      `Missing required client capability: this tool runs only as a task (extension ${TASKS_EXTENSION})`,
      TASKS_REQUIRED,
      isId(id) ? id : null,
    );
  }

  /** The call as the task's object replays it: the request, and the `Mcp-*` headers the SDK checks it against. */
  #call(): TaskCall {
    const headers: Record<string, string> = {};
    for (const [name, value] of this.#headers) if (name.startsWith('mcp-')) headers[name] = value;
    return { message: this.#message as TaskCall['message'], headers, principal: this.directory.principal };
  }
}

/**
 * A 2026-07-28 tools/call to a Worker given no `tasks` (run-task.ts): a tool that calls runTask
 * for a request that declared the extension, or that runs only as a task, is answered with the
 * configuration error (logged once per isolate), not run inline as if nothing had been asked.
 */
export class UnservedTasks implements Extract<TaskScope, { kind: 'unserved' }> {
  readonly kind = 'unserved';
  readonly declared: boolean;
  /** Set when runTask was refused: the Worker sends it instead of the SDK's answer. */
  refusal: MisconfiguredError | undefined;
  readonly #message: JsonRpcMessage | undefined;

  constructor(message: unknown) {
    this.#message = typeof message === 'object' && message !== null && !Array.isArray(message) ? (message as JsonRpcMessage) : undefined;
    this.declared = this.#message?.method === 'tools/call' && declaresTasks(this.#message.params);
  }

  refuse(): void {
    const params = this.#message?.params as { name?: unknown } | undefined;
    const tool = typeof params?.name === 'string' ? params.name : undefined;
    const problem = unservedTaskProblem(tool, declarationOf('tasks', 'MCP_TASKS'));
    if (!unservedLogged) {
      unservedLogged = true;
      log({ msg: 'mcp.config.error', subject: problem.subject, error: problem.detail });
    }
    const id = this.#message?.id;
    this.refusal = new MisconfiguredError([problem], isId(id) ? id : null);
  }
}

/** Whether this isolate has logged a runTask without tasks: once is enough to name the fix. */
let unservedLogged = false;

const isId = (id: unknown): id is string | number => typeof id === 'string' || typeof id === 'number';

/** `decorate` for the edge's modern endpoint: within a request that has task support, serve the task methods. */
export function serveTasksInScope(server: McpServer): void {
  const scope = taskScope.getStore();
  if (!(scope instanceof EdgeTasks)) return;
  serveTaskMethods(server, scope.directory, {
    hold: (taskId, first) => {
      scope.stream = { taskId, first };
    },
    refuse: (error) => {
      scope.refusal = error;
    },
  });
}
