/**
 * Raw HTTP against the Worker under test (`exports.default.fetch`), exactly as a client on
 * the wire would speak it. No MCP client library: tests assert on bytes and headers.
 */
import { exports } from 'cloudflare:workers';
import { SseReader, message, type ReadEvent } from './sse-reader.ts';

export const URL_ = 'http://localhost/mcp';
export const BASE_HEADERS = { Host: 'localhost' } as const;
export const POST_HEADERS = {
  ...BASE_HEADERS,
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
} as const;

export type Version = '2025-11-25' | '2025-06-18' | '2025-03-26';

export function fetchWorker(init: RequestInit & { headers?: Record<string, string> }, url = URL_): Promise<Response> {
  return exports.default.fetch(new Request(url, init));
}

export function postRaw(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetchWorker({
    method: 'POST',
    headers: { ...POST_HEADERS, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export const initializeRequest = (
  version: Version = '2025-11-25',
  capabilities: Record<string, unknown> = {},
  id: number | string = 0,
) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: version, capabilities, clientInfo: { name: 'test', version: '1.0.0' } },
});

export interface Session {
  readonly id: string;
  readonly version: Version;
  /** The session's first epoch (`Mcp-Session-Epoch` of its `initialize` answer): drawn at random. */
  readonly epoch: number;
  /** The event id of `seq` on `stream`, in the first epoch (or `epoch`). */
  eventId(stream: number | string, seq: number, epoch?: number): string;
  post(body: unknown, headers?: Record<string, string>): Promise<Response>;
  get(lastEventId?: string, headers?: Record<string, string>): Promise<Response>;
  delete(headers?: Record<string, string>): Promise<Response>;
  /** POSTs one request and returns every event of its stream (the stream must end). */
  call(method: string, params?: Record<string, unknown>, id?: number | string): Promise<ReadEvent[]>;
}

let nextId = 1;

/**
 * Initializes a session (and sends notifications/initialized). `auth`: headers every request
 * of the session carries (a token), unless a request overrides them.
 */
export async function openSession(
  version: Version = '2025-11-25',
  capabilities: Record<string, unknown> = {},
  auth: Record<string, string> = {},
): Promise<Session> {
  const response = await postRaw(initializeRequest(version, capabilities), auth);
  if (response.status !== 200) throw new Error(`initialize failed: ${response.status} ${await response.text()}`);
  const id = response.headers.get('Mcp-Session-Id');
  if (id === null) throw new Error('no session id');
  const epoch = Number(response.headers.get('Mcp-Session-Epoch'));
  await response.body?.cancel();
  const sessionHeaders = { ...auth, 'Mcp-Session-Id': id, 'MCP-Protocol-Version': version };
  const session: Session = {
    id,
    version,
    epoch,
    eventId: (stream, seq, inEpoch = epoch) => `${inEpoch}-${stream}-${seq}`,
    post: (body, headers = {}) => postRaw(body, { ...sessionHeaders, ...headers }),
    get: (lastEventId, headers = {}) =>
      fetchWorker({
        method: 'GET',
        headers: {
          ...BASE_HEADERS,
          Accept: 'text/event-stream',
          ...sessionHeaders,
          ...(lastEventId !== undefined && { 'Last-Event-ID': lastEventId }),
          ...headers,
        },
      }),
    delete: (headers = {}) => fetchWorker({ method: 'DELETE', headers: { ...BASE_HEADERS, ...sessionHeaders, ...headers } }),
    async call(method, params = {}, id = nextId++) {
      const reply = await session.post({ jsonrpc: '2.0', id, method, params });
      if (reply.status !== 200) throw new Error(`${method} failed: ${reply.status} ${await reply.text()}`);
      const reader = new SseReader(reply);
      try {
        return await reader.all();
      } finally {
        await reader.cancel();
      }
    },
  };
  const initialized = await session.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  if (initialized.status !== 202) throw new Error(`notifications/initialized: ${initialized.status}`);
  return session;
}

/** The messages of a list of events, skipping the priming event. */
export const messages = (events: readonly ReadEvent[]) => events.filter((e) => e.data !== '').map(message);

export const toolCall = (name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => ({
  name,
  arguments: args,
  ...(meta !== undefined && { _meta: meta }),
});

/** A whole `tools/call` request with id `id`, as a client posts it. */
export const callTool = (id: number | string, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0' as const,
  id,
  method: 'tools/call',
  params: toolCall(name, args, meta),
});

export async function errorOf(response: Response): Promise<{ status: number; code: number; reason?: string; body: any }> {
  const body = (await response.json()) as any;
  return { status: response.status, code: body?.error?.code, reason: body?.error?.data?.reason, body };
}
