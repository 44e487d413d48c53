/**
 * The small HTTP and JSON-RPC pieces the client transport reads answers with. No MCP SDK code
 * at runtime: the client entry point stays free of the server's dependencies.
 */
import type { JsonRpcMessage } from './sdk-transport.ts';
import type { RequestId } from './errors.ts';
import { bodyText } from './idle-limit.ts';

/** The fetch the transport calls: the global one, or the caller's (a test's in-process Worker). */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** A JSON-RPC error object, as far as it could be read from a refusal's body. */
export interface ErrorObject {
  readonly code?: number;
  readonly message?: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

/**
 * The most of a refusal's body that is read: this server's are a few hundred bytes; the rest of
 * anything longer (an intermediary's page) is not worth holding.
 */
export const MAX_ERROR_BYTES = 64 * 1024;

/**
 * The body of a non-2xx answer: its JSON-RPC error if it had one, and its text either way — at
 * most MAX_ERROR_BYTES of it, each chunk within `idleMs` (a body that stops coming, on a
 * connection a NAT dropped without a word, is taken as none: its status still says what it is).
 */
export async function readError(response: Response, idleMs?: number): Promise<{ error: ErrorObject | undefined; text: string }> {
  const text = await bodyText(response, idleMs, MAX_ERROR_BYTES).catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: unknown };
    const error = body?.error;
    if (typeof error === 'object' && error !== null) return { error: error as ErrorObject, text };
  } catch {
    // Not JSON: an intermediary's page, or nothing. The status says enough.
  }
  return { error: undefined, text };
}

/** `error.data.reason`, the wire contract's machine-readable refusal reason. */
export function reasonOf(error: ErrorObject | undefined): string | undefined {
  const reason = error?.data?.reason;
  return typeof reason === 'string' ? reason : undefined;
}

/** The media type of a response, lower-cased, without parameters. */
export function mediaType(response: Response): string {
  return (response.headers.get('Content-Type') ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Statuses worth another attempt: the server (or something before it) may answer differently soon. */
export const isTransientStatus = (status: number): boolean => status === 429 || status >= 500;

/** A failure worth another attempt; carries what caused it, and how long its answer asked to wait (Retry-After). */
export class Retryable extends Error {
  readonly retryAfterMs: number | undefined;

  constructor(message: string, options?: ErrorOptions & { readonly retryAfterMs?: number | undefined }) {
    super(message, options);
    this.retryAfterMs = options?.retryAfterMs;
  }
}

const IMF_FIXDATE = /^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$/;

/**
 * How long the answer asks the client to wait before trying again, in ms: its `Retry-After`
 * (RFC 9110 §10.2.3: delay-seconds, or an HTTP-date), or undefined without a usable one.
 */
export function retryAfterMs(response: Response, now = Date.now()): number | undefined {
  const value = response.headers.get('Retry-After')?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^[0-9]{1,10}$/.test(value)) return Number(value) * 1000;
  // An HTTP-date as senders write it (IMF-fixdate); Date.parse alone would read "-5" as a year.
  if (!IMF_FIXDATE.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Resolves after `ms`, or at once when `signal` aborts (the caller then looks at the signal). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

// ---- JSON-RPC ------------------------------------------------------------------------------

/** A request: a method and an id. */
export const isRequest = (message: JsonRpcMessage): message is JsonRpcMessage & { method: string; id: RequestId } =>
  'method' in message && 'id' in message && message.id !== undefined;

/** The id a response answers, or undefined for anything that is not a response. */
export function answeredId(message: unknown): RequestId | undefined {
  if (typeof message !== 'object' || message === null || 'method' in message) return undefined;
  const id = (message as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** A map key for a request id: `1` and `"1"` are different requests. */
export const idKey = (id: RequestId): string => JSON.stringify(id);

/** A parsed `data:` payload that looks like a JSON-RPC 2.0 message; the SDK's schemas check the rest. */
export function parseMessage(text: string): JsonRpcMessage | undefined {
  try {
    return asMessage(JSON.parse(text));
  } catch {
    return undefined; // reported by the caller
  }
}

export function asMessage(value: unknown): JsonRpcMessage | undefined {
  const isMessage =
    typeof value === 'object' && value !== null && !Array.isArray(value) && (value as { jsonrpc?: unknown }).jsonrpc === '2.0';
  return isMessage ? (value as JsonRpcMessage) : undefined;
}
