/**
 * A Durable Object class without SQLite (declared `storage = "legacy-kv"`, or not declared at
 * all: test/misconfigured/wrangler.toml), bound where the fixture's Worker expects its SQLite
 * class (an environment copy: `MCP_TASKS` is the `KvTasks` namespace): no probe finds it up
 * front; the first request that reaches one of its objects is answered with the configuration
 * error that names the fix — `[exports] … storage = "sqlite"`, the `[[migrations]]` tag, and
 * that a deployed class cannot be converted — through errorResponse, logged once per binding;
 * every later request to that binding is answered the same. A tool called as a task hears it
 * as the call's answer, not as an `isError` result that looks like the tool's own failure.
 */
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { ENDED, SseReader } from '../support/sse-reader.ts';
import { bearer, TEST_ISSUER, TEST_PUBLIC_JWKS } from '../support/tokens.ts';
import worker from './index.ts';
import { captureLogLines } from '../support/log-lines.ts';
import { modernRequestOf } from '../support/modern-http.ts';
import { MisconfiguredError } from '../../src/core/misconfiguration.ts';
import { noteEvents } from '../fixture-server/note-events.ts';

/** The project's bindings, the fixture's and the ones without SQLite. */
type Bindings = Env & {
  KV_SESSION: DurableObjectNamespace;
  KV_TASKS: DurableObjectNamespace;
  KV_PRINCIPALS: DurableObjectNamespace;
  KV_BUS: DurableObjectNamespace;
  KV_EVENTS: DurableObjectNamespace;
  UNDECLARED_TASKS: DurableObjectNamespace;
};
const bindings = env as unknown as Bindings;

/** A fresh environment (a fresh isolate, to the Worker) with `set` over the project's. */
const environment = (set: Record<string, unknown>) => ({ ...bindings, ...set }) as Env;

const JWT = { AUTH: 'jwt', AUTH_ISSUER: TEST_ISSUER, AUTH_JWKS: JSON.stringify(TEST_PUBLIC_JWKS), AUTH_SCOPES: 'mcp' };
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const EVENTS = { extensions: { 'io.modelcontextprotocol/events': {} } };

let id = 0;
/** A 2026-07-28 request of `method` (its `Mcp-Name` from `params.name` or `params.taskId`). */
function modern(
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = TASKS,
  headers: Record<string, string> = {},
) {
  return modernRequestOf(method, params, capabilities, headers, ++id);
}

const initialize = (headers: Record<string, string> = {}) =>
  new Request('http://localhost/mcp', {
    method: 'POST',
    headers: { Host: 'localhost', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
    }),
  });

const send = (request: Request, environment: Env) =>
  worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, environment, createExecutionContext());

async function answer(request: Request, environment: Env) {
  const response = await send(request, environment);
  return {
    status: response.status,
    body: (await response.json()) as { id: unknown; result?: unknown; error: { code: number; message: string } },
  };
}

/** What every answer of a class without SQLite says, bound as `binding`. */
function expectTheFix(message: string, binding: string) {
  expect(message.startsWith(`server misconfigured: the Durable Object class bound as ${binding} (`)).toBe(true);
  expect(message).toContain('has no SQLite storage');
  expect(message).toContain('[exports] <its class_name> = { type = "durable-object", storage = "sqlite" }');
  expect(message).toContain('new_sqlite_classes');
  expect(message).toContain('cannot be converted');
}

const lines = captureLogLines();
const logged = () => lines().map(({ line }) => line);

const configLines = () => logged().filter(({ msg }) => msg === 'mcp.config.error');

