/**
 * The 2026-07-28 endpoint: the SDK's own handler (`createMcpHandler`), strictly modern. Legacy
 * requests never reach it — the Worker routes them to the session engine (core/era.ts) — so
 * it is built with `legacy: 'reject'`. The SDK does the modern protocol: the envelope and
 * header checks (-32020), unsupported revisions (-32022 with `supported`), `server/discover`,
 * removed methods (-32601), MRTR. This module only builds it once per isolate and factory.
 */
import { createMcpHandler, type McpHttpHandler, type McpServerFactory } from '@modelcontextprotocol/server';
import { log } from '../core/log.ts';

export interface ModernEndpointOptions {
  /** The same bound the legacy path reads bodies under. */
  readonly maxBodyBytes: number;
  /** SSE keep-alive comments on modern response streams; 0 disables. */
  readonly heartbeatMs: number;
}

const built = new WeakMap<McpServerFactory, McpHttpHandler>();

export function modernEndpoint(factory: McpServerFactory, { maxBodyBytes, heartbeatMs }: ModernEndpointOptions): McpHttpHandler {
  let handler = built.get(factory);
  if (handler === undefined) {
    handler = createMcpHandler(factory, {
      legacy: 'reject',
      maxRequestBodySize: maxBodyBytes,
      keepAliveMs: heartbeatMs,
      // Reporting only: the SDK has answered the request already.
      onerror: (error) => log({ msg: 'mcp.modern.error', error: String(error) }),
    });
    built.set(factory, handler);
  }
  return handler;
}
