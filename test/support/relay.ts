/**
 * For tests that drive connections directly: plays what the session object and the Worker do
 * with an attached connection (session-object.ts #sse and #bindRelay, edge/sse-relay.ts) over
 * a real WebSocketPair in this isolate — the first answer, then the relay socket, the Worker's
 * acknowledgements routed back to the connection — and returns the client's response.
 */
import { parseAck } from '../../src/core/relay.ts';
import { relayStream } from '../../src/edge/sse-relay.ts';
import type { RelayConnection } from '../../src/session/relay-connection.ts';

export interface RelayedOptions {
  readonly bufferBytes: number;
  readonly heartbeatMs?: number;
  readonly maxAgeMs?: number;
}

export function relayed(connection: RelayConnection, { bufferBytes, heartbeatMs = 0, maxAgeMs = 0 }: RelayedOptions): Response {
  const first = connection.firstAnswer();
  const options = { heartbeatMs, maxAgeMs, bufferBytes };
  if (typeof first === 'string') return new Response(relayStream(new TextEncoder().encode(first), Promise.resolve(null), options));
  const pair = new WebSocketPair();
  const objectEnd = pair[1];
  objectEnd.accept();
  objectEnd.addEventListener('message', ({ data }) => {
    const consumed = parseAck(data);
    if (consumed !== undefined) connection.acknowledge(consumed);
  });
  objectEnd.addEventListener('close', () => connection.disconnected());
  connection.bind(objectEnd);
  return new Response(relayStream(first, Promise.resolve(pair[0]), options));
}
