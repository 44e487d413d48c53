/**
 * C1's floor of a cold start: the SDK v2's 2026-07-28 handler, `createMcpHandler` from
 * `@modelcontextprotocol/server` (bench's copy), alone in a Worker with one tool, `echo`: no
 * router, no checks, no storage, no Durable Object. What any Worker serving MCP through the SDK
 * pays to start (its bundle parsed, the SDK and zod evaluated) and to answer its first request;
 * C1 (bench/harness/workloads/c-cold-start.mjs) sets each of ours's configurations beside it.
 * The handler is built at the first request, as ours builds its modern endpoint; it keeps the
 * SDK's stateless fallback for 2025 requests, so that a fresh process's first `initialize` is
 * answered too. Not a peer of the other workloads (bench/peers/README.md).
 */
import { createMcpHandler, type McpHttpHandler, McpServer } from '@modelcontextprotocol/server';
import { registerEcho } from '../shared/sdk-tools.ts';

let handler: McpHttpHandler | undefined;

function serve(): McpHttpHandler {
  handler ??= createMcpHandler(() => {
    const server = new McpServer({ name: 'bench-startup-floor', version: '0.0.0' });
    registerEcho(server);
    return server;
  });
  return handler;
}

export default {
  fetch: (request) => (new URL(request.url).pathname === '/mcp' ? serve().fetch(request) : new Response('Not found', { status: 404 })),
} satisfies ExportedHandler;
