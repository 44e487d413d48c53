/**
 * The benchmark's tools as the peers built on the SDK v2's `McpServer` register them (`ours`,
 * `sdk-floor`, `sdk-modern`): `echo` {text} → text, `progress` {n} → n progress notifications as
 * fast as they go, then "done <n>", and a session's `notify` {text} → one log message. One
 * definition, so that what those peers measure differs only in what lies beneath the tools.
 * Erasable TypeScript only: `sdk-modern` runs it on Node by type stripping.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';

export function registerEcho(server: McpServer): void {
  server.registerTool('echo', { description: 'Returns its text.', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
}

export function registerProgress(server: McpServer): void {
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
}

/**
 * A session's tools, on every session peer's McpServer (`ours`, `sdk-floor`): each tool
 * registered is work every new session pays (W0), so both register the same three. `notify`
 * {text} sends one log message on the session's standalone stream, then returns (W7); the
 * server must declare the `logging` capability (SESSION_CAPABILITIES), without which the SDK
 * drops the message silently.
 */
export function registerSessionTools(server: McpServer): void {
  registerEcho(server);
  registerProgress(server);
  server.registerTool(
    'notify',
    {
      description: "Sends one log message carrying `text` on the session's standalone stream, then returns (W7).",
      inputSchema: z.object({ text: z.string() }),
    },
    async ({ text }) => {
      await server.sendLoggingMessage({ level: 'info', logger: 'bench', data: text });
      return { content: [{ type: 'text', text: 'sent' }] };
    },
  );
}

/** What a session peer's McpServer declares for registerSessionTools's `notify`. */
export const SESSION_CAPABILITIES = { logging: {} };
