/**
 * The Worker the library's own tests, the conformance runs and the repository's scripts are
 * served by: the session object with the demo tools and the conformance suite's fixtures.
 * Not for users to edit: a user's Worker looks like examples/demo.
 */
import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import {
  busShardName,
  busShardSockets,
  createMcpWorker,
  McpSessionObject,
  McpTaskObject,
  McpWebhookSubscription,
  sessionServerOptions,
  type ModernContext,
  type SessionContext,
} from '../../src/lib.ts';
import { readConfig } from '../../src/config.ts';
import { conformanceCapabilities, registerConformanceFixtures } from './conformance-fixtures.ts';
import { registerDemoTools, registerStatelessTools } from './demo-tools.ts';
import { withRecorder } from './metrics-recorder.ts';
import { registerModernConformanceFixtures } from './modern-fixtures.ts';
import { registerTaskFixtures } from './task-fixtures.ts';
import { fixtureEventTypes, hookedEvents, registerNoteTool } from './note-events.ts';
import { registerUpstreamTool, upstreamEvents } from './upstream-events.ts';

export class FixtureSession extends McpSessionObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, withRecorder(env));
  }

  protected override createServer(session: SessionContext): McpServer {
    const server = new McpServer(
      { name: 'mcp-edge-sessions-fixture', version: '0.1.0' },
      sessionServerOptions({ capabilities: conformanceCapabilities }),
    );
    registerDemoTools(server, session);
    // Who the session's current request is from (the auth tests).
    server.registerTool('whoami', { description: 'The principal of the request, and its scopes' }, () => ({
      content: [{ type: 'text', text: JSON.stringify({ id: session.principal.id, scopes: session.principal.scopes }) }],
    }));
    // The same, read when the call has run a while, as a tool that checks after an await would.
    server.registerTool(
      'whoami_later',
      { description: 'The principal, read after waiting ms', inputSchema: z.object({ ms: z.number().int().min(0).max(10_000) }) },
      async ({ ms }) => {
        await new Promise((resolve) => setTimeout(resolve, ms));
        return { content: [{ type: 'text', text: JSON.stringify({ id: session.principal.id, scopes: session.principal.scopes }) }] };
      },
    );
    registerConformanceFixtures(server);
    // The same task tools, served the sessionful way: runTask runs them inline.
    registerTaskFixtures(server);
    return server;
  }
}

/** 2026-07-28 requests: no session, so only the tools that need none, and the suite's fixtures. */
function modernServer(context: ModernContext): McpServer {
  const { requestState } = context;
  const server = new McpServer(
    { name: 'mcp-edge-sessions-fixture', version: '0.1.0' },
    { capabilities: conformanceCapabilities, requestState: { verify: requestState.verify } },
  );
  registerStatelessTools(server);
  registerConformanceFixtures(server);
  registerModernConformanceFixtures(server, context);
  registerTaskFixtures(server);
  registerNoteTool(server);
  registerUpstreamTool(server);
  return server;
}

/** Runs the tasks of 2026-07-28 clients that declare the Tasks extension: the same tools as `modernServer`. */
export class FixtureTasks extends McpTaskObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, withRecorder(env));
  }

  protected override createServer(context: ModernContext): McpServer {
    return modernServer(context);
  }
}

export { McpEventBus, McpEventLog, McpPrincipalRegistry } from '../../src/lib.ts';
export { PokeRecorder } from './poke-recorder.ts';

/** The fixture's webhook subscriptions (test/webhooks/): the event types the Worker serves, and demo.hooked (its tests' own log). */
export class FixtureWebhooks extends McpWebhookSubscription<Env> {
  readonly types = [...fixtureEventTypes, hookedEvents];

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, withRecorder(env));
  }
}

const worker = createMcpWorker<Env>({
  sessions: (env) => env.MCP_SESSION,
  modern: modernServer,
  bus: (env) => env.MCP_BUS,
  tasks: (env) => env.MCP_TASKS,
  rateLimit: (env) => env.MCP_RATE_LIMIT,
  principals: (env) => env.MCP_PRINCIPALS,
  // The log-backed types, then one its upstream keeps (upstream-events.ts).
  events: { types: [...fixtureEventTypes, upstreamEvents], logs: (env) => env.MCP_EVENTS, webhooks: (env) => env.MCP_WEBHOOKS },
});

export default {
  fetch(request, env, ctx) {
    // The listen streams each bus shard holds, for scripts/faults/bus-fanout.mjs (a user's Worker has no such route).
    if (new URL(request.url).pathname === '/_fixture/bus-sockets') {
      const shard = (index: number) => env.MCP_BUS.get(env.MCP_BUS.idFromName(busShardName(index)));
      return busShardSockets(shard, readConfig(env).busShards).then((sockets) => Response.json({ sockets }));
    }
    return worker.fetch(request, withRecorder(env), ctx);
  },
} satisfies ExportedHandler<Env>;
