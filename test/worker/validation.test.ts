/**
 * Every validation row of the transport, through the real Worker and Durable Object.
 * Each rejection is a JSON-RPC error body with the documented status and code.
 */
import { listDurableObjectIds, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import {
  BASE_HEADERS,
  errorOf,
  fetchWorker,
  initializeRequest,
  messages,
  openSession,
  postRaw,
  POST_HEADERS,
} from '../support/mcp-http.ts';
import { modernRequest } from '../support/modern-http.ts';

const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };

/** A body as a stream, so the request carries no Content-Length. */
function streamOf(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 64 * 1024) controller.enqueue(bytes.subarray(at, at + 64 * 1024));
      controller.close();
    },
  });
}
const wellFormedUnknownId = 'A'.repeat(43);

describe('requests refused at the edge', () => {
  it.each([
    ['POST without Accept', { method: 'POST', headers: { ...POST_HEADERS, Accept: '' } }, 406, -32000],
    ['POST accepting only JSON', { method: 'POST', headers: { ...POST_HEADERS, Accept: 'application/json' } }, 406, -32000],
    ['POST accepting only SSE', { method: 'POST', headers: { ...POST_HEADERS, Accept: 'text/event-stream' } }, 406, -32000],
    ['POST with text/plain body', { method: 'POST', headers: { ...POST_HEADERS, 'Content-Type': 'text/plain' } }, 415, -32000],
    [
      'POST with an unsupported protocol version',
      { method: 'POST', headers: { ...POST_HEADERS, 'MCP-Protocol-Version': '2024-11-05' } },
      400,
      -32000,
    ],
    [
      'GET without text/event-stream',
      { method: 'GET', headers: { ...BASE_HEADERS, Accept: 'application/json', 'Mcp-Session-Id': wellFormedUnknownId } },
      406,
      -32000,
    ],
    ['GET without a session id', { method: 'GET', headers: { ...BASE_HEADERS, Accept: 'text/event-stream' } }, 400, -32000],
    ['DELETE without a session id', { method: 'DELETE', headers: { ...BASE_HEADERS } }, 400, -32000],
    ['PUT', { method: 'PUT', headers: { ...BASE_HEADERS } }, 405, -32000],
    ['PATCH', { method: 'PATCH', headers: { ...BASE_HEADERS } }, 405, -32000],
    ['a foreign Host', { method: 'POST', headers: { ...POST_HEADERS, Host: 'evil.example.com' } }, 403, -32000],
    ['a foreign Origin', { method: 'POST', headers: { ...POST_HEADERS, Origin: 'http://evil.example.com' } }, 403, -32000],
  ] as const)('%s is refused with %i', async (_name, init, status, code) => {
    const body = init.method === 'POST' ? JSON.stringify(initializeRequest()) : undefined;
    const response = await fetchWorker({ ...init, headers: { ...init.headers }, ...(body !== undefined && { body }) });
    const error = await errorOf(response);
    expect(error.status).toBe(status);
    expect(error.code).toBe(code);
    expect(response.headers.get('Content-Type')).toBe('application/json');
  });

  it("an unsupported MCP-Protocol-Version on a session's request lists what is served, in the 2026-07-28 refusal's shape", async () => {
    const session = await fetchWorker({
      method: 'GET',
      headers: {
        ...BASE_HEADERS,
        Accept: 'text/event-stream',
        'Mcp-Session-Id': wellFormedUnknownId,
        'MCP-Protocol-Version': '2024-11-05',
      },
    });
    expect(session.status).toBe(400);
    const sessionful = (await session.json()) as { error: { code: number; data: unknown } };
    expect(sessionful.error).toMatchObject({
      code: -32000,
      data: { supported: ['2025-11-25', '2025-06-18', '2025-03-26'], requested: '2024-11-05' },
    });
    // The 2026-07-28 path's own refusal (the SDK's), for the same shape.
    const modern = await modernRequest(
      'server/discover',
      { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      {},
      {
        'MCP-Protocol-Version': '2099-01-01',
      },
    );
    const stateless = (await modern.json()) as { error: { code: number; data: Record<string, unknown> } };
    expect(stateless.error).toMatchObject({ code: -32022, data: { supported: ['2026-07-28'], requested: '2099-01-01' } });
    expect(Object.keys(sessionful.error.data as object).sort()).toEqual(Object.keys(stateless.error.data).sort());
  });

  it('HEAD is not a GET: 405, and no session object is asked', async () => {
    const response = await fetchWorker({
      method: 'HEAD',
      headers: { ...BASE_HEADERS, Accept: 'text/event-stream', 'Mcp-Session-Id': wellFormedUnknownId },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('Allow')).toBe('GET, POST, DELETE, OPTIONS');
  });

  it('a 405 names the allowed methods', async () => {
    const response = await fetchWorker({ method: 'PUT', headers: { ...BASE_HEADERS } });
    expect(response.headers.get('Allow')).toBe('GET, POST, DELETE, OPTIONS');
  });

  it('a body that is not JSON is a parse error (-32700)', async () => {
    expect(await errorOf(await postRaw('{"jsonrpc":'))).toMatchObject({ status: 400, code: -32700 });
  });

  it('JSON that is not JSON-RPC is an invalid request (-32600)', async () => {
    expect(await errorOf(await postRaw({ hello: 'world' }))).toMatchObject({ status: 400, code: -32600 });
  });

  it('a body over 4 MiB is refused with 413', async () => {
    const big = JSON.stringify({ ...initializeRequest(), pad: 'x'.repeat(4 * 1024 * 1024) });
    expect(await errorOf(await postRaw(big))).toMatchObject({ status: 413, code: -32000 });
  });

  it('a request other than initialize without a session id is refused with 400', async () => {
    expect(await errorOf(await postRaw(ping))).toMatchObject({ status: 400, code: -32000 });
  });

  it('initialize inside a batch does not start a session', async () => {
    expect(await errorOf(await postRaw([initializeRequest()]))).toMatchObject({ status: 400 });
  });

  it("a malformed session id is refused with 400, and another server's is an unknown session (404), neither waking any Durable Object", async () => {
    const unknown = await postRaw(ping, { 'Mcp-Session-Id': wellFormedUnknownId, 'MCP-Protocol-Version': '2025-11-25' });
    const unknownBody = await unknown.text();
    const before = (await listDurableObjectIds(env.MCP_SESSION)).length;
    for (const id of ['has space', 'A'.repeat(1025)]) {
      expect(await errorOf(await postRaw(ping, { 'Mcp-Session-Id': id }))).toMatchObject({ status: 400 });
    }
    for (const id of ['short', 'A'.repeat(44), `${'A'.repeat(42)}!`, 'ab'.repeat(32), '123e4567-e89b-12d3-a456-426614174000']) {
      const foreign = await postRaw(ping, { 'Mcp-Session-Id': id, 'MCP-Protocol-Version': '2025-11-25' });
      expect(foreign.status).toBe(404);
      expect(await foreign.text(), 'the same answer as an unknown id of this server').toBe(unknownBody);
    }
    expect((await listDurableObjectIds(env.MCP_SESSION)).length).toBe(before);
  });

  it('a malformed Last-Event-ID is refused with 400 malformed_cursor', async () => {
    const session = await openSession();
    const error = await errorOf(await session.get('not-a-cursor'));
    expect(error).toMatchObject({ status: 400, code: -32000, reason: 'malformed_cursor' });
  });
});

describe('the endpoint spelled otherwise', () => {
  it.each(['/%6Dcp', '/m%63p', '/%6D%63%70'])('%s is not the endpoint: 404, as any other path', async (spelled) => {
    const response = await fetchWorker(
      { method: 'POST', headers: POST_HEADERS, body: JSON.stringify(initializeRequest()) },
      `http://localhost${spelled}`,
    );
    expect(await errorOf(response)).toMatchObject({ status: 404, code: -32000 });
    expect(response.headers.get('Mcp-Session-Id')).toBeNull();
  });
});

describe('requests refused by the session', () => {
  it.each([
    ['POST', () => postRaw(ping, { 'Mcp-Session-Id': wellFormedUnknownId })],
    [
      'GET',
      () =>
        fetchWorker({ method: 'GET', headers: { ...BASE_HEADERS, Accept: 'text/event-stream', 'Mcp-Session-Id': wellFormedUnknownId } }),
    ],
    ['DELETE', () => fetchWorker({ method: 'DELETE', headers: { ...BASE_HEADERS, 'Mcp-Session-Id': wellFormedUnknownId } })],
  ])('%s to an unknown session is 404 and creates no storage', async (_method, send) => {
    expect(await errorOf(await send())).toMatchObject({ status: 404, code: -32001 });
    const stub = env.MCP_SESSION.get(env.MCP_SESSION.idFromName(wellFormedUnknownId));
    const tables = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql.exec(`SELECT name FROM sqlite_master WHERE type = 'table'`).toArray(),
    );
    expect(tables).toEqual([]);
  });

  // The Worker forwards a session's body of declared length unread; the object parses it
  // before it looks the session up, so the answers are the edge's, for live and unknown
  // sessions alike, and an unknown session still gets no storage.
  it.each([
    ['not JSON', '{"jsonrpc":', -32700],
    ['not JSON-RPC', JSON.stringify({ hello: 'world' }), -32600],
  ] as const)('a session body that is %s is refused with 400 by the object', async (_name, body, code) => {
    const session = await openSession();
    for (const id of [session.id, wellFormedUnknownId]) {
      expect(await errorOf(await postRaw(body, { 'Mcp-Session-Id': id, 'MCP-Protocol-Version': '2025-11-25' }))).toMatchObject({
        status: 400,
        code,
      });
    }
    const unknown = env.MCP_SESSION.get(env.MCP_SESSION.idFromName(wellFormedUnknownId));
    const tables = await runInDurableObject(unknown, (_instance, state) =>
      state.storage.sql.exec(`SELECT name FROM sqlite_master WHERE type = 'table'`).toArray(),
    );
    expect(tables).toEqual([]);
  });

  it('a session body of unknown length is read at the edge: within bounds it is served, over them refused with 413', async () => {
    const session = await openSession();
    const post = (body: string) =>
      fetchWorker({
        method: 'POST',
        headers: { ...POST_HEADERS, 'Mcp-Session-Id': session.id, 'MCP-Protocol-Version': '2025-11-25' },
        body: streamOf(body),
      });
    const answered = await post(JSON.stringify({ jsonrpc: '2.0', id: 'streamed', method: 'ping' }));
    expect(answered.status).toBe(200);
    expect(await answered.text()).toContain('"id":"streamed"');
    const refused = await post(JSON.stringify({ ...ping, pad: 'x'.repeat(4 * 1024 * 1024) }));
    expect(await errorOf(refused)).toMatchObject({ status: 413, code: -32000 });
  });

  it('a session body declared over 4 MiB is refused with 413', async () => {
    const session = await openSession();
    const big = JSON.stringify({ ...ping, pad: 'x'.repeat(4 * 1024 * 1024) });
    expect(await errorOf(await session.post(big))).toMatchObject({ status: 413, code: -32000 });
  });

  // What the SDK's strict schemas would drop unanswered is refused before the id is
  // registered: the POST is answered, and the id is still free.
  it.each([
    ['a fractional id', { jsonrpc: '2.0', id: 1.5, method: 'ping' }],
    ['a non-object _meta', { jsonrpc: '2.0', id: 'meta', method: 'ping', params: { _meta: 5 } }],
    ['a fractional progress token', { jsonrpc: '2.0', id: 'token', method: 'ping', params: { _meta: { progressToken: 1.5 } } }],
    ['an unknown member', { jsonrpc: '2.0', id: 'member', method: 'ping', extra: true }],
  ])('a request with %s is refused with 400, and its id stays free', async (_name, request) => {
    const session = await openSession();
    expect(await errorOf(await session.post(request))).toMatchObject({ status: 400, code: -32600 });
    if (typeof request.id !== 'string') return;
    const [answer] = messages(await session.call('ping', {}, request.id));
    expect(answer).toEqual({ jsonrpc: '2.0', id: request.id, result: {} });
  });

  it('an initialize with a fractional id is refused with 400, and no session is created', async () => {
    const response = await postRaw({ ...initializeRequest(), id: 1.5 });
    expect(response.headers.get('Mcp-Session-Id')).toBeNull();
    expect(await errorOf(response)).toMatchObject({ status: 400, code: -32600 });
  });

  it('a second initialize on a session is refused with 400', async () => {
    const session = await openSession();
    expect(await errorOf(await session.post(initializeRequest('2025-11-25', {}, 99)))).toMatchObject({ status: 400 });
  });

  it.each(['2025-11-25', '2025-06-18'] as const)('a batch on a %s session is refused with 400', async (version) => {
    const session = await openSession(version);
    expect(await errorOf(await session.post([ping]))).toMatchObject({ status: 400, code: -32600 });
  });

  it('a batch on a 2025-03-26 session is answered, one event per response', async () => {
    const session = await openSession('2025-03-26');
    const response = await session.post([
      { jsonrpc: '2.0', id: 'a', method: 'ping' },
      { jsonrpc: '2.0', id: 'b', method: 'tools/list' },
    ]);
    expect(response.status).toBe(200);
    const text = await response.text();
    const ids = [...text.matchAll(/^data: (.+)$/gm)].map((m) => JSON.parse(m[1]!).id);
    expect(ids.sort()).toEqual(['a', 'b']);
  });

  it('notifications and responses alone are accepted with 202 and no body', async () => {
    const session = await openSession();
    const response = await session.post({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
    // An error response about no request in particular: MCP's schema lets it leave out its id.
    const idless = await session.post({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' } });
    expect(idless.status).toBe(202);
    expect(await idless.text()).toBe('');
  });
});

describe('CORS', () => {
  it('answers a preflight from an allowed origin', async () => {
    const response = await fetchWorker({
      method: 'OPTIONS',
      headers: { ...BASE_HEADERS, Origin: 'http://localhost:6274', 'Access-Control-Request-Method': 'POST' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('Access-Control-Allow-Origin')).toBe('http://localhost:6274');
    expect(response.headers.get('Access-Control-Allow-Headers')).toContain('Mcp-Session-Id');
  });

  it('lets a browser send the 2026-07-28 headers: Mcp-Method, Mcp-Name and the parameter headers it asks for', async () => {
    const response = await fetchWorker({
      method: 'OPTIONS',
      headers: {
        ...BASE_HEADERS,
        Origin: 'http://localhost:6274',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type, mcp-method, mcp-name, mcp-param-region, x-other',
      },
    });
    expect(response.status).toBe(204);
    const allowed = response.headers.get('Access-Control-Allow-Headers')!.toLowerCase().split(/,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(['mcp-method', 'mcp-name', 'mcp-param-region', 'mcp-protocol-version']));
    expect(allowed).not.toContain('x-other');
  });

  it('refuses a preflight from a foreign origin', async () => {
    const response = await fetchWorker({ method: 'OPTIONS', headers: { ...BASE_HEADERS, Origin: 'http://evil.example.com' } });
    expect(response.status).toBe(403);
    expect(response.headers.get('Access-Control-Allow-Origin')).toBeNull();
  });

  it('exposes the session and stream headers to browser clients', async () => {
    const response = await postRaw(initializeRequest(), { Origin: 'http://127.0.0.1:5173' });
    await response.body?.cancel();
    expect(response.headers.get('Access-Control-Allow-Origin')).toBe('http://127.0.0.1:5173');
    const exposed = response.headers.get('Access-Control-Expose-Headers')?.split(/,\s*/);
    expect(exposed).toEqual(
      expect.arrayContaining(['Mcp-Session-Id', 'Mcp-Session-Epoch', 'Mcp-Stream-Id', 'Mcp-Stream-Resumed', 'Retry-After']),
    );
  });
});
