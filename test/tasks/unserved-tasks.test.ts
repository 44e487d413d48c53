/**
 * runTask in a Worker given no `tasks` (tasks/run-task.ts, edge-tasks.ts UnservedTasks): a
 * client that did not declare the Tasks extension gets the tool's result inline, as a Worker
 * with tasks would answer it (the protocol's fallback); a client that declared it, or a tool that
 * runs only as a task, is answered with the configuration error that names the fix — on the
 * wire, as the call's one answer, not as an `isError` result — logged once per isolate.
 */
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { createMcpWorker, runTask } from '../../src/lib.ts';
import { modernRequestOf } from '../support/modern-http.ts';
import { TASKS } from '../support/task-http.ts';
import { captureLogLines } from '../support/log-lines.ts';

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

/** A Worker with a modern factory whose tools call runTask, and no `tasks`. */
const worker = createMcpWorker<Env>({
  sessions: (e) => e.MCP_SESSION,
  modern: () => {
    const server = new McpServer({ name: 'no-tasks', version: '1.0.0' });
    server.registerTool('report', { description: 'A task where a client takes one' }, () => runTask(() => text('the report')));
    server.registerTool('only_task', { description: 'Runs only as a task' }, () => runTask(() => text('done'), { required: true }));
    return server;
  },
});

let id = 0;
async function call(name: string, capabilities: Record<string, unknown>) {
  const request = modernRequestOf('tools/call', { name, arguments: {} }, capabilities, {}, ++id);
  const response = await worker.fetch(request, env, createExecutionContext());
  return { status: response.status, body: (await response.json()) as any };
}

const lines = captureLogLines();
/** What went to the error stream. */
const logged = () =>
  lines()
    .filter(({ stream }) => stream === 'err')
    .map(({ line }) => line);

describe('runTask where the Worker serves no tasks', () => {
  it('a client that did not declare the extension: the result, inline (the protocol fallback)', async () => {
    const { status, body } = await call('report', {});
    expect(status).toBe(200);
    expect(body.result).toMatchObject({ content: [{ type: 'text', text: 'the report' }] });
    expect(body.result.isError).toBeUndefined();
  });

  it('a client that declared it: the configuration error, naming the fix, as the answer', async () => {
    const { status, body } = await call('report', TASKS);
    expect(status).toBe(500);
    expect(body.id).toBe(id);
    expect(body.result).toBeUndefined();
    expect(body.error.code).toBe(-32603);
    expect(body.error.message).toMatch(/^server misconfigured: the tool "report" runs as a task \(runTask\)/);
    expect(body.error.message).toContain('pass `tasks: (env) => env.MCP_TASKS` to createMcpWorker');
    expect(body.error.message).toContain('[[durable_objects.bindings]] name = "MCP_TASKS"');
    // The isolate's first: logged, with the same words; the tool's refusal is no tool error.
    expect(logged()).toEqual([
      { msg: 'mcp.config.error', subject: 'tasks', error: body.error.message.slice('server misconfigured: '.length) },
    ]);
  });

  it('a tool that runs only as a task: the configuration error, whatever the client declared', async () => {
    for (const capabilities of [{}, TASKS]) {
      const { status, body } = await call('only_task', capabilities);
      expect(status).toBe(500);
      expect(body.error.message).toMatch(/^server misconfigured: the tool "only_task" runs as a task/);
    }
  });

  it('logged once per isolate, not per call', async () => {
    await call('report', TASKS);
    await call('only_task', {});
    expect(logged()).toEqual([]);
  });
});
