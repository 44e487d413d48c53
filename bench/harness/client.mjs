// The one MCP Streamable HTTP client the benchmark uses for every peer: raw fetch, the streaming
// SSE parser beside it, nothing peer-specific. Every request carries a timeout (AbortSignal), so
// every read below ends: by the answer, by end of stream, by an abort we ask for, or by the timeout.
import { performance } from 'node:perf_hooks';
import { SseParser } from './sse.mjs';

export const PROTOCOL_VERSION = '2025-11-25';
const POST_ACCEPT = 'application/json, text/event-stream';
const DEFAULT_TIMEOUT_MS = 30_000;
/** After a call's answer, how long to wait for the server to end the stream before cutting it. */
const DRAIN_MS = 1_000;

export const now = () => performance.now();

/**
 * An AbortController that also aborts itself after `ms`, by a plain timer. Not
 * AbortSignal.any([…, AbortSignal.timeout(ms)]): in Node 20 the composed timeout signal can be
 * garbage-collected before it fires, and a read that should time out then waits forever.
 */
function deadline(ms) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`no end within ${ms} ms`, 'TimeoutError')), ms);
  return { signal: controller.signal, abort: () => controller.abort(), clear: () => clearTimeout(timer) };
}

/** Runs `fn(signal)` under deadline(ms), always clearing the timer. */
async function withDeadline(ms, fn) {
  const request = deadline(ms);
  try {
    return await fn(request.signal);
  } finally {
    request.abort(); // cuts whatever is still open
    request.clear();
  }
}

const abortedOrError = (error) => (error?.name === 'AbortError' || error?.name === 'TimeoutError' ? 'aborted' : 'error');

/** A JSON-RPC error or an HTTP answer we cannot use, kept apart from timeouts and aborts. */
export class HttpError extends Error {
  constructor(what, status, body) {
    super(`${what}: HTTP ${status}${body ? ` ${body.slice(0, 300)}` : ''}`);
    this.status = status;
    this.body = body;
  }
}

function isSse(response) {
  return (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase() === 'text/event-stream';
}

function isJson(response) {
  return (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase() === 'application/json';
}

function parseMessage(data) {
  if (data === '') return undefined;
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** The JSON-RPC response to `requestId` among one message or a batch, if there. */
export function responseTo(message, requestId) {
  if (Array.isArray(message)) return message.find((m) => m && m.id === requestId && !('method' in m));
  return message && message.id === requestId && !('method' in message) ? message : undefined;
}

/**
 * Reads an SSE body event by event. `onEvent(event)` returns 'stop' to end reading (the caller
 * then decides whether to abort the connection). Returns how reading ended:
 * 'stopped' | 'eof' | 'aborted' (our abort or the timeout) | 'error'.
 */
export async function readSse(response, onEvent) {
  const parser = new SseParser();
  const reader = response.body.getReader();
  try {
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (error) {
        return abortedOrError(error);
      }
      const t = now();
      const events = chunk.done ? parser.end() : parser.push(chunk.value);
      for (const event of events) {
        event.t = t;
        event.message = event.hasData ? parseMessage(event.data) : undefined;
        if (onEvent(event) === 'stop') return 'stopped';
      }
      if (chunk.done) return 'eof';
    }
  } finally {
    reader.releaseLock();
  }
}

/** Starts a session: initialize, then notifications/initialized. Not part of any timing. */
export async function initialize(url, { timeoutMs = 10_000, name = 'mcp-bench' } = {}) {
  const request = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name, version: '1.0.0' } },
  };
  const { response, answer } = await withDeadline(timeoutMs, async (signal) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: POST_ACCEPT, 'MCP-Protocol-Version': PROTOCOL_VERSION },
      body: JSON.stringify(request),
      signal,
    });
    if (response.status !== 200) throw new HttpError('initialize', response.status, await response.text().catch(() => ''));
    let answer;
    if (isSse(response)) await readSse(response, (event) => ((answer = responseTo(event.message, 0)) ? 'stop' : undefined));
    else answer = responseTo(await response.json(), 0);
    return { response, answer };
  });
  if (!answer?.result) throw new Error(`initialize: no result (${JSON.stringify(answer?.error ?? null)})`);
  const session = new Session(url, response.headers.get('mcp-session-id') ?? undefined, answer.result.protocolVersion ?? PROTOCOL_VERSION);
  await session.notify('notifications/initialized');
  return session;
}

export class Session {
  #nextId = 1;

  constructor(url, sessionId, protocolVersion) {
    this.url = url;
    this.sessionId = sessionId;
    this.protocolVersion = protocolVersion;
  }

  headers(extra = {}) {
    return {
      'MCP-Protocol-Version': this.protocolVersion,
      ...(this.sessionId !== undefined && { 'Mcp-Session-Id': this.sessionId }),
      ...extra,
    };
  }

