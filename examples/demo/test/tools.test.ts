/** The demo's tools through its Worker and session object, in workerd, as a client calls them. */
import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';

const headers = { Host: 'localhost', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

/** POSTs one JSON-RPC message; returns the response and the messages of its SSE body. */
async function post(body: unknown, session?: string) {
  const response = await exports.default.fetch(
    new Request('http://localhost/mcp', {
      method: 'POST',
      headers: { ...headers, ...(session && { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' }) },
      body: JSON.stringify(body),
    }),
  );
  const text = response.status === 200 ? await response.text() : '';
  const messages = text
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice('data: '.length)));
  return { response, messages };
}

async function openSession(): Promise<string> {
  const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'demo-test', version: '0' } };
  const { response } = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: init });
  const session = response.headers.get('Mcp-Session-Id');
  expect(session).not.toBeNull();
  expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session!)).response.status).toBe(202);
  return session!;
}

const call = (session: string, id: number, name: string, args: Record<string, unknown>) =>
  post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: { progressToken: `p${id}` } } }, session);

describe('the demo server', () => {
  it('lists its own tools, and none of the library’s test fixtures', async () => {
    const session = await openSession();
    const { messages } = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, session);
    const names: string[] = messages[0].result.tools.map((tool: { name: string }) => tool.name);
    // Tools you add join these; the conformance fixtures (all named test_*) are never served here.
    expect(names).toEqual(expect.arrayContaining(['confirm', 'countdown', 'note', 'tally']));
    expect(names.filter((name) => name.startsWith('test_'))).toEqual([]);
  });

  it('note keeps the session’s notes in its storage', async () => {
    const session = await openSession();
    expect((await call(session, 1, 'note', { text: 'first' })).messages.at(-1).result.content[0].text).toBe('1 notes');
    expect((await call(session, 2, 'note', { text: 'second' })).messages.at(-1).result.content[0].text).toBe('2 notes');
    const other = await openSession();
    expect((await call(other, 1, 'note', { text: 'elsewhere' })).messages.at(-1).result.content[0].text).toBe('1 notes');
  });

  it('countdown streams its progress, then its result', async () => {
    const session = await openSession();
    const { messages } = await call(session, 1, 'countdown', { from: 3, interval_ms: 10 });
    expect(messages.map((m) => m.params?.progress ?? m.result?.content[0].text)).toEqual([1, 2, 3, 'liftoff after 3']);
  });
});

/** One 2026-07-28 request that declares the Tasks extension; the JSON-RPC answer. */
async function modern(method: string, name: string, params: Record<string, unknown>) {
  const envelope = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    'io.modelcontextprotocol/clientInfo': { name: 'demo-test', version: '0' },
  };
  const response = await exports.default.fetch(
    new Request('http://localhost/mcp', {
      method: 'POST',
      headers: { ...headers, 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, 'Mcp-Name': name },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope } }),
    }),
  );
  return response.json() as Promise<{ result: { taskId?: string; status?: string; [field: string]: unknown } }>;
}

describe('countdown as a task (2026-07-28, Tasks extension declared)', () => {
  it('is answered with a task, which reports progress and completes with the result', async () => {
    const created = await modern('tools/call', 'countdown', { name: 'countdown', arguments: { from: 2, interval_ms: 50 } });
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = created.result.taskId!;
    let task = (await modern('tasks/get', taskId, { taskId })).result;
    for (let polls = 0; task.status === 'working' && polls < 100; polls++) {
      await scheduler.wait(20);
      task = (await modern('tasks/get', taskId, { taskId })).result;
    }
    expect(task).toMatchObject({
      status: 'completed',
      statusMessage: '2/2',
      result: { content: [{ type: 'text', text: 'liftoff after 2' }] },
    });
  });
});
