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
import { McpHttpError, type JsonRpcId } from '../core/errors.ts';
import { MisconfiguredError } from '../core/misconfiguration.ts';
import { decodeHeaderValue } from '../core/header-value.ts';
import { parseTaskStreamParams } from '../core/task-stream.ts';
import { HEADERS, INTERNAL_HEADERS, JsonRpcCode, TASK_ROUTES } from '../core/wire.ts';
import type { TaskCreation } from './task-creation.ts';
import type { TaskCall } from './task-store.ts';
import type { StreamOpening } from './task-streams.ts';

/** All the Worker needs of the task namespace (a `DurableObjectNamespace` is one). */
export interface TaskNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): { fetch(request: Request): Promise<Response> };
}

export interface TaskSettings {
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
}

/** The principal's registry, where it has one (principals/principal-holdings.ts): admits a task, or throws its refusal. */
export interface TaskAdmission {
  admitTask(taskId: string, expiresAt: number): Promise<void>;
  forget(kind: 'task', taskId: string): Promise<void>;
}

export class TaskDirectory {
  readonly #namespace: TaskNamespace;
  readonly principal: Principal;
  readonly #settings: TaskSettings;

  readonly #admission: TaskAdmission | undefined;

  constructor(namespace: TaskNamespace, principal: Principal, settings: TaskSettings, admission?: TaskAdmission) {
    this.#namespace = namespace;
    this.principal = principal;
    this.#settings = settings;
    this.#admission = admission;
  }

  /**
   * Creates a task running `call` and resolves to its `CreateTaskResult` once it is stored;
   * first, where the principal has a registry, the task is admitted by it (or refused: 429
   * `task_limit`, thrown as McpHttpError), and forgotten again if the object refused it.
   */
  async create(call: TaskCall): Promise<Record<string, unknown>> {
    const creation: TaskCreation = { taskId: newTaskId(), call, ...this.#settings };
    await this.#admission?.admitTask(creation.taskId, Date.now() + creation.ttlMs);
    // No answer, or a 5xx: the object may have stored the task and be running it. It stays
    // admitted, so that a revocation still ends it and the limit still counts it; the registry
    // drops it at its expiry either way.
    const response = await this.#object(creation.taskId).fetch(internal(TASK_ROUTES.create, creation));
    if (response.status >= 400 && response.status < 500) await this.#admission?.forget('task', creation.taskId);
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
    if (response.status === 413) throw answersTooLarge((await response.json()) as { bytes: number; limit: number });
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

  /**
   * Opens a `tasks/stream` on the task's object: its answer — a refusal or result as JSON, or
   * the first part of the stream's SSE response — or undefined when this principal has no such task.
   */
  async stream(taskId: string, opening: StreamOpening): Promise<Response | undefined> {
    if (!isWellFormedTaskId(taskId)) return undefined;
    const response = await this.#object(taskId).fetch(internal(TASK_ROUTES.stream, opening));
    if (response.status === 404) return undefined;
    if (!response.ok) throw new Error(`the task object answered ${response.status} to stream`);
    return response;
  }

  /**
   * The feed of an `events/stream` push stream over the task's timeline (its MCP Events task
   * event source): `attach` is the feed's JSON (tasks/task-sources.ts reads its cursor). The
   * object's answer — 101 with the socket, or JSON — or undefined when this principal has no such task.
   */
  async sourceAttach(taskId: string, attach: string): Promise<Response | undefined> {
    if (!isWellFormedTaskId(taskId)) return undefined;
    const response = await this.#object(taskId).fetch(
      new Request(`https://task.internal${TASK_ROUTES.sourceAttach}`, {
        headers: { Upgrade: 'websocket', [INTERNAL_HEADERS.eventAttach]: attach },
      }),
    );
    return response.status === 404 ? undefined : response;
  }

  /** The relay socket that continues a stream whose first part the Worker holds (edge/sse-relay.ts). */
  relay(taskId: string, token: string): Promise<Response> {
    return this.#object(taskId).fetch(
      new Request(`https://task.internal${TASK_ROUTES.relay}`, { headers: { Upgrade: 'websocket', [INTERNAL_HEADERS.relay]: token } }),
    );
  }

  #object(taskId: string) {
    return this.#namespace.get(this.#namespace.idFromName(JSON.stringify([this.principal.id, taskId])));
  }
}

/** `tasks/update` answers the task would keep over its bound (core/task.ts MAX_KEPT_ANSWERS_BYTES): nothing was kept. */
const answersTooLarge = ({ bytes, limit }: { bytes: number; limit: number }) =>
  new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `The answers kept with the task would take ${bytes.toLocaleString('en-US')} bytes of JSON, at most ${limit.toLocaleString('en-US')}: ` +
      'answer with less, or every open question at once (answers that complete the round are not kept)',
  );

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

const STREAM_PARAMS = fromJsonSchema<{ taskId: string; after?: unknown }>({
  type: 'object',
  properties: { taskId: { type: 'string' } },
  required: ['taskId'],
});

/** The JSON of a stream's request id is kept with its connection, to answer it when the stream ends (core/relay.ts). */
const MAX_STREAM_ID_CHARS = 512;

/** What the edge does in place of the SDK's answer to a `tasks/stream` (edge/worker.ts). */
export interface StreamHost {
  /** Keeps the stream's SSE response, which the edge relays. */
  hold(taskId: string, first: Response): void;
  /** Answers with `error` (an HTTP status of its own) instead. */
  refuse(error: McpHttpError): void;
}

