/**
 * Benchmark peer "mcpagent": Cloudflare's `agents` McpAgent (a Durable Object per session,
 * MCP SDK v1 McpServer inside, as McpAgent requires) with the two benchmark tools, served by
 * McpAgent.serve('/mcp') (Streamable HTTP).
 */
import { McpAgent } from 'agents/mcp';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod';

export class BenchAgent extends McpAgent {
  server = new McpServer({ name: 'bench-mcpagent', version: '0.0.0' });

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

export default BenchAgent.serve('/mcp', { binding: 'MCP_OBJECT' });
