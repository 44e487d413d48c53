/**
 * For tests that drive connections directly: plays what the session object and the Worker do
 * with an attached connection (session-object.ts #sse, relay-endpoint.ts, edge/sse-relay.ts)
 * over a real WebSocketPair in this isolate — the first answer, then the relay socket after
 * `bridgeMs`, the Worker's acknowledgements routed back to the connection — and returns the
 * client's response.
 */
import { parseAck } from '../../src/core/relay.ts';
import { relayStream } from '../../src/edge/sse-relay.ts';
import type { RelayConnection } from '../../src/session/relay-connection.ts';

export interface RelayedOptions {
  readonly bufferBytes: number;
  readonly heartbeatMs?: number;
  readonly maxAgeMs?: number;
  /** How long the first answer alone carries the connection; 0 here: the socket at once. */
  readonly bridgeMs?: number;
}

export function relayed(
  connection: RelayConnection,
  { bufferBytes, heartbeatMs = 0, maxAgeMs = 0, bridgeMs = 0 }: RelayedOptions,
): Response {
  const first = connection.firstAnswer();
  const head = typeof first === 'string' ? new Response(first).body! : first;
  const openSocket = async () => {
    if (typeof first === 'string' || connection.closed) return null;
    const pair = new WebSocketPair();
    const objectEnd = pair[1];
    objectEnd.accept();
    objectEnd.addEventListener('message', ({ data }) => {
      const consumed = parseAck(data);
      if (consumed !== undefined) connection.acknowledge(consumed);
    });
    objectEnd.addEventListener('close', () => connection.disconnected());
    connection.bind(objectEnd);
    return pair[0];
  };
  // The client leaving: the Worker hears it from the request's signal (edge/worker.ts), here
  // from the body's cancel, before the body itself is cancelled.
  const client = new AbortController();
  const body = relayStream(head, openSocket, { heartbeatMs, maxAgeMs, bufferBytes, bridgeMs, clientSignal: client.signal }).getReader();
  return new Response(
    new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await body.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel(reason) {
        client.abort();
        return body.cancel(reason);
      },
    }),
  );
}
