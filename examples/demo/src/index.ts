/**
 * A Worker serving MCP with mcp-edge-sessions, in both protocol eras: the edge Worker routes
 * each 2025 session to its Durable Object, a `DemoSession`, whose McpServer holds the tools,
 * and serves each 2026-07-28 request with an McpServer of its own (`modern`). A tool that
 * calls `runTask` becomes a task for 2026-07-28 clients that take one, run by a `DemoTasks`.
 * `post_note` emits a `demo.note` event (events.ts), kept in its log (`McpEventLog`) and served
 * to 2026-07-28 clients by `events/poll`, `events/stream` and, to a signed-in principal's
 * verified endpoint, `events/subscribe` (webhooks, one `DemoWebhooks` per subscription).
 */
import { McpServer } from '@modelcontextprotocol/server';
import {
  createMcpWorker,
  McpSessionObject,
  McpTaskObject,
  McpWebhookSubscription,
  sessionServerOptions,
  type ModernContext,
  type SessionContext,
} from 'mcp-edge-sessions';
import { notes } from './events.ts';
import { registerStatelessTools, registerTools } from './tools.ts';

export class DemoSession extends McpSessionObject<Env> {
  protected override createServer(session: SessionContext): McpServer {
    const server = new McpServer({ name: 'mcp-edge-sessions-demo', version: '0.1.0' }, sessionServerOptions());
    registerTools(server, session);
    return server;
  }
}

/** A 2026-07-28 request: no session, so the tools that need none. */
function modernServer({ requestState }: ModernContext): McpServer {
  const server = new McpServer({ name: 'mcp-edge-sessions-demo', version: '0.1.0' }, { requestState: { verify: requestState.verify } });
  registerStatelessTools(server);
  return server;
}

/** One per task: stores it, runs its tool (with the same tools as `modernServer`), answers tasks/*. */
export class DemoTasks extends McpTaskObject<Env> {
  protected override createServer(context: ModernContext): McpServer {
    return modernServer(context);
  }
}

/** One per webhook subscription (`events/subscribe`: an authenticated principal's, AUTH=jwt or oauth): delivers demo.note. */
export class DemoWebhooks extends McpWebhookSubscription<Env> {
  readonly types = [notes];
}

export { McpEventBus, McpEventLog, McpPrincipalRegistry } from 'mcp-edge-sessions';

export default createMcpWorker<Env>({
  sessions: (env) => env.MCP_SESSION,
  modern: modernServer,
  bus: (env) => env.MCP_BUS,
  tasks: (env) => env.MCP_TASKS,
  rateLimit: (env) => env.MCP_RATE_LIMIT,
  principals: (env) => env.MCP_PRINCIPALS,
  events: { types: [notes], logs: (env) => env.MCP_EVENTS, webhooks: (env) => env.MCP_WEBHOOKS },
}) satisfies ExportedHandler<Env>;
