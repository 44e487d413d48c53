/**
 * Raw 2026-07-28 requests against the Worker under test: every request carries its revision,
 * client capabilities and info in `_meta`, and the routing headers (`MCP-Protocol-Version`,
 * `Mcp-Method`, `Mcp-Name`). No session.
 */
import { exports } from 'cloudflare:workers';
import { fetchWorker, URL_ } from './mcp-http.ts';

export const MODERN = '2026-07-28';

let nextId = 1;

/** A 2026-07-28 request's headers, `headers` over them. */
const modernHeaders = (headers: Record<string, string>) => ({
  Host: 'localhost',
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'MCP-Protocol-Version': MODERN,
  ...headers,
});

/** POSTs `body` as it is, with a 2026-07-28 request's headers and `headers` over them. */
export function postModernRaw(body: string, headers: Record<string, string> = {}) {
  return fetchWorker({ method: 'POST', headers: modernHeaders(headers), body });
}

/**
 * A 2026-07-28 request of `method` as a Request, for a Worker of the test's own: its revision,
 * capabilities and client info in `_meta`, its routing headers (`Mcp-Method`; `Mcp-Name` from
 * `params.name`, `uri` or `taskId`), `headers` over them. modernRequest sends one to the fixture.
 */
export function modernRequestOf(
  method: string,
  params: Record<string, unknown> = {},
  capabilities: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  id: number = nextId++,
): Request {
  const name = [params.name, params.uri, params.taskId].find((value) => typeof value === 'string') as string | undefined;
  const { _meta, ...rest } = params as { _meta?: Record<string, unknown> };
  return new Request(URL_, {
    method: 'POST',
    headers: modernHeaders({ 'Mcp-Method': method, ...(name !== undefined && { 'Mcp-Name': name }), ...headers }),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method,
      params: {
        ...rest,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientCapabilities': capabilities,
          'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1.0.0' },
          ..._meta,
        },
      },
    }),
  });
}

export function modernRequest(
  method: string,
  params: Record<string, unknown> = {},
  capabilities: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  return exports.default.fetch(modernRequestOf(method, params, capabilities, headers));
}

/** The one JSON-RPC message of a JSON answer, or the last one of an SSE answer. */
export async function answerOf(response: Response): Promise<any> {
  const text = await response.text();
  if (!(response.headers.get('Content-Type') ?? '').includes('text/event-stream')) return JSON.parse(text);
  const data = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!));
  return data.at(-1);
}
