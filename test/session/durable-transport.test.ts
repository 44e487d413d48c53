/**
 * DurableTransport tags the ids of server→client requests with its instance (`<tag>.<n>`):
 * every message that names such a request on the wire carries the tagged id, and an answer
 * is taken only if it bears this instance's tag.
 */
import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { DurableTransport } from '../../src/session/durable-transport.ts';

function transport() {
  const routed: JSONRPCMessage[] = [];
  const received: JSONRPCMessage[] = [];
  const t = new DurableTransport('session', (message) => routed.push(message));
  t.onmessage = (message) => received.push(message);
  return { t, routed, received };
}

describe('DurableTransport, outbound', () => {
  it.each<{ name: string; sent: JSONRPCMessage; wire: (tag: (n: number) => string) => JSONRPCMessage }>([
    {
      name: 'a server→client request carries the tagged id',
      sent: { jsonrpc: '2.0', id: 3, method: 'elicitation/create', params: {} },
      wire: (tag) => ({ jsonrpc: '2.0', id: tag(3), method: 'elicitation/create', params: {} }),
    },
    {
      name: 'cancelling it names the tagged id, as the client saw it',
      sent: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3, reason: 'timed out' } },
      wire: (tag) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: tag(3), reason: 'timed out' } }),
    },
    {
      name: 'other notifications go out as sent',
      sent: { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 3, progress: 1 } },
      wire: () => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 3, progress: 1 } }),
    },
    {
      name: 'responses to the client keep the client’s id',
      sent: { jsonrpc: '2.0', id: 3, result: {} },
      wire: () => ({ jsonrpc: '2.0', id: 3, result: {} }),
    },
  ])('$name', async ({ sent, wire }) => {
    const { t, routed } = transport();
    await t.send(sent);
    expect(routed).toEqual([wire((n) => t.wireId(n))]);
  });
});

describe('DurableTransport, inbound', () => {
  it('takes an answer bearing its own tag, under the SDK’s number', () => {
    const { t, received } = transport();
    expect(t.receive({ jsonrpc: '2.0', id: t.wireId(7), result: {} })).toBe(true);
    expect(received).toEqual([{ jsonrpc: '2.0', id: 7, result: {} }]);
  });

  it.each([
    { name: 'another instance’s tag', id: 'ffffffff.7' },
    { name: 'an untagged number', id: 7 },
    { name: 'a tag without a number', id: 'x' },
  ])('drops an answer with $name', ({ id }) => {
    const { t, received } = transport();
    expect(t.receive({ jsonrpc: '2.0', id, result: {} })).toBe(false);
    expect(received).toEqual([]);
  });
});
