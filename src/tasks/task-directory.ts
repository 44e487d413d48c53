/**
 * The edge's side of the Tasks extension: where a principal's tasks live, and the three task
 * methods served through the SDK's own handler (which checks the envelope, and that
 * `Mcp-Name` equals `params.taskId`, -32020, before any of this runs).
 *
 * A task's object is addressed by the principal and the task id together, so a principal
 * asking for another's task reaches an object that holds nothing, and is answered exactly as
 * for an id that never existed: "-32602" with the same message, by the same path.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  fromJsonSchema,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { Principal } from '../auth/principal.ts';
import { capabilitiesDeclareTasks, isWellFormedTaskId, newTaskId, TASKS_EXTENSION, TASKS_REQUIRED } from '../core/task.ts';
import { TASK_ROUTES } from '../core/wire.ts';
import type { TaskCreation } from './task-object.ts';
import type { TaskCall } from './task-store.ts';

/** All the Worker needs of the task namespace (a `DurableObjectNamespace` is one). */
export interface TaskNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): { fetch(request: Request): Promise<Response> };
}

export interface TaskSettings {
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
}

export class TaskDirectory {
  readonly #namespace: TaskNamespace;
  readonly principal: Principal;
  readonly #settings: TaskSettings;

  constructor(namespace: TaskNamespace, principal: Principal, settings: TaskSettings) {
    this.#namespace = namespace;
    this.principal = principal;
    this.#settings = settings;
  }

  /** Creates a task running `call` and resolves to its `CreateTaskResult` once it is stored. */
  async create(call: TaskCall): Promise<Record<string, unknown>> {
    const creation: TaskCreation = { taskId: newTaskId(), call, ...this.#settings };
    const response = await this.#object(creation.taskId).fetch(internal(TASK_ROUTES.create, creation));
    if (response.status === 413) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'The call is too large to run as a task');
    if (!response.ok) throw new Error(`the task object answered ${response.status} to create`);
    return response.json();
  }

  /** The object's answer for the task, or undefined when this principal has no such task. */
  async ask(route: string, taskId: string, body: Record<string, unknown> = {}): Promise<Record<string, unknown> | undefined> {
    // An id this server could not have issued wakes no object.
    if (!isWellFormedTaskId(taskId)) return undefined;
    const response = await this.#object(taskId).fetch(internal(route, body));
    if (response.status === 404) return undefined;
    if (!response.ok) throw new Error(`the task object answered ${response.status}`);
    return response.json();
  }

  /**
   * A socket carrying the task's every state from now on, or undefined when this principal has
   * no such task. Not yet accepted: nothing is delivered until the caller, listening, accepts it.
   */
  async watch(taskId: string): Promise<WebSocket | undefined> {
    if (!isWellFormedTaskId(taskId)) return undefined;
    const response = await this.#object(taskId).fetch(
      new Request(`https://task.internal${TASK_ROUTES.watch}`, { headers: { Upgrade: 'websocket' } }),
    );
    return response.webSocket ?? undefined;
  }

  #object(taskId: string) {
    return this.#namespace.get(this.#namespace.idFromName(JSON.stringify([this.principal.id, taskId])));
  }
}

const internal = (route: string, body: unknown) =>
  new Request(`https://task.internal${route}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

const TASK_PARAMS = fromJsonSchema<{ taskId: string }>({
  type: 'object',
  properties: { taskId: { type: 'string' } },
  required: ['taskId'],
});

/**
 * Advertises the extension ("servers MUST declare ... in `capabilities.extensions`") and
 * serves `tasks/get`, `tasks/update` and `tasks/cancel` on `server`. `tasks/result` and
 * `tasks/list` stay unregistered: the SDK answers them -32601, as the extension requires.
 */
export function serveTaskMethods(server: McpServer, directory: TaskDirectory): void {
  server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
  const serve = (method: string, route: string, answer: (found: Record<string, unknown>) => Record<string, unknown>) =>
    server.server.setRequestHandler(method, { params: TASK_PARAMS }, async ({ taskId }, ctx) => {
      requireDeclared(ctx);
      const body = route === TASK_ROUTES.update ? { inputResponses: ctx.mcpReq.inputResponses ?? {} } : {};
      const found = await directory.ask(route, taskId, body);
      // "If the taskId is unknown or has expired, the server MUST return -32602."
      if (found === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
      return answer(found);
    });
  serve('tasks/get', TASK_ROUTES.get, (task) => task);
  // Both are bare acknowledgements: the task's state is read with tasks/get.
  serve('tasks/update', TASK_ROUTES.update, () => ({}));
  serve('tasks/cancel', TASK_ROUTES.cancel, () => ({}));
}

/** "Servers MUST return -32021 ... to a tasks/* request from a client that did not declare the extension." */
function requireDeclared(ctx: ServerContext): void {
  // The SDK lifts the envelope out of `_meta`; its type does not name the keys.
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  if (!capabilitiesDeclareTasks(envelope?.[CLIENT_CAPABILITIES_META_KEY])) {
    throw new MissingRequiredClientCapabilityError(TASKS_REQUIRED);
  }
}
