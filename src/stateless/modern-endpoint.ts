/**
 * The 2026-07-28 endpoint: the SDK's own handler (`createMcpHandler`), strictly modern. Legacy
 * requests never reach it — the Worker routes them to the session engine (core/era.ts) — so
 * it is built with `legacy: 'reject'`. The SDK does the modern protocol: the envelope and
 * header checks (-32020), unsupported revisions (-32022 with `supported`), `server/discover`,
 * removed methods (-32601), caching fields, MRTR. This module adds what the SDK leaves to the
 * host: the requestState key (request-state.ts) and the cross-isolate event bus.
 */
import {
  createMcpHandler,
  type McpHttpHandler,
  type McpRequestContext,
  type McpServer,
  type ServerEventBus,
  type ServerNotifier,
} from '@modelcontextprotocol/server';
import { log } from '../core/log.ts';
import { HEADERS } from '../core/wire.ts';
import { logToolErrors } from '../tools/tool-errors.ts';
import { sdkReport } from './sdk-reports.ts';
import { requestStateSeal, type RequestStateSeal, type RequestStateSecrets } from './request-state.ts';

/** What the `modern` factory is given for each request. */
export interface ModernContext extends McpRequestContext {
  /** Seals MRTR state: `mint` what a tool returns, pass `verify` as McpServer's `requestState` option. */
  readonly requestState: RequestStateSeal;
  /** Tells every open `subscriptions/listen` stream, on every isolate, that a list or resource changed. */
  readonly notify: ServerNotifier;
}

/** Builds the McpServer for one 2026-07-28 request. */
export type ModernServerFactory = (context: ModernContext) => McpServer | Promise<McpServer>;

export interface ModernEndpointOptions {
  /** The same bound the legacy path reads bodies under. */
  readonly maxBodyBytes: number;
  /** SSE keep-alive comments on modern response streams; 0 disables. */
  readonly heartbeatMs: number;
  /** Carries listen events between isolates (event-bus.ts); the SDK's in-isolate bus when absent. */
  readonly bus?: ServerEventBus;
  /** Listen streams this handler holds at once (the SDK's `maxSubscriptions`; its default when absent). */
  readonly maxListenStreams?: number;
  /** The SDK's default (`auto`) at the edge; a task's object asks for `sse` to hear a tool's progress. */
  readonly responseMode?: 'auto' | 'sse';
  /** How long a minted requestState stays valid; the seal's default (300 s) when absent. */
  readonly requestStateTtlSeconds?: number;
  /**
   * Serve the extensions on the McpServer the factory built (at the edge, when tasks or events are
   * configured), given the request's method (its `Mcp-Method` header; undefined without one).
   */
  readonly decorate?: (server: McpServer, method: string | undefined) => void;
}

/**
 * The handler for `factory` under a Worker's environment (its secrets key the requestState
 * seal). Build one per isolate and environment: the Worker keeps it with its configuration.
 */
export function createModernEndpoint(
  factory: ModernServerFactory,
  env: RequestStateSecrets,
  options: ModernEndpointOptions,
): McpHttpHandler {
  const requestState = requestStateSeal(env, options.requestStateTtlSeconds);
  const { decorate } = options;
  const build = async (context: McpRequestContext) => {
    // A tool that throws is logged with its stack (tools/tool-errors.ts); the client hears what the SDK says.
    const server = logToolErrors(await factory({ ...context, requestState, notify: handler.notify }));
    decorate?.(server, context.requestInfo?.headers.get(HEADERS.method)?.trim());
    return server;
  };
  const handler: McpHttpHandler = createMcpHandler(build, {
    legacy: 'reject',
    ...(options.responseMode !== undefined && { responseMode: options.responseMode }),
    ...(options.bus !== undefined && { bus: options.bus }),
    ...(options.maxListenStreams !== undefined && { maxSubscriptions: options.maxListenStreams }),
    maxRequestBodySize: options.maxBodyBytes,
    keepAliveMs: options.heartbeatMs,
    // Reporting only: the SDK has answered the request already.
    onerror: (error) => log(sdkReport(error)),
  });
  return handler;
}
