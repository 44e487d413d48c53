/**
 * Every name and number this server puts on the wire, in one place: header names, methods,
 * the Worker→object routes and the JSON-RPC error codes. Nothing else spells them.
 */

/** Request and response headers of MCP's Streamable HTTP transport, and this server's own. */
export const HEADERS = {
  sessionId: 'Mcp-Session-Id',
  protocolVersion: 'MCP-Protocol-Version',
  /** 2026-07-28: the request's method, and the name it acts on (tool, resource, task). */
  method: 'Mcp-Method',
  name: 'Mcp-Name',
  lastEventId: 'Last-Event-ID',
  /** The session's current epoch, on every response of a session. */
  epoch: 'Mcp-Session-Epoch',
  /** The stream number an SSE response carries. */
  streamId: 'Mcp-Stream-Id',
  /** `true` when the SSE response continues an existing stream, `false` when it starts one. */
  resumed: 'Mcp-Stream-Resumed',
} as const;

/** The headers of every SSE response. */
export const SSE_RESPONSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache, no-transform',
} as const;

/** The methods of the transport; anything else is 405. */
export const ALLOWED_METHODS = ['GET', 'POST', 'DELETE', 'OPTIONS'] as const;

/**
 * Every method of MCP's JSON-RPC messages, in either direction: revision 2025-11-25 (and the
 * earlier ones it contains), 2026-07-28 (`server/discover`, `subscriptions/listen`), and the
 * Tasks extension's drafts this server serves (`tasks/update`, SEP-2694's `tasks/stream`,
 * `notifications/tasks*`). What the metrics may name a request's method by (core/metrics.ts):
 * a client's `Mcp-Method` is any string it likes, and a method not here is counted as `other`.
 */
export const MCP_METHODS = [
  'initialize',
  'ping',
  'server/discover',
  'subscriptions/listen',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'sampling/createMessage',
  'elicitation/create',
  'roots/list',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
  'tasks/update',
  'tasks/stream',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/message',
  'notifications/roots/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/elicitation/complete',
  'notifications/subscriptions/acknowledged',
  'notifications/tasks',
  'notifications/tasks/status',
  'notifications/tasks/event',
] as const;

export type McpMethod = (typeof MCP_METHODS)[number];

/** What a browser client may send (CORS preflight). */
export const ALLOWED_REQUEST_HEADERS = [
  'Content-Type',
  'Accept',
  'Authorization',
  HEADERS.sessionId,
  HEADERS.protocolVersion,
  HEADERS.lastEventId,
  // 2026-07-28 routing headers: every request carries the first, most the second.
  HEADERS.method,
  HEADERS.name,
] as const;

/**
 * 2026-07-28 parameter headers a tool declares (`x-mcp-header`): their names are the tool's,
 * under this prefix, so a preflight may ask for any of them.
 */
export const PARAM_HEADER_PREFIX = 'mcp-param-';

/** What a browser client may read (CORS). */
export const EXPOSED_HEADERS = [
  HEADERS.sessionId,
  HEADERS.protocolVersion,
  HEADERS.epoch,
  HEADERS.streamId,
  HEADERS.resumed,
  // The challenge: where the resource's metadata is, which scope is missing.
  'WWW-Authenticate',
  // How long a 429 (rate_limited, task_limit) asks the client to wait.
  'Retry-After',
] as const;

/** Paths of requests the Worker forwards to a session object (never reachable from outside). */
export const OBJECT_ROUTES = {
  /** POST `initialize` for a session id the Worker just minted. */
  create: '/create',
  /** Everything addressed to an existing session. */
  session: '/session',
  /** The WebSocket upgrade that carries an SSE connection's events on from the object (core/relay.ts). */
  relay: '/relay',
  /** GET: 204 while the session is stored, 404 once it is not (the principal registry's liveness check). */
  probe: '/probe',
  /** POST `{ reason }`: ends the session now (an operator, a revoked grant): its running calls are answered with an error first. */
  end: '/end',
} as const;

/** The origin of the URLs the Worker and the principal registry send a session object's requests to. */
export const SESSION_ORIGIN = 'https://session.internal';

/** Each route's URL as its senders spell it: the route of an object's request, found without parsing its URL. */
const ROUTE_OF_URL = new Map<string, string>(Object.values(OBJECT_ROUTES).map((route) => [`${SESSION_ORIGIN}${route}`, route]));

/** The path of a request to a session object: looked up for a URL spelled as its senders spell it (every one), else parsed. */
export const objectRouteOf = (url: string): string => ROUTE_OF_URL.get(url) ?? new URL(url).pathname;

