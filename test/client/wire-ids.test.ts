/** The transport's request ids on the wire (src/client/wire-ids.ts): the SDK's under a prefix, and back. */
import { describe, expect, it } from 'vitest';
import type { JsonRpcMessage } from '../../src/client/sdk-transport.ts';
import { WireIds } from '../../src/client/wire-ids.ts';

const ids = new WireIds('p1');
const m = (message: Record<string, unknown>) => ({ jsonrpc: '2.0', ...message }) as JsonRpcMessage;

describe('WireIds', () => {
  it.each([
    { name: 'a request with a number id', sent: m({ id: 1, method: 'tools/call' }), wire: m({ id: 'p1.1', method: 'tools/call' }) },
    { name: 'a request with a string id', sent: m({ id: '1', method: 'ping' }), wire: m({ id: 'p1."1"', method: 'ping' }) },
    {
      name: 'a cancellation of a request',
      sent: m({ method: 'notifications/cancelled', params: { requestId: 7, reason: 'x' } }),
      wire: m({ method: 'notifications/cancelled', params: { requestId: 'p1.7', reason: 'x' } }),
    },
    { name: 'another notification', sent: m({ method: 'notifications/initialized' }), wire: m({ method: 'notifications/initialized' }) },
    { name: 'an answer to the server’s request (its id)', sent: m({ id: 's.3', result: {} }), wire: m({ id: 's.3', result: {} }) },
  ])('outbound: $name', ({ sent, wire }) => {
    expect(ids.outbound(sent)).toEqual(wire);
  });

  it.each([
    { name: 'an answer to a number id', read: m({ id: 'p1.1', result: {} }), sdk: m({ id: 1, result: {} }) },
    {
      name: 'an answer to a string id',
      read: m({ id: 'p1."1"', error: { code: 1, message: 'x' } }),
      sdk: m({ id: '1', error: { code: 1, message: 'x' } }),
    },
    { name: 'an answer under another prefix', read: m({ id: 'p2.1', result: {} }), sdk: m({ id: 'p2.1', result: {} }) },
    { name: 'an answer with a plain id', read: m({ id: 4, result: {} }), sdk: m({ id: 4, result: {} }) },
    { name: 'an id under the prefix that is not JSON', read: m({ id: 'p1.x', result: {} }), sdk: m({ id: 'p1.x', result: {} }) },
    {
      name: 'the server’s request',
      read: m({ id: 'p1.1', method: 'elicitation/create' }),
      sdk: m({ id: 'p1.1', method: 'elicitation/create' }),
    },
  ])('inbound: $name', ({ read, sdk }) => {
    expect(ids.inbound(read)).toEqual(sdk);
  });

  it('draws a prefix of its own for each transport', () => {
    const [a, b] = [new WireIds(), new WireIds()];
    expect(a.wire(0)).toMatch(/^[A-Za-z0-9_-]{8}\.0$/);
    expect(a.wire(0)).not.toBe(b.wire(0));
    expect(a.inbound(m({ id: a.wire(0), result: {} }))).toEqual(m({ id: 0, result: {} }));
  });
});
