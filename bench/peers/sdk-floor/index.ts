/**
 * Benchmark peer "sdk-floor": the durable floor (../durable-floor) — its Worker, its storage,
 * its frames, byte for byte — with every answer made by an SDK v2 `McpServer` holding the same
 * tools as `ours` (`echo`, `progress {n}`, `notify`: shared/sdk-tools.ts), connected to the
 * smallest transport that can carry it: a message in, each message the server sends for it
 * stored and framed as it is sent, the request done when its response is. No router, no checks,
 * no request-id or stream bookkeeping, no resumption beyond the floor's.
 *
 * What it is for: the project writes its tools once with McpServer, so no design of ours can
 * cost less than this per call. Its W1 over the durable floor's is the part of a call that
 * belongs to the SDK, not to the transport (bench/README.md, *W1 p50: where the time goes*).
 *
 * A fresh instance of a stored session (an evicted object) replays a handshake at the stored
 * protocol version before the first request, as ours does with the stored one. Its tasks (T1,
 * T2) likewise have every answer made by the SDK: tasks.ts.
 */
import type { JSONRPCMessage, MessageExtraInfo, RequestId, Transport, TransportSendOptions } from '@modelcontextprotocol/server';
import { McpServer } from '@modelcontextprotocol/server';
import { FloorSession } from '../durable-floor/index.ts';
import { type Message, SUPPORTED_VERSIONS } from '../shared/mini-mcp.ts';
import { registerSessionTools, SESSION_CAPABILITIES } from '../shared/sdk-tools.ts';

import floor from '../durable-floor/index.ts';
import { isSdkTask, serveSdkTask } from './tasks.ts';

export { SdkFloorTask } from './tasks.ts';

/** The durable floor's Worker, but a task's `tools/call` and `tasks/get` go through the SDK (tasks.ts). */
export default {
  fetch(request: Request, env: Parameters<typeof floor.fetch>[1]): Promise<Response> {
    return isSdkTask(request) ? serveSdkTask(request, env) : floor.fetch(request, env);
  },
} satisfies ExportedHandler<Parameters<typeof floor.fetch>[1]>;

function toolServer(): McpServer {
  const server = new McpServer(
    { name: 'bench-sdk-floor', version: '0.0.0' },
    { supportedProtocolVersions: SUPPORTED_VERSIONS, capabilities: SESSION_CAPABILITIES },
  );
  registerSessionTools(server);
  return server;
}

type Pending = { readonly emit: (json: string) => void; readonly done: () => void };

/** Requests in, each one's messages out to its own `emit`; resolves when its response is sent. */
class FloorTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  readonly #pending = new Map<RequestId, Pending>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const isResponse = !('method' in message);
    const id = isResponse ? (message as { id: RequestId }).id : options?.relatedRequestId;
    const pending = id === undefined ? undefined : this.#pending.get(id);
    if (pending !== undefined) {
      pending.emit(JSON.stringify(message));
      if (isResponse) {
        this.#pending.delete(id!);
        pending.done();
      }
    }
    return Promise.resolve();
  }

  /** One client message; a request's promise resolves once its response was emitted. */
  run(message: Message, emit: (json: string) => void): Promise<void> {
    if (message.id === undefined || message.id === null) {
      this.onmessage?.(message as JSONRPCMessage);
      return Promise.resolve();
    }
    return new Promise((done) => {
      this.#pending.set(message.id!, { emit, done });
      this.onmessage?.(message as JSONRPCMessage);
    });
  }
}

export class SdkFloorSession extends FloorSession {
  #connecting: Promise<FloorTransport> | undefined;
  #transport: FloorTransport | undefined;

  protected override answer(message: Message, emit: (json: string) => void): Promise<void> {
    if (this.#transport !== undefined) return this.#transport.run(message, emit);
    this.#connecting ??= this.#connect(message.method === 'initialize').then((transport) => (this.#transport = transport));
    return this.#connecting.then((transport) => transport.run(message, emit));
  }

  async #connect(initializing: boolean): Promise<FloorTransport> {
    const transport = new FloorTransport();
    await toolServer().connect(transport);
    if (!initializing) {
      // A stored session in a fresh instance: the handshake again, its answer dropped.
      const protocolVersion = this.ctx.storage.sql.exec<{ v: string }>("SELECT v FROM meta WHERE k = 'protocol'").one().v;
      const clientInfo = { name: 'replayed', version: '0' };
      await transport.run(
        { jsonrpc: '2.0', id: 'replay', method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo } },
        () => {},
      );
      await transport.run({ jsonrpc: '2.0', method: 'notifications/initialized' }, () => {});
    }
    return transport;
  }
}