/** Paths of requests to the event bus object (src/stateless/bus-object.ts). */
export const BUS_ROUTES = {
  /** WebSocket upgrade: an isolate with listeners receives every published event. */
  subscribe: '/subscribe',
  /** POST one event, sent on to every subscribed isolate. */
  publish: '/publish',
  /** GET how many listen streams the shard holds: `{sockets}`. */
  sockets: '/sockets',
  /** POST `{ tag }`: closes the streams of one principal (its tag), answering how many of each kind: `{ listens, events }`. */
  revoke: '/revoke',
  /** GET `?tag=<tag>`: how many streams of each kind the shard holds open under one tag now, `{ listens, events }`. */
  streams: '/streams',
} as const;

/** Paths of requests the Worker sends a task's object (src/tasks/task-object.ts), each a POST of JSON. */
export const TASK_ROUTES = {
  /** A new task: its id, the call it runs, its TTL and poll interval. */
  create: '/task/create',
  get: '/task/get',
  /** `{ inputResponses }` from `tasks/update`. */
  update: '/task/update',
  cancel: '/task/cancel',
  /** The principal's grant was revoked: the task fails with `grant_revoked`, its tool is stopped. */
  revoke: '/task/revoke',
  /** WebSocket upgrade: the task now and at every change, for a listen stream (tasks/task-listen.ts). */
  watch: '/task/watch',
  /** `{ after, id }` from `tasks/stream`: its refusal or result as JSON, or the first part of its SSE response (tasks/task-streams.ts). */
  stream: '/task/stream',
  /** WebSocket upgrade, with the relay header: continues a stream whose first part the Worker holds. */
  relay: '/task/relay',
  /** MCP Events task event source (tasks/task-sources.ts): a page of the timeline from a cursor, for a poll. */
  sourceRead: '/task/source/read',
  /** WebSocket upgrade, with `eventAttach`: an `events/stream` push stream's feed of the task's timeline. */
  sourceAttach: '/task/source/attach',
} as const;

/** Worker → event log object (events/event-log-object.ts); its other calls are RPC methods. */
export const EVENT_LOG_ROUTES = {
  /**
   * WebSocket upgrade, with `eventAttach`: a push stream's feed, from where its cursor says on:
   * the start decided, the backlog, then each occurrence as it is stored.
   */
  attach: '/events/attach',
} as const;

/**
 * Between the Worker and its objects only: the Worker never passes them on, and removes any a
 * client sends (all begin `Mcp-Internal-`). On an object's first answer to an SSE request,
 * `relay` names the connection the Worker should continue over a relay socket; on the upgrade
 * request it names the connection to bind.
 */
export const INTERNAL_HEADERS = {
  relay: 'Mcp-Internal-Relay',
  /** With `relay`: the connection's buffer as the object counts it, so the Worker acknowledges in step. */
  relayBuffer: 'Mcp-Internal-Relay-Buffer',
  /**
   * With `relay`: open the socket at once instead of after the bridge: the first answer
   * filled the buffer and the object has more (a long replay), so it waits for
   * acknowledgements, which only the socket carries.
   */
  relayNow: 'Mcp-Internal-Relay-Now',
  /** On every request to a session object: who is asking, as the Worker established it (auth/principal.ts). */
  principal: 'Mcp-Internal-Principal',
  /**
   * On a bus subscription: the tags (its principal's hash, and its grant's), space-separated,
   * its socket is kept under, so a revocation of either can close it.
   */
  listenTag: 'Mcp-Internal-Listen-Tag',
  /**
   * On a bus subscription: which kind of stream holds the socket, `listen` (a
   * `subscriptions/listen`; also when absent) or `events` (an `events/stream`), kept with the
   * socket so that a shard counts each kind apart (stateless/event-bus.ts `BusStreamKind`).
   */
  busStreamKind: 'Mcp-Internal-Bus-Stream-Kind',
  /**
   * The marks of its tags' last revocations on its shard, summed (bus-object.ts; marks only
   * move on): on the answer to a tagged subscription, and on a stream's reconnection, the sum its
   * first subscription was answered with — a larger sum now means the stream was revoked while
   * it was away (answered 403).
   */
  listenRevocations: 'Mcp-Internal-Listen-Revocations',
  /** On an event log attach: which log, from which cursor, as JSON (events/event-log-object.ts `AttachRequest`). */
  eventAttach: 'Mcp-Internal-Event-Attach',
} as const;

/** JSON-RPC 2.0 codes, plus the implementation-defined server range MCP transports use. */
export const JsonRpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Transport-level refusal (bad headers, wrong state, refused cursor), and a server→client request the client can no longer answer. */
  ServerError: -32000,
  /** The addressed session does not exist (never did, was deleted, or expired). */
  SessionNotFound: -32001,
  /** 2026-07-28: the request needs a capability the client did not declare; `data.requiredCapabilities` names it. */
  /** SEP-2243: a routing header (`Mcp-Name`, …) disagrees with the body; HTTP 400. */
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  /** 2026-07-28: the request's revision is not served; `data.supported` lists what is. */
  UnsupportedProtocolVersion: -32022,
} as const;
