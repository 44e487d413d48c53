/**
 * The edge Worker: stateless checks, then routing to the session's Durable Object.
 * It holds no session state and makes no protocol decision of its own; every check is a
 * core function, every rejection goes through errorResponse().
 */
import { Hono, type Context } from 'hono';
import { readConfig, type ConfigVars, type TransportConfig } from './config.ts';
import { asHttpError, errorResponse, httpErrors, McpHttpError } from './core/errors.ts';
import { isInitializeRequest, parseJsonRpcBody } from './core/jsonrpc.ts';
import {
  checkGetAccept,
  checkHostAndOrigin,
  checkJsonContentType,
  checkPostAccept,
  readDeclaredLength,
  readBoundedText,
  readCursor,
  readProtocolVersion,
  readSessionId,
  requireSessionId,
  SESSION_ID_HEADER,
} from './core/request-checks.ts';
import { newSessionId } from './core/session-id.ts';
import { EXPOSED_HEADERS, OBJECT_ROUTES, STREAM_HEADERS } from './session/wire.ts';

/** All the Worker needs of the session namespace: name → object, and a way to fetch it. */
export interface SessionNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): { fetch(request: Request): Promise<Response> };
}

export interface McpWorkerOptions<E> {
  /** The Durable Object namespace whose class extends McpSessionObject. */
  readonly sessions: (env: E) => SessionNamespace;
  /** The endpoint path. Default `/mcp`. */
  readonly path?: string;
}

const ALLOWED_METHODS = ['GET', 'POST', 'DELETE', 'OPTIONS'];
const ALLOWED_REQUEST_HEADERS = ['Content-Type', 'Accept', 'Authorization', SESSION_ID_HEADER, 'MCP-Protocol-Version', 'Last-Event-ID'];

type Env<E> = { Bindings: E; Variables: { config: TransportConfig } };

export function createMcpWorker<E extends ConfigVars>({ sessions, path = '/mcp' }: McpWorkerOptions<E>) {
  const app = new Hono<Env<E>>();
  let cached: { vars: E; config: TransportConfig } | undefined;

  app.use(path, async (c, next) => {
    const started = Date.now();
    if (cached?.vars !== c.env) cached = { vars: c.env, config: readConfig(c.env) };
    c.set('config', cached.config);
    await next();
    if (cached.config.requestLog) logRequest(c, started);
  });

  // DNS-rebinding defence first: a forbidden Host or Origin learns nothing else.
  app.use(path, async (c, next) => {
    const { allowedHosts, allowedOrigins } = c.get('config');
    checkHostAndOrigin(c.req.raw.headers, allowedHosts, allowedOrigins, () => new URL(c.req.url).host);
    await next();
    const origin = c.req.header('Origin');
    if (origin !== undefined) {
      // Responses from a Durable Object have immutable headers: copy before adding CORS.
      const response = new Response(c.res.body, c.res);
      response.headers.set('Access-Control-Allow-Origin', origin);
      response.headers.set('Access-Control-Expose-Headers', EXPOSED_HEADERS.join(', '));
      response.headers.append('Vary', 'Origin');
      c.res = undefined;
      c.res = response;
    }
  });

  app.options(path, () =>
    new Response(null, {
      status: 204,
      headers: {
        'Access-Control-Allow-Methods': ALLOWED_METHODS.join(', '),
        'Access-Control-Allow-Headers': ALLOWED_REQUEST_HEADERS.join(', '),
        'Access-Control-Max-Age': '86400',
      },
    }),
  );

  app.post(path, async (c) => {
    const { headers } = c.req.raw;
    checkPostAccept(headers);
    checkJsonContentType(headers);
    readProtocolVersion(headers);
    const sessionId = readSessionId(headers);
    const { maxBodyBytes } = c.get('config');
    if (sessionId !== undefined) {
      // The session's object reads, bounds and validates the body itself (it must: it acts on
      // it), so a body of declared length within bounds goes to it unread: reading it here too
      // cost a second body hop on every call (~0.2 ms of W1's ~5). A body of unknown length is
      // read here, so an oversized one is cut off by the edge rather than mid-forward.
      const declared = readDeclaredLength(headers, maxBodyBytes) !== undefined;
      const body = declared ? c.req.raw.body : await readBoundedText(c.req.raw, maxBodyBytes);
      return forward(c, sessionId, OBJECT_ROUTES.session, body);
    }
    // Without a session the body decides everything: only an initialize starts one.
    const body = await readBoundedText(c.req.raw, maxBodyBytes);
    const { messages, batch } = parseJsonRpcBody(body);
    // "The initialize request MUST NOT be part of a JSON-RPC batch."
    if (batch || messages.length !== 1 || !isInitializeRequest(messages[0]!)) {
      throw httpErrors.badRequest('Mcp-Session-Id header is required (only an initialize request starts a session)');
    }
    return forward(c, newSessionId(), OBJECT_ROUTES.create, body);
  });

  app.get(path, (c) => {
    // Hono routes HEAD to GET handlers; HEAD is not part of the transport.
    if (c.req.method === 'HEAD') throw httpErrors.methodNotAllowed(ALLOWED_METHODS);
    const { headers } = c.req.raw;
    checkGetAccept(headers);
    readProtocolVersion(headers);
    const sessionId = requireSessionId(headers);
    readCursor(headers);
    return forward(c, sessionId, OBJECT_ROUTES.session);
  });

  app.delete(path, (c) => {
    readProtocolVersion(c.req.raw.headers);
    return forward(c, requireSessionId(c.req.raw.headers), OBJECT_ROUTES.session);
  });

  app.all(path, () => {
    throw httpErrors.methodNotAllowed(ALLOWED_METHODS);
  });

  app.notFound(() => errorResponse(new McpHttpError(404, -32000, `Not found: the MCP endpoint is ${path}`)));

  app.onError((error) => {
    const failure = asHttpError(error);
    if (!(error instanceof McpHttpError)) console.error(JSON.stringify({ msg: 'mcp.worker.error', error: String(error) }));
    return errorResponse(failure);
  });

  /** Sends the request to the session's object; its response streams straight back. */
  function forward(c: Context<Env<E>>, sessionId: string, route: string, body?: BodyInit | null): Promise<Response> {
    const stub = sessions(c.env).get(sessions(c.env).idFromName(sessionId));
    const headers = new Headers(c.req.raw.headers);
    headers.set(SESSION_ID_HEADER, sessionId);
    return stub.fetch(new Request(`https://session.internal${route}`, {
      method: c.req.method,
      headers,
      body: body ?? null,
      signal: c.req.raw.signal,
    }));
  }

  return app;
}

/** One structured line per request, readable in `wrangler tail`; never message bodies. */
function logRequest<E extends ConfigVars>(c: Context<Env<E>>, started: number): void {
  const session = c.res.headers.get(SESSION_ID_HEADER) ?? c.req.header(SESSION_ID_HEADER);
  console.log(
    JSON.stringify({
      msg: 'mcp.request',
      method: c.req.method,
      // A prefix identifies the session in logs without making logs a session-id store.
      session: session?.slice(0, 8) ?? null,
      stream: numberOrNull(c.res.headers.get(STREAM_HEADERS.streamId)),
      resumed: c.res.headers.get(STREAM_HEADERS.resumed) ?? null,
      epoch: numberOrNull(c.res.headers.get(STREAM_HEADERS.epoch)),
      status: c.res.status,
      duration_ms: Date.now() - started,
    }),
  );
}

const numberOrNull = (value: string | null) => (value === null ? null : Number(value));