  /** Sends a notification; expects 202. */
  async notify(method, params, { timeoutMs = 10_000 } = {}) {
    await withDeadline(timeoutMs, async (signal) => {
      const response = await fetch(this.url, {
        method: 'POST',
        headers: this.headers({ 'Content-Type': 'application/json', Accept: POST_ACCEPT }),
        body: JSON.stringify({ jsonrpc: '2.0', method, ...(params !== undefined && { params }) }),
        signal,
      });
      const body = await response.text();
      if (response.status !== 202 && response.status !== 200) throw new HttpError(method, response.status, body);
    });
  }

  /**
   * Calls a tool with a progress token and collects what arrives, each event with its receive
   * time (performance.now(), ms). `stopAfter(event, outcome)` may return true to abort the
   * connection right after that event (nothing later is looked at, even from the same chunk).
   * The outcome: { requestId, tSent, status, streamed, events, response, tResponse, lastEventId, end }
   * where end is 'response' | 'stopped' | 'eof' | 'aborted' | 'error'.
   */
  async callTool(name, args, { timeoutMs = DEFAULT_TIMEOUT_MS, stopAfter } = {}) {
    const requestId = this.#nextId++;
    const message = {
      jsonrpc: '2.0',
      id: requestId,
      method: 'tools/call',
      params: { name, arguments: args, _meta: { progressToken: `bench-${requestId}` } },
    };
    const request = deadline(timeoutMs);
    const outcome = {
      requestId,
      tSent: now(),
      status: 0,
      streamed: false,
      events: [],
      response: undefined,
      tResponse: undefined,
      lastEventId: undefined,
      end: 'error',
    };
    let response;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers: this.headers({ 'Content-Type': 'application/json', Accept: POST_ACCEPT }),
        body: JSON.stringify(message),
        signal: request.signal,
      });
    } catch (error) {
      request.clear();
      outcome.end = abortedOrError(error);
      outcome.error = String(error?.cause ?? error);
      return outcome;
    }
    outcome.status = response.status;
    outcome.headers = Object.fromEntries(response.headers);
    if (isSse(response)) {
      outcome.streamed = true;
      const end = await readSse(response, (event) => {
        outcome.events.push(event);
        if (event.id !== '') outcome.lastEventId = event.id;
        const answer = responseTo(event.message, requestId);
        if (answer) {
          outcome.response = answer;
          outcome.tResponse = event.t;
          return 'stop';
        }
        if (stopAfter?.(event, outcome)) {
          request.abort();
          return 'stop';
        }
        return undefined;
      });
      if (outcome.response) {
        outcome.end = 'response';
        drain(response, request);
        return outcome;
      }
      outcome.end = end;
      if (end === 'stopped') await response.body.cancel().catch(() => undefined);
    } else {
      const text = await response.text().catch(() => '');
      const t = now();
      const parsed = isJson(response) ? parseMessage(text) : undefined;
      const answer = parsed === undefined ? undefined : responseTo(parsed, requestId);
      if (answer) {
        outcome.events.push({ id: '', data: text, hasData: true, message: parsed, t });
        outcome.response = answer;
        outcome.tResponse = t;
        outcome.end = 'response';
      } else {
        outcome.error = `HTTP ${response.status} ${text.slice(0, 300)}`;
      }
    }
    request.clear();
    return outcome;
  }

  /**
   * GET + Last-Event-ID. Reads until `until(event)` is true (then cuts the connection), the stream
   * ends, or the timeout. Returns { status, resumed (the Mcp-Stream-Resumed header, if any),
   * ok (200 + SSE), tSent, events, end, body (for a refusal) }.
   */
  async resume(lastEventId, { timeoutMs = DEFAULT_TIMEOUT_MS, until } = {}) {
    const request = deadline(timeoutMs);
    const outcome = { status: 0, ok: false, resumed: undefined, tSent: now(), events: [], end: 'error' };
    try {
      let response;
      try {
        response = await fetch(this.url, {
          headers: this.headers({ Accept: 'text/event-stream', 'Last-Event-ID': lastEventId }),
          signal: request.signal,
        });
      } catch (error) {
        outcome.end = abortedOrError(error);
        outcome.error = String(error?.cause ?? error);
        return outcome;
      }
      outcome.status = response.status;
      outcome.resumed = response.headers.get('mcp-stream-resumed') ?? undefined;
      if (response.status !== 200 || !isSse(response)) {
        outcome.body = (await response.text().catch(() => '')).slice(0, 300);
        outcome.end = 'refused';
        return outcome;
      }
      outcome.ok = true;
      outcome.end = await readSse(response, (event) => {
        outcome.events.push(event);
        return until?.(event) ? 'stop' : undefined;
      });
      return outcome;
    } finally {
      // Cuts the connection if it is still open (a resumed stream may stay open after its result).
      request.abort();
      request.clear();
    }
  }

  /**
   * Opens the standalone GET stream and keeps reading it in the background (so the server never
   * sees back-pressure) until close() or `maxMs`. Resolves once the answer's headers are in.
   * `onEvent(event)` sees each event as it arrives.
   */
  async openStream({ timeoutMs = 10_000, maxMs = 600_000, onEvent = () => undefined } = {}) {
    const held = deadline(maxMs);
    const connectTimer = setTimeout(() => held.abort(), timeoutMs);
    let response;
    try {
      response = await fetch(this.url, { headers: this.headers({ Accept: 'text/event-stream' }), signal: held.signal });
    } catch (error) {
      held.clear();
      throw error;
    } finally {
      clearTimeout(connectTimer);
    }
    const close = () => {
      held.abort();
      held.clear();
    };
    const stream = { status: response.status, ok: response.status === 200 && isSse(response), close };
    if (!stream.ok) {
      await response.text().catch(() => '');
      close();
    } else {
      stream.done = readSse(response, (event) => void onEvent(event)).catch(() => 'error');
    }
    return stream;
  }

  /** Ends the session (best effort: not every server allows DELETE). */
  async close({ timeoutMs = 5_000 } = {}) {
    if (this.sessionId === undefined) return 0;
    return withDeadline(timeoutMs, async (signal) => {
      const response = await fetch(this.url, { method: 'DELETE', headers: this.headers(), signal });
      await response.text().catch(() => '');
      return response.status;
    }).catch(() => 0);
  }
}

