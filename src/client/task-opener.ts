/**
 * The requests followTask (task-follower.ts) sends, and what their answers mean before any body
 * is read: each `tasks/stream` that opens the task's stream (and, with `after`, opens it again
 * after a cut), and each `tasks/get` that reads the task's state. Each is one JSON-RPC POST
 * naming the 2026-07-28 revision in its headers and its `_meta`, bounded by the idle limit until
 * its answer begins. A refusal, on a non-2xx answer or in-band on a 200, is another attempt (the
 * network, a 5xx or 429, `too_many_task_streams`, the server's internal error) or a typed error
 * (TaskEventsGoneError, TaskMethodNotFoundError, TaskRefusedError, HttpStatusError).
 *
 * Apart from the follower's reading: what a request carries and what its refusals mean follow the
 * Tasks extension's wire; how the answers are read to the task's end (seq order, duplicates, gaps,
 * the final `tasks/get`) follows SEP-2694's rules for the stream, and stays in task-follower.ts.
 */
import type { MODERN_PROTOCOL_VERSIONS } from '../core/era.ts';
import { encodeHeaderValue } from '../core/header-value.ts';
import { TASKS_EXTENSION } from '../core/task.ts';
import { HEADERS } from '../core/wire.ts';
import { HttpStatusError, TaskEventsGoneError, TaskMethodNotFoundError, TaskRefusedError, type TaskMethod } from './errors.ts';
import { isTransientStatus, readError, reasonOf, Retryable, retryAfterMs, type ErrorObject, type FetchLike } from './http.ts';
import { answeredWithin } from './idle-limit.ts';

/** Task streams are a 2026-07-28 extension: every request names the revision, in its headers and its `_meta`. */
const PROTOCOL_VERSION = '2026-07-28' satisfies (typeof MODERN_PROTOCOL_VERSIONS)[number];
/** "Clients that call tasks/stream against a receiver that does not support task event streams receive -32601." */
const METHOD_NOT_FOUND = -32601;
const INTERNAL_ERROR = -32603;
const DEFAULT_CLIENT_INFO = { name: 'mcp-edge-sessions/task-follower', version: '1' } as const;

/** Where the follower's requests go, and what they carry: the part of FollowTaskOptions (task-follower.ts) that makes them. */
export interface TaskTarget {
  /** The MCP endpoint. */
  readonly url: string | URL;
  readonly taskId: string;
  /** Defaults to the global fetch. */
  readonly fetch?: FetchLike;
  /** Sent with every request (an `Authorization` header, say); the follower's own headers win. */
  readonly headers?: HeadersInit;
  /** `_meta["io.modelcontextprotocol/clientInfo"]` of every request. */
  readonly clientInfo?: { readonly name: string; readonly version: string };
}

/** A failure worth another attempt: the network, a 5xx or 429, a stream cut before its result. */
export class Transient extends Retryable {}

export class TaskOpener {
  readonly #options: TaskTarget;
  readonly #taskId: string;
  readonly #fetch: FetchLike;
  readonly #idleTimeoutMs: number | undefined;
  readonly #signal: AbortSignal;
  readonly #meta: Record<string, unknown>;

  /** `idleTimeoutMs` and `signal` are the follower's: its idle limit, and its caller's abort. */
  constructor(options: TaskTarget, idleTimeoutMs: number | undefined, signal: AbortSignal) {
    this.#options = options;
    this.#taskId = options.taskId;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#idleTimeoutMs = idleTimeoutMs;
    this.#signal = signal;
    this.#meta = {
      'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
      'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
      'io.modelcontextprotocol/clientInfo': options.clientInfo ?? DEFAULT_CLIENT_INFO,
    };
  }

  async post(method: TaskMethod, id: number, params: Record<string, unknown>): Promise<Response> {
    const headers = new Headers(this.#options.headers);
    headers.set('Content-Type', 'application/json');
    headers.set('Accept', 'application/json, text/event-stream');
    headers.set(HEADERS.protocolVersion, PROTOCOL_VERSION);
    headers.set(HEADERS.method, method);
    headers.set(HEADERS.name, encodeHeaderValue(this.#taskId));
    const body = JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: this.#meta } });
    // Both methods are answered at once (a stream's first bytes, a task's state): an answer that
    // has not begun within the idle limit went down a dead connection, and is asked again.
    try {
      return await answeredWithin(this.#idleTimeoutMs, this.#signal, (signal) =>
        this.#fetch(this.#options.url, { method: 'POST', headers, body, signal }),
      );
    } catch (error) {
      throw new Transient('the request failed', { cause: error });
    }
  }

  /** A non-2xx answer: another attempt for a transient status, else its typed refusal. */
  async refused(method: TaskMethod, response: Response, after: number | undefined): Promise<never> {
    const { error, text } = await readError(response, this.#idleTimeoutMs);
    if (isTransientStatus(response.status))
      throw new Transient(`${response.status}`, { cause: text, retryAfterMs: retryAfterMs(response) });
    if (error !== undefined) throw this.failure(method, response.status, error, after);
    throw new HttpStatusError(response.status, undefined, text);
  }

  /** A JSON-RPC error, keyed on `data.reason` first: -32010 is the SEP's example, in a range without shared meaning. */
  failure(method: TaskMethod, status: number, error: ErrorObject, after: number | undefined): Error {
    const reason = reasonOf(error);
    if (reason === 'events_gone') {
      const earliest = error.data?.earliestSeq;
      return new TaskEventsGoneError(this.#taskId, Number.isSafeInteger(earliest) ? (earliest as number) : undefined, after);
    }
    // This server bounds the streams open on a task at once: one frees when another client's ends.
    if (reason === 'too_many_task_streams') return new Transient(reason, { cause: error });
    // The server's own failure, answered in-band on a 200 (a task object reset by a deploy, one
    // that failed to answer): the same as a 5xx, worth another attempt within the budget.
    if (error.code === INTERNAL_ERROR) return new Transient('internal_error', { cause: error });
    if (error.code === METHOD_NOT_FOUND) return new TaskMethodNotFoundError(method, this.#taskId);
    return new TaskRefusedError(method, this.#taskId, status, error.code, reason, error.message ?? '');
  }
}
