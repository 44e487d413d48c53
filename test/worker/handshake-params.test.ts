/**
 * An initialize with params the MCP schema does not allow is refused at the edge with -32602
 * Invalid params, naming where, under the request's id; no session object is woken and no
 * session id issued. A protocol version the server does not know is negotiated, not refused.
 */
import { listDurableObjectIds } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { errorOf, initializeRequest, messages, postRaw } from '../support/mcp-http.ts';
import { SseReader } from '../support/sse-reader.ts';

const valid = initializeRequest().params;

describe('an initialize whose params are not the schema’s', () => {
  it.each([
    ['no params', undefined, 'params: '],
    ['protocolVersion a number', { ...valid, protocolVersion: 20251125 }, 'params.protocolVersion: '],
    ['capabilities an array', { ...valid, capabilities: [] }, 'params.capabilities: '],
    ['clientInfo missing', { protocolVersion: valid.protocolVersion, capabilities: {} }, 'params.clientInfo: '],
    ['clientInfo without its version', { ...valid, clientInfo: { name: 'test' } }, 'params.clientInfo.version: '],
    ['clientInfo.title a number', { ...valid, clientInfo: { ...valid.clientInfo, title: 5 } }, 'params.clientInfo.title: '],
  ])('%s: 400 -32602 naming the member, under the request id, and no session', async (_, params, where) => {
    const before = (await listDurableObjectIds(env.MCP_SESSION)).length;
    const response = await postRaw({ jsonrpc: '2.0', id: 'init-7', method: 'initialize', ...(params !== undefined && { params }) });
    expect(response.headers.get('Mcp-Session-Id')).toBeNull();
    const { status, code, body } = await errorOf(response);
    expect({ status, code, id: body.id }).toEqual({ status: 400, code: -32602, id: 'init-7' });
    expect(body.error.message).toMatch(/^Invalid params: initialize /);
    expect(body.error.message).toContain(where);
    expect((await listDurableObjectIds(env.MCP_SESSION)).length).toBe(before);
  });

  it('names at most three problems', async () => {
    const response = await postRaw({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { clientInfo: { title: 1, icons: 2 } } });
    const { body } = await errorOf(response);
    expect(body.error.message.split('; ')).toHaveLength(3);
  });

  it('a protocol version the server does not know is answered with one it supports', async () => {
    const response = await postRaw({ ...initializeRequest(), params: { ...valid, protocolVersion: '1999-01-01' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('Mcp-Session-Id')).not.toBeNull();
    const [answer] = messages(await new SseReader(response).all());
    expect(answer).toMatchObject({ id: 0, result: { protocolVersion: '2025-11-25' } });
  });
});