/**
 * After a call's answer the server should end the stream; read it to its end in the background
 * (so the connection can be reused) and cut it if that takes longer than DRAIN_MS.
 */
function drain(response, request) {
  const timer = setTimeout(() => request.abort(), DRAIN_MS);
  readSse(response, () => undefined)
    .catch(() => undefined)
    .finally(() => {
      clearTimeout(timer);
      request.clear();
    });
}

export const MODERN_PROTOCOL_VERSION = '2026-07-28';
let modernId = 1;

/**
 * One 2026-07-28 request (no session: every request carries its revision, capabilities and
 * client info, and the routing headers; `Mcp-Name` is the tool, resource or task named).
 * `capabilities` are the client's, declared in the envelope (T1, T2: the Tasks extension).
 * Resolves with `{ status, message }`: the JSON-RPC answer of a JSON body, or the last message
 * of an SSE one.
 */
export async function modernRequest(url, method, params = {}, { timeoutMs = 10_000, capabilities = {}, mcpName, headers = {} } = {}) {
  // `mcpName`: the header's value where it is not the tool, resource or task named (null: none, as for events/*).
  const name = mcpName === undefined ? (params.name ?? params.uri ?? params.taskId) : (mcpName ?? undefined);
  return withDeadline(timeoutMs, async (signal) => {
    const response = await fetch(url, {
      method: 'POST',
      signal,
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': MODERN_PROTOCOL_VERSION,
        'Mcp-Method': method,
        ...(name !== undefined && { 'Mcp-Name': name }),
        // E3's helper runs AUTH=jwt: its `Authorization`.
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: modernId++, method, params: { ...params, _meta: modernEnvelope(capabilities) } }),
    });
    if (isSse(response)) {
      let message;
      await readSse(response, (event) => void (message = event.message ?? message));
      return { status: response.status, message };
    }
    const text = await response.text();
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      message = undefined;
    }
    return { status: response.status, message };
  });
}

export function modernEnvelope(capabilities = {}) {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN_PROTOCOL_VERSION,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
    'io.modelcontextprotocol/clientInfo': { name: 'mcp-bench', version: '0.0.0' },
  };
}

/**
 * Opens a `subscriptions/listen` stream for tool list changes and reads it in the background;
 * `onEvent(event)` sees each event. Resolves once the acknowledgement arrived.
 */
export async function modernListen(url, onEvent, { maxMs = 600_000 } = {}) {
  const held = deadline(maxMs);
  const response = await fetch(url, {
    method: 'POST',
    signal: held.signal,
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': MODERN_PROTOCOL_VERSION,
      'Mcp-Method': 'subscriptions/listen',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: modernId++,
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: true }, _meta: modernEnvelope() },
    }),
  });
  if (!isSse(response)) {
    held.clear();
    throw new HttpError('subscriptions/listen', response.status, await response.text().catch(() => ''));
  }
  let acknowledged;
  const ack = new Promise((resolve) => (acknowledged = resolve));
  const done = readSse(response, (event) => {
    if (event.message?.method === 'notifications/subscriptions/acknowledged') acknowledged();
    else onEvent(event);
  }).finally(() => held.clear());
  await ack;
  return { close: () => held.abort(), done };
}