describe('a task class without SQLite', () => {
  it.each([
    { declared: 'storage = "legacy-kv"', binding: 'KV_TASKS' as const },
    { declared: 'no declaration at all', binding: 'UNDECLARED_TASKS' as const },
  ])('($declared) a tool called as a task is answered with the fix, not isError; logged once', async ({ binding }) => {
    const broken = environment({ MCP_TASKS: bindings[binding] });
    for (let call = 0; call < 2; call++) {
      const { status, body } = await answer(modern('tools/call', { name: 'slow_compute', arguments: { seconds: 0, label: 'x' } }), broken);
      expect(status).toBe(500);
      expect(body.result).toBeUndefined();
      expect(body.id).toBe(id);
      expect(body.error.code).toBe(-32603);
      expectTheFix(body.error.message, 'MCP_TASKS');
    }
    expect(configLines()).toEqual([expect.objectContaining({ subject: 'MCP_TASKS' })]);
    expect(
      logged().filter(({ msg }) => msg === 'mcp.tool.error'),
      'the refusal is not the tool failing',
    ).toEqual([]);
  });

  it('tasks/get of a task of that class: the same answer', async () => {
    const broken = environment({ MCP_TASKS: bindings.KV_TASKS });
    const { status, body } = await answer(modern('tasks/get', { taskId: 'AAAAAAAAAAAAAAAAAAAAAA' }), broken);
    expect(status).toBe(500);
    expect(body.id).toBe(id);
    expectTheFix(body.error.message, 'MCP_TASKS');
  });

  it('the rest of the Worker serves on: a call that is no task, a session', async () => {
    const broken = environment({ MCP_TASKS: bindings.KV_TASKS });
    const inline = await answer(modern('tools/call', { name: 'greet', arguments: { name: 'x' } }), broken);
    expect(inline.status).toBe(200);
    const session = await send(initialize(), broken);
    expect(session.status).toBe(200);
    await session.body?.cancel();
  });
});

describe('a session class without SQLite', () => {
  it("initialize is answered with the fix, naming the Worker's binding", async () => {
    const broken = environment({ MCP_SESSION: bindings.KV_SESSION });
    for (let call = 0; call < 2; call++) {
      const { status, body } = await answer(initialize(), broken);
      expect(status).toBe(500);
      expectTheFix(body.error.message, 'MCP_SESSION');
    }
    expect(configLines()).toEqual([expect.objectContaining({ subject: 'MCP_SESSION' })]);
  });
});

describe('a principal registry without SQLite', () => {
  it('an authenticated initialize is answered with the fix', async () => {
    const broken = environment({ ...JWT, MCP_PRINCIPALS: bindings.KV_PRINCIPALS });
    const { status, body } = await answer(initialize(await bearer('alice')), broken);
    expect(status).toBe(500);
    expectTheFix(body.error.message, 'MCP_PRINCIPALS');
  });
});

describe('an event bus without SQLite', () => {
  it("an authenticated listen (its revocation mark is read) ends with the fix; AUTH=none's listens never touch its storage", async () => {
    const broken = environment({ ...JWT, MCP_BUS: bindings.KV_BUS });
    const listen = await send(
      modern('subscriptions/listen', { notifications: { toolsListChanged: true } }, {}, await bearer('bob')),
      broken,
    );
    expect(listen.headers.get('Content-Type')).toContain('text/event-stream');
    const reader = new SseReader(listen);
    try {
      const [ack, end] = await reader.take(2);
      expect(JSON.parse(ack!.data).method).toBe('notifications/subscriptions/acknowledged');
      const ending = JSON.parse(end!.data) as { error: { code: number; message: string } };
      expect(ending.error.code).toBe(-32603);
      expectTheFix(ending.error.message, 'MCP_BUS');
      expect(await reader.next()).toBe(ENDED);
    } finally {
      await reader.cancel();
    }
    expect(configLines()).toEqual([expect.objectContaining({ subject: 'MCP_BUS' })]);
  });
});

describe('an event log class without SQLite', () => {
  it('events/poll is answered with the fix, and emit rejects with it; logged once; the rest of the Worker serves on', async () => {
    const broken = environment({ MCP_EVENTS: bindings.KV_EVENTS });
    // emit is the author's call (a tool, an alarm, the Worker's fetch): it rejects with the error itself.
    const emitted = noteEvents.emit(bindings.KV_EVENTS as unknown as Env['MCP_EVENTS'], { data: { text: 'x', n: 1 } });
    const refusal = await emitted.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(MisconfiguredError);
    expectTheFix((refusal as MisconfiguredError).message, 'MCP_EVENTS');
    const poll = await answer(modern('events/poll', { name: 'demo.note', arguments: {}, cursor: null }, EVENTS), broken);
    expect(poll.status).toBe(500);
    expectTheFix(poll.body.error.message, 'MCP_EVENTS');
    expect(configLines()).toEqual([expect.objectContaining({ subject: 'MCP_EVENTS' })]);
    const inline = await answer(modern('tools/call', { name: 'greet', arguments: { name: 'x' } }), broken);
    expect(inline.status).toBe(200);
  });
});
