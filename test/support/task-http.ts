/**
 * The Tasks extension over raw 2026-07-28 requests: calls that declare the extension, the
 * task methods, and bounded polling for a status.
 */
import { env } from 'cloudflare:workers';
import { answerOf, modernRequest } from './modern-http.ts';

export const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } } as const;
/** What the task fixtures' questions need of a client, besides the extension. */
export const TASK_CLIENT = { ...TASKS, elicitation: { form: {} } } as const;

/** `tools/call` from a client that declared the extension; the JSON-RPC answer. */
export async function callDeclared(name: string, args: Record<string, unknown>, headers: Record<string, string> = {}) {
  return answerOf(await modernRequest('tools/call', { name, arguments: args }, TASK_CLIENT, headers));
}

/** Creates a task and returns its id (failing the test if the call was not answered with one). */
export async function createTask(name: string, args: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
  const answer = await callDeclared(name, args, headers);
  if (answer.result?.resultType !== 'task') throw new Error(`expected a task, got ${JSON.stringify(answer).slice(0, 500)}`);
  return answer.result.taskId;
}

export async function taskMethod(
  method: 'tasks/get' | 'tasks/update' | 'tasks/cancel',
  taskId: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  capabilities: Record<string, unknown> = TASK_CLIENT,
) {
  return modernRequest(method, { taskId, ...extra }, capabilities, headers);
}

export async function getTask(taskId: string, headers: Record<string, string> = {}) {
  return answerOf(await taskMethod('tasks/get', taskId, {}, headers));
}

/** Polls tasks/get every 50 ms until `status` (or fails after `timeoutMs`). */
export async function waitForStatus(taskId: string, status: string, timeoutMs = 10_000, headers: Record<string, string> = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await getTask(taskId, headers);
    if (answer.result?.status === status) return answer.result;
    if (Date.now() > deadline) throw new Error(`task ${taskId} did not reach ${status}: ${JSON.stringify(answer).slice(0, 500)}`);
    await scheduler.wait(50);
  }
}

/** Polls until the running task has reported progress (its tool is past its first step). */
export async function waitForStatusMessage(taskId: string, timeoutMs = 5000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const message = (await getTask(taskId)).result?.statusMessage;
    if (typeof message === 'string') return message;
    if (Date.now() > deadline) throw new Error(`task ${taskId} reported nothing within ${timeoutMs} ms`);
    await scheduler.wait(50);
  }
}

/** The task's object, as the Worker addresses it: by principal and id. */
export const taskObject = (taskId: string, principal = 'anonymous') =>
  env.MCP_TASKS.get(env.MCP_TASKS.idFromName(JSON.stringify([principal, taskId])));
