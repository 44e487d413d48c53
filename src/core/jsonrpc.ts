/**
 * JSON-RPC 2.0 message validation for POST bodies. Plain functions over plain data: the
 * body text goes in, typed messages or a typed error come out.
 */
import { httpErrors, type JsonRpcId } from './errors.ts';
import { utf8Length } from './utf8.ts';

export interface JsonRpcRequest {
  readonly jsonrpc: '2.0';
  readonly id: JsonRpcId;
  readonly method: string;
  readonly params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  readonly jsonrpc: '2.0';
  readonly method: string;
  readonly params?: Record<string, unknown>;
}

export interface JsonRpcResponse {
  readonly jsonrpc: '2.0';
  /** Absent or null only on an error response about no request in particular. */
  readonly id?: JsonRpcId | null;
  readonly result?: unknown;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
}

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

export interface ParsedBody {
  readonly messages: readonly JsonRpcMessage[];
  /** Whether the body was a JSON array (a JSON-RPC batch). */
  readonly batch: boolean;
}

/**
 * An error response to request `id`: what the server puts in the place of a result it cannot
 * give (the handler's instance stopped, the result was too large to store).
 */
export function errorAnswer(id: JsonRpcId | null, code: number, message: string, data?: Record<string, unknown>): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

export const isRequest = (m: JsonRpcMessage): m is JsonRpcRequest => 'method' in m && 'id' in m;
export const isNotification = (m: JsonRpcMessage): m is JsonRpcNotification => 'method' in m && !('id' in m);
export const isResponse = (m: JsonRpcMessage): m is JsonRpcResponse => !('method' in m);

/** The id of the request a response answers; undefined for any other message, or an error about no request. */
export const answeredId = (m: JsonRpcMessage): JsonRpcId | undefined => (isResponse(m) ? (m.id ?? undefined) : undefined);

/**
 * The longest request id of text JSON does not escape, in UTF-8 bytes. JSON-RPC sets no bound,
 * and real clients use counters and UUIDs; the bound itself is on the id as stored
 * (MAX_STORED_ID_BYTES), which admits every such id of up to this size.
 */
export const MAX_REQUEST_ID_BYTES = 256;

/**
 * The most UTF-8 bytes a request id may take as stored (storedIdBytes): what a 256-byte id of
 * unescaped text takes there, its quoting included (`"\"` and `\""`, 6 bytes). Every id is
 * stored for the session's life (reuse is refused), and a stored key over ~1,000 bytes would
 * spill into a 4 KB overflow page of its own: bounding the id as sent let one padded with
 * U+0001 take 8.5 KB on disk a request, twelve times an ASCII id's (issue 42).
 */
export const MAX_STORED_ID_BYTES = MAX_REQUEST_ID_BYTES + 6;

/**
 * The UTF-8 bytes of a request id's largest stored form. The session keeps its key (idKey: its
 * JSON) in the requests table, that key escaped again as a JSON string in its stream's request
 * list (streams.request_keys), and its answer's JSON repeats the id: the request list's form is
 * the largest of the three, and each character takes at least its UTF-8 size in it. A character
 * JSON leaves alone takes its UTF-8 size in every form; a `"` or `\` takes 4 bytes there, a
 * control character or a lone surrogate 7 (`\\u0001`), where it was 1 byte sent (or 3).
 */
export const storedIdBytes = (id: JsonRpcId): number => utf8Length(JSON.stringify(idKey(id)));

/**
 * The most messages one JSON-RPC batch (2025-03-26) may hold: each request of it runs at once
 * and is kept for the session's life, and no client needs more in one POST.
 */
export const MAX_BATCH_MESSAGES = 100;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** MCP's RequestId (and ProgressToken): a string or an integer. */
const isId = (value: unknown): value is JsonRpcId =>
  typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));

/**
 * The members each kind of message may have. The rules below are the MCP schema's as the SDK
 * enforces them (its message schemas are strict): the SDK drops a message it cannot classify
 * with no answer at all, so a request it would drop must be refused here, before its id is
 * registered — or its POST would wait forever and the id would stay used.
 */
const MEMBERS = {
  request: new Set(['jsonrpc', 'id', 'method', 'params']),
  notification: new Set(['jsonrpc', 'method', 'params']),
  result: new Set(['jsonrpc', 'id', 'result']),
  error: new Set(['jsonrpc', 'id', 'error']),
} as const;

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

function unexpectedMember(value: Record<string, unknown>, allowed: ReadonlySet<string>): string | undefined {
  for (const key of Object.keys(value)) if (!allowed.has(key)) return `unexpected member ${JSON.stringify(key)}`;
  return undefined;
}

