/**
 * Webhook delivery's configuration (issue 47): an event type that lists `webhook` in its
 * `delivery` needs createMcpWorker's `events.webhooks`, and without it every request is answered
 * with the configuration error that names both fixes; without `webhooks`, events/subscribe is not
 * served (-32601); an upstream-backed type cannot offer webhook at all.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import type { EventType } from '../../src/events/event-type.ts';
import { createMcpWorker, defineEventType, defineUpstreamEventType } from '../../src/lib.ts';
import { EVENTS } from '../support/events-http.ts';
import { answerOf, modernRequestOf } from '../support/modern-http.ts';
import { polledEvents } from '../fixture-server/note-events.ts';

const hooked = defineEventType({
  name: 'config.hooked',
  inputSchema: z.object({}),
  payloadSchema: z.object({}),
  delivery: ['poll', 'webhook'],
});

const modern = () => new McpServer({ name: 'webhook-configuration', version: '1.0.0' });

function workerWith(types: readonly EventType[]) {
  return createMcpWorker<Env>({ sessions: (e) => e.MCP_SESSION, modern, events: { types, logs: (e) => e.MCP_EVENTS } });
}

const fetchWith = (worker: ReturnType<typeof createMcpWorker<Env>>, request: Request) =>
  worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, { ...env } as Env, createExecutionContext());

describe('events.webhooks', () => {
  it('absent while a type lists webhook: every request is the configuration error naming the type and both fixes', async () => {
    const response = await fetchWith(workerWith([hooked]), modernRequestOf('events/list', {}, EVENTS));
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).toContain('config.hooked lists webhook in its delivery');
    expect(text).toContain('webhooks: (env) => env.MCP_WEBHOOKS');
    expect(text).toContain("remove 'webhook' from config.hooked's delivery");
  });

  it('absent, no type listing webhook: events/subscribe and events/unsubscribe are -32601', async () => {
    const worker = workerWith([polledEvents]);
    for (const method of ['events/subscribe', 'events/unsubscribe']) {
      const answer = await answerOf(await fetchWith(worker, modernRequestOf(method, { name: 'demo.polled' }, EVENTS)));
      expect(answer.error).toMatchObject({ code: -32601 });
    }
  });

  it('an upstream-backed type offering webhook is refused at its definition', () => {
    expect(() =>
      defineUpstreamEventType({
        name: 'config.upstream',
        inputSchema: z.object({}),
        payloadSchema: z.object({}),
        delivery: ['poll', 'webhook'],
        read: async () => ({ occurrences: [], cursor: null }),
      }),
    ).toThrow(/upstream-backed type is delivered by poll and push only, not webhook/);
  });
});
