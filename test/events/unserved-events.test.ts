/**
 * A Worker built without `events` (createMcpWorker given a modern factory, no `events`), in
 * workerd: SEP-3415, *Capability Negotiation*, "a server that does not offer it answers any
 * `events/*` request with `-32601` (Method not found)", even to a client that declares the
 * extension; and the other side of the same rule, "A client MUST NOT send them to a server that
 * has not advertised the extension": `server/discover` names no Events extension, and the
 * project's client (`followEvents`) ends before any `events/*` request. The fixture's Worker,
 * which serves events, is errors.test.ts's.
 */
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { EventsUnsupportedError, followEvents } from '../../src/client/index.ts';
import { EVENTS_EXTENSION_ID, EventsMethod } from '../../src/core/events-wire.ts';
import { createMcpWorker } from '../../src/lib.ts';
import { EVENTS } from '../support/events-http.ts';
import { modernRequestOf } from '../support/modern-http.ts';

/** A Worker with a modern factory serving one tool, and no `events`. */
const worker = createMcpWorker<Env>({
  sessions: (e) => e.MCP_SESSION,
  modern: () => {
    const server = new McpServer({ name: 'no-events', version: '1.0.0' });
    server.registerTool('echo', { description: 'Says what it was given' }, () => ({ content: [{ type: 'text', text: 'echo' }] }));
    return server;
  },
});

const send = (request: Request) => worker.fetch(request, env, createExecutionContext());

let id = 0;
const subscription = { name: 'demo.note', arguments: {}, cursor: null };

describe('a Worker without events', () => {
  it('advertises no Events extension in server/discover', async () => {
    const response = await send(modernRequestOf('server/discover', {}, EVENTS, {}, ++id));
    expect(response.status).toBe(200);
    const { result } = (await response.json()) as any;
    expect(result.capabilities.tools).toBeDefined();
    expect(result.capabilities.extensions?.[EVENTS_EXTENSION_ID]).toBeUndefined();
  });

  it.each([
    { method: EventsMethod.list, params: {} },
    { method: EventsMethod.poll, params: subscription },
    { method: EventsMethod.stream, params: subscription },
  ])(
    '"answers any events/* request with -32601 (Method not found)": $method, to a client declaring the extension',
    async ({ method, params }) => {
      const response = await send(modernRequestOf(method, params, EVENTS, {}, ++id));
      expect(response.headers.get('Content-Type')).not.toMatch(/text\/event-stream/);
      const body = (await response.json()) as any;
      expect(body).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32601 } });
      expect(body.result).toBeUndefined();
    },
  );

  it.each(['poll', 'push'] as const)('followEvents by %s ends with EventsUnsupportedError, no events/* request sent', async (mode) => {
    const methods: string[] = [];
    // An events/* request sent stops the follow: it then ends without the error, and the test says so.
    const stop = new AbortController();
    const follow = followEvents({
      url: 'http://localhost/mcp',
      name: 'demo.note',
      mode,
      cursor: null,
      signal: stop.signal,
      fetch: async (input, init) => {
        const { method } = JSON.parse(String(init?.body));
        methods.push(method);
        if (method !== 'server/discover') stop.abort();
        return send(new Request(input, { ...init, headers: { Host: 'localhost', ...Object.fromEntries(new Headers(init?.headers)) } }));
      },
      onEvent: () => expect.fail('nothing is served'),
      saveCursor: () => expect.fail('nothing is served'),
    });
    const error = await follow.done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EventsUnsupportedError);
    expect(error).toMatchObject({ eventName: 'demo.note', cursor: null });
    expect(methods).toEqual(['server/discover']);
  });
});
