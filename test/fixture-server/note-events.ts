/**
 * The fixture's event type, `demo.note`, and the tool that emits one, `post_note`: the names
 * outside checks use (the soak's and restarts' `events` profiles, the bench's E1/E2), as the demo
 * declares them (examples/demo/src/events.ts).
 */
import type { McpServer } from '@modelcontextprotocol/server';
import { env } from 'cloudflare:workers';
import * as z from 'zod';
import { defineEventType } from '../../src/lib.ts';

export const noteEvents = defineEventType({
  name: 'demo.note',
  description: 'A note someone posted (post_note); `contains` selects notes whose text contains it',
  inputSchema: z.object({ contains: z.string().optional() }),
  payloadSchema: z.object({ text: z.string(), n: z.number().int().describe('the length of text, in characters') }),
  delivery: ['poll', 'push', 'webhook'],
  matches: ({ contains }, { text }) => contains === undefined || text.includes(contains),
});

export function registerNoteTool(server: McpServer): void {
  server.registerTool(
    'post_note',
    {
      description: 'Posts a note: one demo.note occurrence, stored before this returns its eventId',
      inputSchema: z.object({ text: z.string().max(4096), eventId: z.string().min(1).max(256).optional() }),
    },
    async ({ text, eventId }) => {
      const emitted = await noteEvents.emit((env as Env).MCP_EVENTS, {
        data: { text, n: text.length },
        ...(eventId !== undefined && { eventId }),
      });
      return { content: [{ type: 'text', text: JSON.stringify(emitted) }], structuredContent: emitted };
    },
  );
}
