/**
 * The demo's tools. `countdown` streams progress (or runs as a task), `confirm` asks the
 * client something and `post_note` emits an event (events.ts): they need no session, so they serve both protocol eras. `tally` and `note` keep state in the
 * session's storage: sessions only.
 */
import { acceptedContent, inputRequired, type McpServer } from '@modelcontextprotocol/server';
import { runTask, type SessionContext } from 'mcp-edge-sessions';
import * as z from 'zod';
import { registerNoteTool } from './events.ts';

/** Tools that need no session: registered on the session's server and on every 2026-07-28 request's. */
export function registerStatelessTools(server: McpServer): void {
  registerNoteTool(server);
  server.registerTool(
    'countdown',
    {
      description: 'Counts down, one progress notification per step, then reports liftoff.',
      inputSchema: z.object({ from: z.number().int().min(1).max(10_000), interval_ms: z.number().int().min(0).max(60_000) }),
    },
    // A task for 2026-07-28 clients that declare the Tasks extension (its progress becomes the
    // task's statusMessage); inline otherwise, with progress on a session's resumable stream.
    async ({ from, interval_ms }, ctx) =>
      runTask(async () => {
        const progressToken = ctx.mcpReq._meta?.progressToken;
        for (let step = 1; step <= from; step++) {
          // Cancellable: notifications/cancelled (or tasks/cancel) aborts the signal.
          if (interval_ms > 0) await scheduler.wait(interval_ms, { signal: ctx.mcpReq.signal });
          if (progressToken !== undefined) {
            await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: step, total: from } });
          }
        }
        return { content: [{ type: 'text', text: `liftoff after ${from}` }] };
      }),
  );

  // Written once for both eras: to a 2026-07-28 client the question is an input_required
  // result, answered on the retried call; on a 2025 session the SDK asks it as a real
  // elicitation/create request on the call's stream, then runs the handler again.
  server.registerTool(
    'confirm',
    {
      description: 'Asks the client to confirm an action (elicitation), then reports the answer.',
      inputSchema: z.object({ action: z.string().min(1).max(200) }),
    },
    async ({ action }, ctx) => {
      const answer = acceptedContent<{ ok?: unknown }>(ctx.mcpReq.inputResponses, 'confirm');
      if (answer === undefined) {
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: `Confirm: ${action}?`,
              requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
            }),
          },
        });
      }
      return { content: [{ type: 'text', text: answer.ok === true ? `confirmed: ${action}` : `declined: ${action}` }] };
    },
  );
}

/** All the tools of a session. */
export function registerTools(server: McpServer, session: SessionContext): void {
  registerStatelessTools(server);

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
