/**
 * Benchmark peer "ours": this project's transport with the two benchmark tools, written the
 * way a user of the library writes a server (README section 3): subclass McpSessionObject,
 * build an SDK v2 McpServer with sessionServerOptions(), hand the binding to createMcpWorker.
 */
import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { createMcpWorker, McpSessionObject, sessionServerOptions, type ConfigVars, type SessionContext } from '../../../src/lib.ts';

interface BenchEnv extends ConfigVars {
  readonly BENCH_SESSION: DurableObjectNamespace;
}

export class BenchSession extends McpSessionObject<BenchEnv> {
  protected override createServer(_session: SessionContext): McpServer {
    const server = new McpServer({ name: 'bench-ours', version: '0.0.0' }, sessionServerOptions());
    server.registerTool('echo', { description: 'Returns its text.', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
      content: [{ type: 'text', text }],
    }));
    server.registerTool(
      'progress',
      {
        description: 'Sends n progress notifications as fast as possible, then returns "done <n>".',
        inputSchema: z.object({ n: z.number().int().min(0).max(1_000_000) }),
      },
      async ({ n }, ctx) => {
        const progressToken = ctx.mcpReq._meta?.progressToken;
        if (progressToken !== undefined) {
          for (let progress = 1; progress <= n; progress++) {
            await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: n } });
          }
        }
        return { content: [{ type: 'text', text: `done ${n}` }] };
      },
    );
    return server;
  }
}

export default createMcpWorker<BenchEnv>({ sessions: (env) => env.BENCH_SESSION }) satisfies ExportedHandler<BenchEnv>;
