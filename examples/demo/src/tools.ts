/** The demo's tools: one that streams progress, two that keep state in the session. */
import type { McpServer } from '@modelcontextprotocol/server';
import type { SessionContext } from 'mcp-edge-sessions';
import * as z from 'zod';

export function registerTools(server: McpServer, session: SessionContext): void {
  server.registerTool(
    'countdown',
    {
      description: 'Counts down, one progress notification per step, then reports liftoff.',
      inputSchema: z.object({ from: z.number().int().min(1).max(10_000), interval_ms: z.number().int().min(0).max(60_000) }),
    },
    async ({ from, interval_ms }, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      for (let step = 1; step <= from; step++) {
        // Cancellable: a client's notifications/cancelled aborts the signal.
        if (interval_ms > 0) await scheduler.wait(interval_ms, { signal: ctx.mcpReq.signal });
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: step, total: from } });
        }
      }
      return { content: [{ type: 'text', text: `liftoff after ${from}` }] };
    },
  );

  server.registerTool(
    'tally',
    {
      description: 'Increments a durable per-session counter and returns its new value (not idempotent).',
      inputSchema: z.object({ key: z.string().min(1).max(256) }),
    },
    async ({ key }) => {
      const value = (session.storage.kv.get<number>(`tally:${key}`) ?? 0) + 1;
      session.storage.kv.put(`tally:${key}`, value);
      return { content: [{ type: 'text', text: String(value) }] };
    },
  );

  // Added as README section 3 shows: state in the session's storage, deleted with the session.
  server.registerTool(
    'note',
    {
      description: 'Stores a note in the session and returns how many there are.',
      inputSchema: z.object({ text: z.string().max(1_000) }),
    },
    async ({ text }) => {
      const notes = [...(session.storage.kv.get<string[]>('notes') ?? []), text];
      session.storage.kv.put('notes', notes);
      return { content: [{ type: 'text', text: `${notes.length} notes` }] };
    },
  );
}