/**
 * Opens a task's `tasks/stream` (SEP-2694, draft; T3, T4): `params` `{ taskId, after? }`, the
 * client's `capabilities` in the envelope, `Mcp-Name` the task. Resolves once the answer's
 * headers are in, and reads an SSE answer in the background, every event stamped with its
 * receive time (performance.now(), ms). The stream:
 * { status, ok (200 + SSE), tSent, tHeaders, events: [every SSE event], response (the
 *   JSON-RPC answer to the request, once it came; a JSON answer is that at once), tResponse,
 *   done (resolves with how reading ended: 'response' | 'eof' | 'aborted' | 'error'),
 *   waitFor(predicate, timeoutMs) (resolves with the first event read, so far or from now on,
 *   that matches; rejects at the timeout or when the stream ends first), close() }.
 * Reading stops at the answer (the stream's end); `maxMs` bounds the whole stream.
 */
export function modernTaskStream(url, taskId, { after, capabilities = {}, timeoutMs = 10_000, maxMs = 600_000 } = {}) {
  const params = { taskId, ...(after !== undefined && { after }) };
  return modernStream(url, 'tasks/stream', params, { mcpName: taskId, capabilities, timeoutMs, maxMs });
}

/**
 * Opens a 2026-07-28 request answered by a stream of notifications ended by its result
 * (`tasks/stream`, `events/stream`): `params` with the client's `capabilities` in the envelope,
 * `mcpName` the `Mcp-Name` header (none when undefined). The stream is modernTaskStream's, which
 * calls this; `id` is the request's JSON-RPC id (an `events/stream`'s subscription id).
 */
export async function modernStream(url, method, params, { mcpName, capabilities = {}, timeoutMs = 10_000, maxMs = 600_000 } = {}) {
  const id = modernId++;
  const what = `${method}${mcpName === undefined ? '' : ` ${mcpName}`}`;
  const held = deadline(maxMs);
  const connectTimer = setTimeout(() => held.abort(), timeoutMs);
  const stream = {
    id,
    status: 0,
    ok: false,
    tSent: now(),
    tHeaders: undefined,
    events: [],
    response: undefined,
    tResponse: undefined,
    done: undefined,
    waitFor: undefined,
    close: () => {
      held.abort();
      held.clear();
    },
  };
  let response;
  try {
    response = await fetch(url, {
      method: 'POST',
      signal: held.signal,
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': MODERN_PROTOCOL_VERSION,
        'Mcp-Method': method,
        ...(mcpName !== undefined && { 'Mcp-Name': mcpName }),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: modernEnvelope(capabilities) } }),
    });
  } catch (error) {
    held.clear();
    throw error;
  } finally {
    clearTimeout(connectTimer);
  }
  stream.tHeaders = now();
  stream.status = response.status;
  const waiters = new Set();
  let finished;
  stream.waitFor = (predicate, waitMs = 10_000) =>
    new Promise((resolve, reject) => {
      const seen = stream.events.find(predicate);
      if (seen !== undefined) return resolve(seen);
      if (finished !== undefined) return reject(new Error(`${what}: the stream ended (${finished}) before a matching event`));
      const waiter = { predicate, resolve, reject, timer: undefined };
      waiter.timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`${what}: no matching event within ${waitMs} ms`));
      }, waitMs);
      waiters.add(waiter);
    });
  const heard = (event) => {
    for (const waiter of [...waiters]) {
      if (!waiter.predicate(event)) continue;
      clearTimeout(waiter.timer);
      waiters.delete(waiter);
      waiter.resolve(event);
    }
  };
  const ended = (end) => {
    finished = end;
    for (const waiter of waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error(`${what}: the stream ended (${end}) before a matching event`));
    }
    waiters.clear();
    held.clear();
    return end;
  };
  if (!isSse(response)) {
    const text = await response.text().catch(() => '');
    const t = now();
    const message = parseMessage(text);
    if (message !== undefined) {
      const event = { id: '', data: text, hasData: true, message, t };
      stream.events.push(event);
      stream.response = responseTo(message, id);
      stream.tResponse = stream.response === undefined ? undefined : t;
    }
    stream.done = Promise.resolve(ended(stream.response === undefined ? 'error' : 'response'));
    return stream;
  }
  stream.ok = response.status === 200;
  stream.done = readSse(response, (event) => {
    stream.events.push(event);
    const answer = responseTo(event.message, id);
    if (answer !== undefined) {
      stream.response = answer;
      stream.tResponse = event.t;
    }
    heard(event);
    return answer !== undefined ? 'stop' : undefined;
  })
    .then((end) => (end === 'stopped' ? 'response' : end))
    .catch(() => 'error')
    .then((end) => {
      // The answer ends the stream; whatever the server still sends after it is not read.
      if (end === 'response') held.abort();
      return ended(end);
    });
  return stream;
}
