/**
 * Benchmark peer "modern-floor": the SDK v2's own 2026-07-28 entry (`createMcpHandler` from
 * @modelcontextprotocol/server, bench's own copy, as `sdk-floor` bundles it) alone in a bare
 * Worker — no router, no Host/Origin or header checks, no authentication, no tasks, no events,
 * no Durable Object. Every request goes to the handler as it came, whatever its path (the
 * harness asks /mcp only). The tools are the benchmark's 2026-07-28 list, as every modern peer
 * registers it (../shared/modern-tools.ts); this one serves `echo`, `progress` and `changed`,
 * which publishes a tool list change to the handler's listen streams (M3).
 *
 * What it is for: M1–M3 set ours, in workerd, against `sdk-modern`, the same SDK entry on
 * Node, and most of that ratio is the runtime. This peer is the same entry on ours' runtime,
 * built with the options ours' modern endpoint passes it (src/stateless/modern-endpoint.ts:
 * strictly modern, the same body bound and keep-alive), so that ours ÷ modern-floor is what
 * ours adds to the SDK's modern path. It takes the M workloads only (bench/peers/index.mjs):
 * `legacy: 'reject'`, as ours builds it, serves no 2025 request.
 *
 * M3's listens use the handler's in-process bus (`InMemoryServerEventBus`): a publish reaches
 * the listen streams of the isolate that made it. Locally workerd runs this Worker in one
 * isolate, so every listen hears every change; on the platform a change would reach only the
 * listeners on the publishing isolate — what ours' bus object (McpEventBus) is for, and what M3
 * charges ours for (two crossings of that object).
 *
 * The handler is built at the first request: a Worker may not start timers or I/O at startup.
 */
import { createMcpHandler, type McpHttpHandler, McpServer } from '@modelcontextprotocol/server';
import { registerModernTools } from '../shared/modern-tools.ts';

/** Ours' body bound (src/config.ts MAX_BODY_BYTES) and its peer's HEARTBEAT_MS (bench/peers/ours/wrangler.toml). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
const KEEP_ALIVE_MS = 15_000;

let handler: McpHttpHandler | undefined;

function serve(): McpHttpHandler {
  const built = createMcpHandler(
    () => {
      const server = new McpServer({ name: 'bench-modern-floor', version: '0.0.0' });
      registerModernTools(server, {
        changed: async () => {
          built.notify.toolsChanged();
          return { content: [{ type: 'text', text: 'changed' }] };
        },
      });
      return server;
    },
    { legacy: 'reject', maxRequestBodySize: MAX_BODY_BYTES, keepAliveMs: KEEP_ALIVE_MS },
  );
  return built;
}

export default {
  fetch(request: Request): Promise<Response> {
    handler ??= serve();
    return handler.fetch(request);
  },
} satisfies ExportedHandler;
