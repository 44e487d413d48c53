/**
 * The official MCP client (SDK v2, workerd-safe) driving the Worker in-process, as any
 * user's client would: handshake, progress, server requests, resumption tokens, DELETE.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';

const url = new URL('http://localhost/mcp');
const inProcess = (input: string | URL | Request, init?: RequestInit) => exports.default.fetch(new Request(input, init));

async function connect(capabilities: Record<string, unknown> = {}) {
  const client = new Client({ name: 'sdk-test', version: '1.0.0' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(url, { fetch: inProcess });
  await client.connect(transport);
  return { client, transport };
}

describe('the official SDK client', () => {
  it('lists the demo and conformance tools', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['countdown', 'tally', 'broadcast', 'test_simple_text']));
    await client.close();
  });

  it('calls countdown with onprogress: 5 progress notifications, then the result', async () => {
    const { client } = await connect();
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'countdown', arguments: { from: 5, interval_ms: 10 } },
      { onprogress: (p) => progress.push(p.progress) },
    );
    expect(progress).toEqual([1, 2, 3, 4, 5]);
    expect(result.content).toEqual([{ type: 'text', text: 'liftoff after 5' }]);
    await client.close();
  });

  it('answers an elicitation the server sends mid-call', async () => {
    const { client } = await connect({ elicitation: {} });
    client.setRequestHandler('elicitation/create', async () => ({
      action: 'accept',
      content: { username: 'grace', email: 'grace@example.com' },
    }));
    const result = await client.callTool({ name: 'test_elicitation', arguments: { message: 'name?' } });
    expect(JSON.stringify(result.content)).toContain('grace');
    await client.close();
  });

  it('receives resumption tokens that name the call’s stream', async () => {
    const { client } = await connect();
    const tokens: string[] = [];
    await client.callTool(
      { name: 'countdown', arguments: { from: 3, interval_ms: 0 } },
      { onprogress: () => undefined, onresumptiontoken: (token: string) => tokens.push(token) },
    );
    expect(tokens.length).toBeGreaterThanOrEqual(4);
    const streams = new Set(tokens.map((t) => t.split('-').slice(0, 2).join('-')));
    expect(streams.size).toBe(1);
    await client.close();
  });

  it('terminates its session with DELETE', async () => {
    const { client, transport } = await connect();
    const sessionId = transport.sessionId!;
    await transport.terminateSession();
    const after = await inProcess(url, {
      method: 'POST',
      headers: {
        Host: 'localhost',
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(after.status).toBe(404);
    await client.close();
  });
});
