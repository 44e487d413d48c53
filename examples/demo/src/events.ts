/**
 * The demo's event type (MCP Events, SEP-3415): `demo.note`, an occurrence per note posted with
 * the `post_note` tool. A client follows it by poll (`events/poll`) or push (`events/stream`),
 * with `contains` selecting the notes whose text contains it; its cursor continues exactly where
 * it left off, across reconnects, restarts and deploys (docs/events.md).
 */
import type { McpServer } from '@modelcontextprotocol/server';
import { env } from 'cloudflare:workers';
import { defineEventType } from 'mcp-edge-sessions';
import * as z from 'zod';

export const notes = defineEventType({
  name: 'demo.note',
  description: 'A note someone posted with post_note. `contains` selects the notes whose text contains it.',
  inputSchema: z.object({ contains: z.string().max(256).optional() }),
  payloadSchema: z.object({ text: z.string(), n: z.number().int().describe('the length of text, in characters') }),
  delivery: ['poll', 'push', 'webhook'],
  matches: ({ contains }, { text }) => contains === undefined || text.includes(contains),
});

/** `post_note`: emits one `demo.note`, and answers once it is stored (every follower will get it). */
export function registerNoteTool(server: McpServer): void {
  server.registerTool(
    'post_note',
    {
      description: 'Posts a note: every follower of demo.note receives it.',
      inputSchema: z.object({ text: z.string().min(1).max(4_096) }),
    },
    async ({ text }) => {
      const { eventId } = await notes.emit(env.MCP_EVENTS, { data: { text, n: text.length } });
      return { content: [{ type: 'text', text: `posted ${eventId}` }] };
    },
  );
}