const NOT_FOUND = 'Failed to retrieve task: Task not found';

/**
 * Advertises the extension ("servers MUST declare ... in `capabilities.extensions`") and
 * serves `tasks/get`, `tasks/update` and `tasks/cancel` on `server`, and with `host`,
 * `tasks/stream` (SEP-2694, advertised as the `eventStreams` sub-capability, which the SEP
 * says implementations MAY). `tasks/result` and `tasks/list` stay unregistered: the SDK
 * answers them -32601, as the extension requires.
 */
export function serveTaskMethods(server: McpServer, directory: TaskDirectory, host?: StreamHost): void {
  server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: host === undefined ? {} : { eventStreams: {} } } });
  const serve = (method: string, route: string, answer: (found: Record<string, unknown>) => Record<string, unknown>) =>
    server.server.setRequestHandler(method, { params: TASK_PARAMS }, async ({ taskId }, ctx) => {
      requireDeclared(ctx);
      const body = route === TASK_ROUTES.update ? { inputResponses: ctx.mcpReq.inputResponses ?? {} } : {};
      const found = await misconfiguredToHost(host, ctx.mcpReq.id, () => directory.ask(route, taskId, body));
      if (found === MISCONFIGURED_ANSWERED) return {};
      // "If the taskId is unknown or has expired, the server MUST return -32602."
      if (found === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, NOT_FOUND);
      return answer(found);
    });
  serve('tasks/get', TASK_ROUTES.get, (task) => task);
  // Both are bare acknowledgements: the task's state is read with tasks/get.
  serve('tasks/update', TASK_ROUTES.update, () => ({}));
  serve('tasks/cancel', TASK_ROUTES.cancel, () => ({}));
  if (host === undefined) return;
  server.server.setRequestHandler('tasks/stream', { params: STREAM_PARAMS }, async (params, ctx) => {
    requireDeclared(ctx);
    const parsed = parseTaskStreamParams(params);
    if ('invalid' in parsed) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: ${parsed.invalid}`);
    const { id } = ctx.mcpReq;
    // The SDK cross-checks Mcp-Name for the task methods it knows; tasks/stream is checked here,
    // the same way: "the server MUST reject" a header that disagrees with the body (400, -32020).
    // A client that sends none (the SDK's client sends it only for the methods it knows) is served.
    const name = ctx.http?.req?.headers.get(HEADERS.name);
    const named = name == null ? undefined : decodeHeaderValue(name);
    if (name != null && named !== parsed.taskId) {
      host.refuse(nameMismatch(name, named, parsed.taskId, id));
      return {};
    }
    if (JSON.stringify(id).length > MAX_STREAM_ID_CHARS) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `Invalid request: a tasks/stream id is at most ${MAX_STREAM_ID_CHARS} characters as JSON`,
      );
    }
    const answer = await misconfiguredToHost(host, id, () => directory.stream(parsed.taskId, { after: parsed.after, id }));
    if (answer === MISCONFIGURED_ANSWERED) return {};
    // Another principal's task is an unknown one: the same error, by the same path, as tasks/get.
    if (answer === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, NOT_FOUND);
    if (answer.headers.get('Content-Type')?.startsWith('text/event-stream')) {
      host.hold(parsed.taskId, answer);
      return {};
    }
    const { error } = (await answer.json()) as { error?: { code: number; message: string; data?: unknown } };
    if (error !== undefined) throw new ProtocolError(error.code, error.message, error.data);
    // Ended, and nothing after the cursor: "MUST return TaskStreamResult immediately".
    return {};
  });
}

/** The SDK's own -32020 answer to a task method whose `Mcp-Name` is not its `taskId`, for tasks/stream. */
function nameMismatch(header: string, named: string | undefined, taskId: string, id: JsonRpcId): McpHttpError {
  // The message names what the header decodes to; `data` keeps the header as sent.
  const body = `the body carries params.taskId=${JSON.stringify(taskId)} but the Mcp-Name header names ${JSON.stringify(named ?? header)}`;
  return new McpHttpError(
    400,
    JsonRpcCode.HeaderMismatch,
    `Bad Request: the request headers and body disagree: ${body}`,
    { mismatch: { header, body } },
    id,
  );
}

/** What a task method answers the SDK once the Worker holds a configuration error to send instead. */
const MISCONFIGURED_ANSWERED = Symbol('misconfigured');

/**
 * `work`, unless the task's class cannot store (edge/storage-guard.ts): that configuration error
 * is the Worker's to send, as the one answer to the request (`host.refuse`), not a JSON-RPC error
 * the SDK would word. Without a host (no Worker to send it), it is thrown as any failure.
 */
async function misconfiguredToHost<T>(
  host: StreamHost | undefined,
  id: JsonRpcId,
  work: () => Promise<T>,
): Promise<T | typeof MISCONFIGURED_ANSWERED> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof MisconfiguredError) || host === undefined) throw error;
    host.refuse(new McpHttpError(error.status, error.code, error.message, error.data, id, error.headers));
    return MISCONFIGURED_ANSWERED;
  }
}

/** "Servers MUST return -32021 ... to a tasks/* request from a client that did not declare the extension." */
function requireDeclared(ctx: ServerContext): void {
  // The SDK lifts the envelope out of `_meta`; its type does not name the keys.
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  if (!capabilitiesDeclareTasks(envelope?.[CLIENT_CAPABILITIES_META_KEY])) {
    throw new MissingRequiredClientCapabilityError(TASKS_REQUIRED);
  }
}
