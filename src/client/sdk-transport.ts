/**
 * The MCP SDK client's `Transport` contract, as the shapes it is checked by: TypeScript compares
 * structurally, so `new Client(…).connect(new ForkSafeTransport(url))` type-checks against
 * these without the client entry naming an SDK package. A client-only install of
 * `mcp-edge-sessions/client` so pulls in nothing — neither the server's dependencies nor an
 * SDK version of ours — and type-checks with `skipLibCheck: false`.
 *
 * That these stay what the SDK expects is checked at compile time, not trusted:
 * test/types/sdk-transport.ts assigns a ForkSafeTransport to `@modelcontextprotocol/client`'s
 * `Transport` (and the SDK's messages to ours), so a drift fails `npm test`'s typecheck.
 */
import type { JsonRpcMessage } from '../core/jsonrpc.ts';
import type { RequestId } from './errors.ts';

export type { JsonRpcMessage };

/** What the SDK's Client passes along with a message it sends. */
export interface TransportSendOptions {
  /** The incoming request this message answers or belongs to. */
  readonly relatedRequestId?: RequestId | undefined;
  /** A resumption token to continue from (`Last-Event-ID`); the transport resumes by itself. */
  readonly resumptionToken?: string | undefined;
  /** Called with each new resumption token of the request's stream. */
  readonly onresumptiontoken?: ((token: string) => void) | undefined;
  /** Aborts this message's own request (its POST and the stream that answers it), not the transport. */
  readonly requestSignal?: AbortSignal | undefined;
  /** HTTP headers for this message's POST (the Client's `Mcp-Param-*` headers of a `tools/call`). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** The SDK's Transport, the members ForkSafeTransport implements. */
export interface Transport {
  start(): Promise<void>;
  send(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void>;
  close(): Promise<void>;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JsonRpcMessage) => void) | undefined;
  readonly sessionId?: string | undefined;
  setProtocolVersion?: ((version: string) => void) | undefined;
}