/** `_meta` of a request's or notification's params: an object, with a well-typed progress token. */
function problemWithMeta(params: Record<string, unknown>): string | undefined {
  if (!('_meta' in params)) return undefined;
  const meta = params._meta;
  if (!isObject(meta)) return 'params._meta must be an object';
  if ('progressToken' in meta && !isId(meta.progressToken)) return 'a progress token must be a string or an integer';
  if (RELATED_TASK in meta && !(isObject(meta[RELATED_TASK]) && typeof meta[RELATED_TASK].taskId === 'string')) {
    return `_meta["${RELATED_TASK}"] must be an object with a string taskId`;
  }
  return undefined;
}

const ID_TOO_LARGE =
  `a request id may take at most ${MAX_STORED_ID_BYTES} UTF-8 bytes as stored, JSON-escaped twice ` +
  `(${MAX_REQUEST_ID_BYTES} bytes of text JSON leaves alone; a control character or lone surrogate takes 7, a " or \\ 4)`;

/** Why `value` is not a JSON-RPC message MCP can carry, or undefined if it is one. */
function problemWith(value: unknown): string | undefined {
  if (!isObject(value)) return 'a message must be a JSON object';
  if (value.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"';
  if ('method' in value) {
    if (typeof value.method !== 'string' || value.method === '') return 'method must be a non-empty string';
    if ('params' in value && !isObject(value.params)) return 'params must be an object';
    // MCP: "Unlike base JSON-RPC, the ID MUST NOT be null"; its schema's RequestId is a string or an integer.
    if ('id' in value && !isId(value.id)) return 'a request id must be a string or an integer';
    // A safe integer's stored form is at most 19 bytes: only a string id can pass the bound.
    if (typeof value.id === 'string' && storedIdBytes(value.id) > MAX_STORED_ID_BYTES) return ID_TOO_LARGE;
    if ('result' in value || 'error' in value) return 'a message cannot be both a request and a response';
    return (
      unexpectedMember(value, 'id' in value ? MEMBERS.request : MEMBERS.notification) ??
      (isObject(value.params) ? problemWithMeta(value.params) : undefined)
    );
  }
  const hasResult = 'result' in value;
  const hasError = 'error' in value;
  if (hasResult === hasError) return 'a response has exactly one of result and error';
  // MCP's schema lets an error response leave its id out (an error about no request in particular).
  if (hasResult && !('id' in value)) return 'a result needs an id';
  if ('id' in value && value.id !== null && !isId(value.id)) return 'a response id must be a string, an integer or null';
  if (hasResult) {
    if (!isObject(value.result)) return 'result must be an object';
    if ('_meta' in value.result && !isObject(value.result._meta)) return 'result._meta must be an object';
    return unexpectedMember(value, MEMBERS.result);
  }
  const error = value.error;
  if (!isObject(error) || !Number.isSafeInteger(error.code) || typeof error.message !== 'string') {
    return 'error must have an integer code and a string message';
  }
  return unexpectedMember(value, MEMBERS.error);
}

/** Parses a POST body. Throws McpHttpError 400 (-32700 or -32600). */
export function parseJsonRpcBody(text: string): ParsedBody {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw httpErrors.parseError('the body is not valid JSON');
  }
  const batch = Array.isArray(json);
  const items: unknown[] = batch ? (json as unknown[]) : [json];
  if (items.length === 0) throw httpErrors.invalidRequest('an empty batch');
  if (items.length > MAX_BATCH_MESSAGES) throw httpErrors.invalidRequest(`a batch may hold at most ${MAX_BATCH_MESSAGES} messages`);
  for (const item of items) {
    const problem = problemWith(item);
    if (problem !== undefined) {
      const id = isObject(item) && isId(item.id) ? item.id : null;
      throw httpErrors.invalidRequest(problem, id);
    }
  }
  const messages = items as JsonRpcMessage[];
  const ids = messages.filter(isRequest).map((m) => idKey(m.id));
  if (new Set(ids).size !== ids.length) throw httpErrors.invalidRequest('a batch repeats a request id');
  return { messages, batch };
}

/**
 * The storage key of a request id. JSON keeps `1` and `"1"` apart, which JSON-RPC
 * treats as different ids.
 */
export function idKey(id: JsonRpcId): string {
  return JSON.stringify(id);
}

export function isInitializeRequest(message: JsonRpcMessage): message is JsonRpcRequest {
  return isRequest(message) && message.method === 'initialize';
}
