/** Header names of the wire contract, and the routes between the Worker and the object. */
export const STREAM_HEADERS = {
  /** The session's current epoch, on every response of a session. */
  epoch: 'Mcp-Session-Epoch',
  /** The stream number an SSE response carries. */
  streamId: 'Mcp-Stream-Id',
  /** `true` when the SSE response continues an existing stream, `false` when it starts one. */
  resumed: 'Mcp-Stream-Resumed',
  sse: {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache, no-transform',
  },
} as const;

export const EXPOSED_HEADERS = [
  'Mcp-Session-Id',
  'MCP-Protocol-Version',
  STREAM_HEADERS.epoch,
  STREAM_HEADERS.streamId,
  STREAM_HEADERS.resumed,
] as const;

/** Paths of requests the Worker forwards to a session object (never reachable from outside). */
export const OBJECT_ROUTES = {
  /** POST `initialize` for a session id the Worker just minted. */
  create: '/create',
  /** Everything addressed to an existing session. */
  session: '/session',
} as const;
