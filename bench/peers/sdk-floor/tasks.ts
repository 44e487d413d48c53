/**
 * The SDK floor's tasks (T1, T2): the durable floor's task — one SQLite object per task, its
 * table and one `working` row before the answer, one `UPDATE` to `completed` in a later turn, one
 * `SELECT` per `tasks/get` (../durable-floor) — with every MCP answer made by the SDK v2, as ours
 * makes them: the `tools/call` answered with its `CreateTaskResult` by an `McpServer` behind
 * `createMcpHandler` at the edge, the tool run in the task's object by another one (the call
 * handed over parsed), and `tasks/get` answered by a third at the edge — each McpServer with the
 * benchmark's modern tool list, as ours' (../shared/modern-tools.ts). What it is for: ours
 * writes its tools with `McpServer`, so no transport of ours can make a task for less than
 * three passes through the SDK's per-request path; T1 ÷ this floor is what ours adds to them,
 * as W1 ÷ the SDK floor is for a call.
 *
 * Nothing else of ours: no TTL alarm, no stored call, no principal in the address, no timeline,
 * no check that `Mcp-Name` matches the id beyond the SDK's own. Only `work` and `tasks/get` go
 * this way; `progress_task` and `tasks/stream` (T3) are the durable floor's, unchanged.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  createMcpHandler,
  fromJsonSchema,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import { countRequest } from '../shared/billing.ts';
import { registerModernTools } from '../shared/modern-tools.ts';
import { type Message, parseMessage } from '../shared/mini-mcp.ts';
import { FloorTask } from '../durable-floor/index.ts';
import { MODERN, newTaskId, storeCompleted, storeWorkingTask, TASK_ID, TASKS_EXTENSION } from '../durable-floor/task-rows.ts';

interface Env {
  readonly FLOOR_TASK: DurableObjectNamespace;
}

/** Ours' body bound (src/config.ts MAX_BODY_BYTES): the handlers are built with ours' options. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
const DONE = { content: [{ type: 'text' as const, text: 'done' }] };
const TASK_PARAMS = fromJsonSchema<{ taskId: string }>({
  type: 'object',
  properties: { taskId: { type: 'string' } },
  required: ['taskId'],
});

/** Whether the SDK floor serves `request` as a task: a 2026-07-28 `tools/call` of `work`, or `tasks/get`. */
export function isSdkTask(request: Request): boolean {
  if (request.method !== 'POST' || request.headers.get('MCP-Protocol-Version') !== MODERN) return false;
  const method = request.headers.get('Mcp-Method');
  return method === 'tasks/get' || (method === 'tools/call' && request.headers.get('Mcp-Name') === 'work');
}

let edge: McpHttpHandler | undefined;
/** The call being served, for `work` to hand its object (ours hands the task scope the same way: src/tasks/run-task.ts). */
const calls = new AsyncLocalStorage<Message>();

/** The edge's answer: the SDK's handler, over a server whose `work` creates the task and whose `tasks/get` reads it. */
export async function serveSdkTask(request: Request, env: Env): Promise<Response> {
  const text = await request.text();
  const message = parseMessage(text);
  // As the durable floor serves them: only to a client that declared the extension.
  const declared = message?.params?._meta?.['io.modelcontextprotocol/clientCapabilities']?.extensions?.[TASKS_EXTENSION];
  if (message === undefined || typeof declared !== 'object' || declared === null) {
    return Response.json(
      { jsonrpc: '2.0', id: message?.id ?? null, error: { code: -32600, message: 'the floor serves only declared tasks' } },
      { status: 400 },
    );
  }
  edge ??= createMcpHandler(() => edgeServer(env), { legacy: 'reject', maxRequestBodySize: MAX_BODY_BYTES });
  return calls.run(message, () => edge!.fetch(request, { parsedBody: message }));
}

function edgeServer(env: Env): McpServer {
  const server = new McpServer({ name: 'bench-sdk-floor', version: '0.0.0' });
  server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
  registerModernTools(server, {
    work: async (ctx) => {
      const taskId = newTaskId();
      // The call as the object runs it: the client's own, with its envelope.
      const call = calls.getStore();
      const answer = (await (await taskObject(env, taskId, '/create', { id: ctx.mcpReq.id, taskId, call })).json()) as { result: object };
      // The SDK passes `resultType: "task"` through on tools/call (ours: src/tasks/run-task.ts).
      return answer.result as typeof DONE;
    },
  });
  server.server.setRequestHandler('tasks/get', { params: TASK_PARAMS }, async ({ taskId }, ctx) => {
    if (!TASK_ID.test(taskId)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
    const answer = (await (await taskObject(env, taskId, '/get', { id: ctx.mcpReq.id, taskId })).json()) as Message;
    if (answer.error != null) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
    return answer.result as Record<string, unknown>;
  });
  return server;
}

function taskObject(env: Env, taskId: string, route: string, body: unknown): Promise<Response> {
  return env.FLOOR_TASK.get(env.FLOOR_TASK.idFromName(taskId)).fetch(`https://floor-task${route}`, {
    method: 'POST',
    body: JSON.stringify(body),
  });
}

/** The round's handler: the tool run by the SDK's per-request path, as ours' task object runs it. */
let round: McpHttpHandler | undefined;

/**
 * The durable floor's task object, but for a `work` created at the SDK's edge: its tool runs in
 * the next turn through `McpServer` (the call it was handed, parsed), and its result is stored.
 */
export class SdkFloorTask extends FloorTask {
  override async fetch(request: Request): Promise<Response> {
    const text = await request.text();
    const body = JSON.parse(text) as { id: Message['id']; taskId: string; call?: Message };
    if (new URL(request.url).pathname !== '/create' || body.call === undefined) {
      return super.fetch(new Request(request.url, { method: 'POST', body: text }));
    }
    countRequest('FloorTask', 'fetch');
    const now = Date.now();
    const sql = this.ctx.storage.sql;
    storeWorkingTask(sql, body.taskId, now, false);
    const call = body.call;
    // The tool runs in a later turn, as the durable floor's does; its outcome is its own write.
    setTimeout(async () => {
      try {
        storeCompleted(sql, await runRound(call));
      } catch (error) {
        console.error('sdk floor task failed', error);
      }
    }, 0);
    const created = new Date(now).toISOString();
    return Response.json({
      jsonrpc: '2.0',
      id: body.id,
      result: {
        resultType: 'task',
        taskId: body.taskId,
        status: 'working',
        createdAt: created,
        lastUpdatedAt: created,
        ttlMs: 3_600_000,
        pollIntervalMs: 1_000,
      },
    });
  }
}

async function runRound(call: Message): Promise<unknown> {
  round ??= createMcpHandler(
    () => {
      const server = new McpServer({ name: 'bench-sdk-floor-task', version: '0.0.0' });
      registerModernTools(server, { work: async () => DONE });
      return server;
    },
    { legacy: 'reject', maxRequestBodySize: MAX_BODY_BYTES },
  );
  const request = new Request('https://floor-task/mcp', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': MODERN,
      'Mcp-Method': 'tools/call',
      'Mcp-Name': 'work',
    },
  });
  const response = await round.fetch(request, { parsedBody: call });
  const answer = (await response.json()) as Message;
  if (answer.error != null) throw new Error(`the round failed: ${JSON.stringify(answer.error)}`);
  return answer.result;
}
