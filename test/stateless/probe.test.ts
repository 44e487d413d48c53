/**
 * What a 2026-07-28 probe gets, in every fallback case: never a 5xx. The official TS client
 * (`probeClassifier.ts`) reads only `-32022` with `data.supported` as "a modern server"; every
 * other 4xx answer means "fall back to initialize", and 401/403/5xx are hard errors. So a
 * server that does not serve the probed revision must say -32022 with what it does serve, and
 * nothing on either path may fail with a 5xx.
 */
import { createExecutionContext } from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { createMcpWorker } from '../../src/lib.ts';
import { MODERN } from '../support/modern-http.ts';

const envelope = (version = MODERN, extra: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': version,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'probe', version: '1' },
  ...extra,
});

function probe(headers: Record<string, string>, body: unknown) {
  return new Request('http://localhost/mcp', {
    method: 'POST',
    headers: { Host: 'localhost', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const discover = (meta: unknown = envelope()) => ({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } });
const HEADERS = { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'server/discover' };

const CASES: { name: string; request: () => Request; status: number; code?: number }[] = [
  { name: 'a well-formed probe', request: () => probe(HEADERS, discover()), status: 200 },
  {
    name: 'a revision nobody serves',
    request: () => probe({ ...HEADERS, 'MCP-Protocol-Version': '2099-01-01' }, discover(envelope('2099-01-01'))),
    status: 400,
    code: -32022,
  },
  {
    name: 'no envelope',
    request: () => probe(HEADERS, { jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} }),
    status: 400,
    code: -32602,
  },
  {
    name: 'a header that contradicts the body',
    request: () => probe({ ...HEADERS, 'Mcp-Method': 'tools/list' }, discover()),
    status: 400,
    code: -32020,
  },
  {
    name: 'a removed method',
    request: () => probe({ ...HEADERS, 'Mcp-Method': 'ping' }, { ...discover(), method: 'ping' }),
    status: 404,
    code: -32601,
  },
  {
    name: 'an unknown method',
    request: () => probe({ ...HEADERS, 'Mcp-Method': 'no/such' }, { ...discover(), method: 'no/such' }),
    status: 404,
    code: -32601,
  },
  { name: 'a body that is not JSON', request: () => probe(HEADERS, '{"jsonrpc":'), status: 400 },
  { name: 'a claim without the header', request: () => probe({}, discover()), status: 400, code: -32020 },
];

describe('a 2026-07-28 probe, served', () => {
  it.each(CASES)('$name: $status', async ({ request, status, code }) => {
    const answer = await exports.default.fetch(request());
    expect(answer.status).toBe(status);
    if (code !== undefined) expect(((await answer.json()) as any).error.code).toBe(code);
  });

  it('unsupported: -32022 names the revisions that are served', async () => {
    const answer = await exports.default.fetch(
      probe({ ...HEADERS, 'MCP-Protocol-Version': '2099-01-01' }, discover(envelope('2099-01-01'))),
    );
    expect(((await answer.json()) as any).error.data).toMatchObject({ supported: ['2026-07-28'], requested: '2099-01-01' });
  });
});

describe('a 2026-07-28 probe to a Worker without a modern factory', () => {
  const sessionsOnly = createMcpWorker<Env>({ sessions: (e) => e.MCP_SESSION });
  const send = (request: Request) => sessionsOnly.fetch(request, env, createExecutionContext());

  it('gets -32022 naming the sessionful revisions, so the client opens a session', async () => {
    const answer = await send(probe(HEADERS, discover()));
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({
      id: 1,
      error: { code: -32022, data: { supported: ['2025-11-25', '2025-06-18', '2025-03-26'], requested: MODERN } },
    });
  });

  it.each(CASES.map(({ name, request }) => ({ name, request })))('$name: never a 5xx', async ({ request }) => {
    expect((await send(request())).status).toBeLessThan(500);
  });

  it('still serves a session', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const answer = await send(probe({}, init));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('Mcp-Session-Id')).not.toBeNull();
    await answer.body?.cancel();
  });
});
