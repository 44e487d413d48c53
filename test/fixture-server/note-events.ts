/**
 * The fixture's event types. `demo.note`, and the tool that emits one, `post_note`: the names
 * outside checks use (the soak's and restarts' `events` profiles, the bench's E1/E2), as the demo
 * declares them (examples/demo/src/events.ts). The others exist for test/events/ alone, each for
 * one rule a single type cannot show: a second type (a cursor of another type is refused; it
 * also authorizes its subscribers), a
 * tiny retention (a cursor behind it is truncated; its log is also the one the tests reset), and
 * a type offered by poll only (a stream of it is Unsupported). Tests emit those from the test
 * itself (`type.emit(env.MCP_EVENTS, …)`); no tool does.
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

/**
 * A second type: its cursors are refused by every other type's poll and stream (`cursor_other_type`).
 * It authorizes subscribers, as a type may: a principal whose subject starts `mallory` is Forbidden.
 */
export const otherEvents = defineEventType({
  name: 'demo.other',
  description: 'A second event type (tests): its cursors are not positions of demo.note; mallory may not subscribe',
  inputSchema: z.object({}),
  payloadSchema: z.object({ value: z.string() }),
  delivery: ['poll', 'push'],
  authorize: (principal) => !(principal.subject ?? '').startsWith('mallory'),
});

/** Keeps 3 occurrences: a cursor from its start is soon behind retention. Tests also reset its log. */
export const tinyEvents = defineEventType({
  name: 'demo.tiny',
  description: 'Keeps its last 3 occurrences (tests: a cursor behind retention, a reset log)',
  inputSchema: z.object({}),
  payloadSchema: z.object({ n: z.number().int() }),
  delivery: ['poll', 'push'],
  retention: { maxCount: 3 },
});

/** Offered by poll only: `events/stream` of it is Unsupported `{feature: "deliveryMode", value: "push"}`. */
export const polledEvents = defineEventType({
  name: 'demo.polled',
  description: 'Delivered by poll only (tests)',
  inputSchema: z.object({}),
  payloadSchema: z.object({ value: z.string() }),
  delivery: ['poll'],
});

/**
 * Webhook delivery only, keeping 3 occurrences, and known to the fixture's webhook subscriptions
 * alone (not served by the Worker, so `events/list` is unchanged): test/webhooks/ resets its log
 * and prunes past a detached subscription's position without touching demo.note.
 */
export const hookedEvents = defineEventType({
  name: 'demo.hooked',
  description: 'Webhook delivery only, its last 3 occurrences kept (test/webhooks/: log resets and losses)',
  inputSchema: z.object({ contains: z.string().optional() }),
  payloadSchema: z.object({ text: z.string(), n: z.number().int() }),
  delivery: ['webhook'],
  matches: ({ contains }, { text }) => contains === undefined || text.includes(contains),
  retention: { maxCount: 3 },
});

/**
 * Subjects a test has taken demo.watched's permission from, after they subscribed: its `authorize`
 * reads this set at each subscribe and refresh. The tests and the fixture's Worker run in one
 * isolate (vitest-pool-workers imports the Worker's main module into the test's isolate), so a
 * test's change is what the Worker's next request sees; test/webhooks/refresh-authorization.test.ts
 * shows it (a refresh refused right after the test adds the subject).
 */
export const unpermittedSubjects = new Set<string>();

/**
 * Delivered by webhook only, and authorizing its subscribers as demo.other does (a subject starting
 * `mallory` is Forbidden), and not those in `unpermittedSubjects`: events/subscribe's Forbidden
 * `not_permitted`, and a refresh's (test/webhooks/). Emitted by the test.
 */
export const watchedEvents = defineEventType({
  name: 'demo.watched',
  description: 'Delivered by webhook only (tests); mallory may not subscribe',
  inputSchema: z.object({}),
  payloadSchema: z.object({ value: z.string() }),
  delivery: ['webhook'],
  authorize: (principal) => !(principal.subject ?? '').startsWith('mallory') && !unpermittedSubjects.has(principal.subject ?? ''),
});

/** Every type the fixture serves, in the order `events/list` lists them. */
export const fixtureEventTypes = [noteEvents, otherEvents, tinyEvents, polledEvents, watchedEvents];

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
