/**
 * Benchmark peer "mcpagent": Cloudflare's `agents` McpAgent (a Durable Object per session,
 * MCP SDK v1 McpServer inside, as McpAgent requires) with the two benchmark tools, served by
 * McpAgent.serve('/mcp') (Streamable HTTP).
 *
 * The object counts what Cloudflare bills it for (B1) through ../shared/billing.ts, served at
 * GET /bench/billing and off unless B1 turns it on. McpAgent's Worker reaches its object by RPC
 * as well as by fetch (`__unsafe_ensureInitialized`, `getInitializeRequest`, …, each a billed
 * request), so while counting is on the Worker hands McpAgent a namespace whose stubs count them.
 */
import { McpAgent } from 'agents/mcp';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';
import { counting, countingNamespace, countRequest, instrument, serveBilling } from '../shared/billing.ts';

interface Env {
  readonly MCP_OBJECT: DurableObjectNamespace<BenchAgent>;
}

export class BenchAgent extends McpAgent {
  server = new McpServer({ name: 'bench-mcpagent', version: '0.0.0' });

  constructor(ctx: DurableObjectState, env: Env) {
    super(instrument(ctx, 'BenchAgent'), env);
    // The agents Lifecycle installs webSocketMessage on the instance, read-only, and only where
    // the class has none (so it cannot be overridden like fetch and alarm): wrap what it installed.
    const received = this.webSocketMessage;
    if (received !== undefined) {
      Object.defineProperty(this, 'webSocketMessage', {
        configurable: true,
        value: (socket: WebSocket, message: string | ArrayBuffer) => {
          countRequest('BenchAgent', 'webSocketMessage');
          return received.call(this, socket, message);
        },
      });
    }
  }

  override fetch(request: Request): Promise<Response> {
    countRequest('BenchAgent', 'fetch');
    return super.fetch(request);
  }

  override alarm(...args: Parameters<McpAgent['alarm']>): ReturnType<McpAgent['alarm']> {
    countRequest('BenchAgent', 'alarm');
    return super.alarm(...args);
  }

  async init(): Promise<void> {
    this.server.registerTool('echo', { description: 'Returns its text.', inputSchema: { text: z.string() } }, async ({ text }) => ({
      content: [{ type: 'text', text }],
    }));
    this.server.registerTool(
      'progress',
      {
        description: 'Sends n progress notifications as fast as possible, then returns "done <n>".',
        inputSchema: { n: z.number().int().min(0).max(1_000_000) },
      },
      async ({ n }, extra) => {
        const progressToken = extra._meta?.progressToken;
        if (progressToken !== undefined) {
          for (let progress = 1; progress <= n; progress++) {
            await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total: n } });
          }
        }
        return { content: [{ type: 'text', text: `done ${n}` }] };
      },
    );
  }
}

const handler = BenchAgent.serve('/mcp', { binding: 'MCP_OBJECT' });

export default {
  fetch: (request, env, ctx) =>
    serveBilling(request) ??
    handler.fetch(request, counting() ? { ...env, MCP_OBJECT: countingNamespace(env.MCP_OBJECT, 'BenchAgent') } : env, ctx),
} satisfies ExportedHandler<Env>;
