/**
 * The server cancels a request it sent the client (elicitation, sampling) when it stops
 * waiting for the answer: a timeout, or its handler was aborted. The client must be able to
 * tell which request: "requestId MUST correspond to the ID of a request previously issued in
 * the same direction" — the id the request carried on the wire — and the cancellation reaches
 * the client on the stream the request went out on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { McpServer } from '@modelcontextprotocol/server';
import { FixtureSession } from '../fixture-server/index.ts';
import { openSession, callTool } from '../support/mcp-http.ts';
import { SseReader } from '../support/sse-reader.ts';

const originalCreateServer = Object.getOwnPropertyDescriptor(FixtureSession.prototype, 'createServer')!;
afterEach(() => {
  Object.defineProperty(FixtureSession.prototype, 'createServer', originalCreateServer);
});

/** The demo server plus a tool that gives the client 50 ms to answer an elicitation. */
function withImpatientTool(): void {
  Object.defineProperty(FixtureSession.prototype, 'createServer', {
    ...originalCreateServer,
    value(this: FixtureSession, ...args: unknown[]) {
      const server: McpServer = originalCreateServer.value.apply(this, args);
      server.registerTool('ask_briefly', { description: 'Asks, waits 50 ms.', inputSchema: z.object({}) }, async (_args, ctx) => {
        try {
          await ctx.mcpReq.elicitInput({ message: 'quick?', requestedSchema: { type: 'object', properties: {} } }, { timeout: 50 });
          return { content: [{ type: 'text', text: 'answered' }] };
        } catch {
          return { content: [{ type: 'text', text: 'gave up' }] };
        }
      });
      return server;
    },
  });
}

describe('a server→client request the server gives up on', () => {
  it('is cancelled by its wire id, on the stream it went out on, before the call ends', async () => {
    withImpatientTool();
    const session = await openSession('2025-11-25', { elicitation: {} });
    const response = await session.post(callTool('ask', 'ask_briefly', {}));
    const events = (await new SseReader(response).all()).filter((e) => e.data !== '').map((e) => JSON.parse(e.data));
    const [request, cancelled, answer] = events;
    expect(request).toMatchObject({ method: 'elicitation/create', id: expect.any(String) });
    expect(cancelled).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: expect.objectContaining({ requestId: request.id }),
    });
    expect(answer).toMatchObject({ id: 'ask', result: { content: [{ type: 'text', text: 'gave up' }] } });
    expect(events).toHaveLength(3);
  });
});
