/**
 * followTask against a scripted fake fetch: a server that serves a task's timeline as
 * `tasks/stream` answers (SSE frames, then the result), cuts them wherever a test says (at every
 * frame boundary, mid-frame, in chunks down to one byte), replays what the client already has,
 * and answers `tasks/get` with the task's final state; and the refusals, failures and contract
 * breaks a real server or the network may produce.
 */
import { describe, expect, it } from 'vitest';
import {
  followTask,
  HttpStatusError,
  readTaskEvent,
  ReconnectExhaustedError,
  TaskEventsGoneError,
  TaskFollowCancelledError,
  TaskMethodNotFoundError,
  TaskProtocolError,
  TaskRefusedError,
  type FollowTaskOptions,
  type KnownTaskEvent,
  type TaskStreamEvent,
} from '../../src/client/index.ts';
import { STEADY_CONNECTION_MS } from '../../src/client/backoff.ts';
import { decodeHeaderValue } from '../../src/core/header-value.ts';

const URL_ = 'https://mcp.test/mcp';
const TASK = 'k3Jd9xQ2bT5nW8pL1vR4sA';
const RELATED = 'io.modelcontextprotocol/related-task';
const FAST = { initialDelayMs: 0, maxDelayMs: 0, factor: 1, maxAttempts: 3 };
const encoder = new TextEncoder();

// ---- The task's timeline on the wire ---------------------------------------------------------

interface WireEvent {
  readonly seq: number;
  readonly type: string;
  readonly payload: unknown;
  /** `params.taskId`, when not the task's. */
  readonly taskId?: string;
  /** The related-task metadata's task id; null: no metadata. */
  readonly related?: string | null;
}

const STATUS = 'mcp-edge-sessions.status';

/** `n` events: working, progress (every fifth a log line, one with non-ASCII text), completed. */
function timeline(n = 20): WireEvent[] {
  return Array.from({ length: n }, (_, seq): WireEvent => {
    if (seq === 0) return { seq, type: STATUS, payload: { status: 'working' } };
    if (seq === n - 1) return { seq, type: STATUS, payload: { status: 'completed', result: 'tasks/get' } };
    if (seq % 5 === 0) return { seq, type: 'mcp-edge-sessions.log', payload: { level: 'info', data: `étape ${seq} ✓` } };
    return { seq, type: 'mcp-edge-sessions.progress', payload: { progress: seq, total: n - 2 } };
  });
}

const notification = ({ seq, type, payload, taskId = TASK, related = TASK }: WireEvent) => ({
  jsonrpc: '2.0',
  method: 'notifications/tasks/event',
  params: { seq, taskId, type, payload, ...(related !== null && { _meta: { [RELATED]: { taskId: related } } }) },
});
const frame = (message: unknown) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;
const complete = (id: number) => ({ jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: { note: 'ignored' } } });
const rpcError = (id: number, code: number, message: string, data?: unknown) => ({ jsonrpc: '2.0', id, error: { code, message, data } });
const json = (body: unknown, status = 200) => Response.json(body, { status });

const COMPLETED = {
  taskId: TASK,
  status: 'completed',
  statusMessage: '18/18',
  createdAt: '2026-12-01T19:45:51.441Z',
  lastUpdatedAt: '2026-12-01T19:45:55.441Z',
  ttlMs: 3_600_000,
  pollIntervalMs: 1000,
  result: { content: [{ type: 'text', text: 'liftoff' }] },
};
const taskAnswer = (id: number, task: Record<string, unknown> = COMPLETED) =>
  json({ jsonrpc: '2.0', id, result: { resultType: 'complete', ...task } });

// ---- The scripted server -------------------------------------------------------------------

/** Where a stream's body stops: after `frames` event frames and `bytes` more; it then closes, fails or hangs. */
interface Cut {
  readonly frames: number;
  readonly bytes?: number;
  readonly how?: 'close' | 'error' | 'hang';
}

interface Sent {
  readonly method: string;
  readonly id: number;
  readonly params: any;
  readonly body: any;
  readonly headers: Headers;
  /** Events the client had processed when it sent this. */
  readonly seen: number;
  /** Stream bodies still open when it was sent. */
  readonly openStreams: number;
  readonly signal: AbortSignal | undefined;
}

interface Script {
  readonly events?: readonly WireEvent[];
  /** The cut of each `tasks/stream` answer, in order; none: served whole. */
  readonly cuts?: readonly (Cut | undefined)[];
  /** How many events at or before the cursor a resumed stream sends again. */
  readonly replay?: number;
  /** Bytes per chunk of a stream's body. */
  readonly chunk?: number;
  /** An answer of its own for request `n` (0-based, every method), instead of the timeline's. */
  readonly reply?: (sent: Sent, n: number) => Response | Promise<Response> | undefined;
}

function server(script: Script = {}) {
  const { events = timeline(), cuts = [], replay = 0, chunk = 64 } = script;
  const log: Sent[] = [];
  const seen: TaskStreamEvent[] = [];
  const bodies = { open: 0, cancelled: 0 };
  let streams = 0;

  function body(parts: readonly string[], cut: Cut | undefined): ReadableStream<Uint8Array> {
    const bytes = encoder.encode(parts.join(''));
    // parts[0] is a keepalive comment, then the event frames, then the result.
    const end = cut === undefined ? bytes.length : encoder.encode(parts.slice(0, cut.frames + 1).join('')).length + (cut.bytes ?? 0);
    let at = 0;
    let closed = false;
    const finish = () => {
      if (!closed) bodies.open--;
      closed = true;
    };
    bodies.open++;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at < end) {
          const next = Math.min(end, at + chunk);
          controller.enqueue(bytes.slice(at, next));
          at = next;
          return;
        }
        if (cut?.how === 'hang') return; // nothing more, until the client leaves
        finish();
        if (cut?.how === 'error') controller.error(new Error('connection reset'));
        else controller.close();
      },
      cancel() {
        if (!closed) bodies.cancelled++;
        finish();
      },
    });
  }

  function stream(sent: Sent): Response {
    const after: number | undefined = sent.params.after;
    const from = after === undefined ? 0 : Math.max(0, after + 1 - replay);
    const parts = [
      ': keepalive\n\n',
      ...events.filter((event) => event.seq >= from).map((event) => frame(notification(event))),
      frame(complete(sent.id)),
    ];
    return new Response(body(parts, cuts[streams++]), { headers: { 'Content-Type': 'text/event-stream' } });
  }

  const fetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    expect(String(url)).toBe(URL_);
    expect(init?.method).toBe('POST');
    const parsed = JSON.parse(String(init?.body));
    const sent: Sent = {
      method: parsed.method,
      id: parsed.id,
      params: parsed.params,
      body: parsed,
      headers: new Headers(init?.headers),
      seen: seen.length,
      openStreams: bodies.open,
      signal: init?.signal ?? undefined,
    };
    const n = log.length;
    log.push(sent);
    const own = await script.reply?.(sent, n);
    if (own !== undefined) return own;
    return sent.method === 'tasks/get' ? taskAnswer(sent.id) : stream(sent);
  };
  return { fetch, log, seen, bodies, streams: () => log.filter((sent) => sent.method === 'tasks/stream') };
}

type Server = ReturnType<typeof server>;

/** followTask against `srv`, every event recorded; its value or its error. */
async function follow(srv: Server, options: Partial<FollowTaskOptions> = {}) {
  const outcome = await followTask({
    url: URL_,
    taskId: TASK,
    fetch: srv.fetch,
    reconnect: FAST,
    onEvent: (event) => void srv.seen.push(event),
    ...options,
  }).then(
    (value) => ({ value, error: undefined }),
    (error: unknown) => ({ value: undefined, error }),
  );
  return { ...outcome, seqs: srv.seen.map((event) => event.seq) };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Every resume's `after` is the last seq processed when it was sent; no stream overlapped another. */
function expectCursorsKept(srv: Server, start?: number) {
  for (const sent of srv.log) {
    expect(sent.openStreams).toBe(0);
    if (sent.method !== 'tasks/stream') continue;
    expect(sent.params.after).toBe(sent.seen === 0 ? start : srv.seen[sent.seen - 1]!.seq);
  }
}

// ---- Tests -----------------------------------------------------------------------------------

describe('followTask: the requests', () => {
  it('streams with the routing headers, the caller’s headers and the 2026-07-28 _meta, then reads the task', async () => {
    const srv = server();
    const { value, seqs } = await follow(srv, {
      headers: { Authorization: 'Bearer t0ken', 'Mcp-Method': 'overridden' },
      clientInfo: { name: 'test-client', version: '9.9.9' },
    });
    expect(seqs).toEqual(range(0, 19));
    expect(value).toEqual({ task: COMPLETED, lastSeq: 19 });
    expect(srv.log.map((sent) => sent.method)).toEqual(['tasks/stream', 'tasks/get']);
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
      'io.modelcontextprotocol/clientInfo': { name: 'test-client', version: '9.9.9' },
    };
    const [stream, get] = srv.log;
    expect(stream!.body).toEqual({ jsonrpc: '2.0', id: stream!.id, method: 'tasks/stream', params: { taskId: TASK, _meta: meta } });
    expect(get!.body).toEqual({ jsonrpc: '2.0', id: get!.id, method: 'tasks/get', params: { taskId: TASK, _meta: meta } });
    expect(get!.id).not.toBe(stream!.id);
    for (const [sent, method] of [
      [stream!, 'tasks/stream'],
      [get!, 'tasks/get'],
    ] as const) {
      expect(Object.fromEntries(sent.headers)).toEqual({
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': method,
        'mcp-name': TASK,
        authorization: 'Bearer t0ken',
      });
    }
  });

  it('hands each event on as it came: seq, task, type, payload, metadata', async () => {
    const srv = server();
    await follow(srv);
    expect(srv.seen[0]).toEqual({
      seq: 0,
      taskId: TASK,
      type: STATUS,
      payload: { status: 'working' },
      _meta: { [RELATED]: { taskId: TASK } },
    });
    expect(srv.seen[5]!.payload).toEqual({ level: 'info', data: 'étape 5 ✓' });
  });

  it('starts after the caller’s cursor and drops what the server sends again', async () => {
    const srv = server({ replay: 3 });
    const { value, seqs } = await follow(srv, { after: 7 });
    expect(srv.log[0]!.params.after).toBe(7);
    expect(seqs).toEqual(range(8, 19));
    expect(value?.lastSeq).toBe(19);
  });

  it('sends a task id that is not a plain header value in the base64 form', async () => {
    const taskId = 'tâche 1 ';
    const srv = server({ events: timeline(2).map((event) => ({ ...event, taskId, related: taskId })) });
    const { value } = await follow(srv, {
      taskId,
      fetch: async (url, init) => {
        const response = await srv.fetch(url, init);
        const sent = srv.log.at(-1)!;
        return sent.method === 'tasks/get' ? taskAnswer(sent.id, { ...COMPLETED, taskId }) : response;
      },
    });
    const header = srv.log[0]!.headers.get('Mcp-Name')!;
    expect(header).toMatch(/^=\?base64\?.*\?=$/);
    expect(decodeHeaderValue(header)).toBe(taskId);
    expect(value?.task.taskId).toBe(taskId);
  });

  it.each<[string, Partial<FollowTaskOptions>, ErrorConstructor]>([
    ['a negative cursor', { after: -1 }, RangeError],
    ['a fractional cursor', { after: 1.5 }, RangeError],
    ['an empty task id', { taskId: '' }, TypeError],
  ])('refuses %s without a request', async (_name, options, type) => {
    const srv = server();
    const { error } = await follow(srv, options);
    expect(error).toBeInstanceOf(type);
    expect(srv.log).toEqual([]);
  });
});

describe('followTask: cuts', () => {
  const boundaries = range(0, 21).flatMap((frames) => [{ frames, bytes: 0 }, ...(frames < 21 ? [{ frames, bytes: 25 }] : [])]);

  it.each(boundaries.flatMap((cut) => (['close', 'error'] as const).map((how) => ({ ...cut, how }))))(
    'a stream cut after $frames frames + $bytes bytes ($how) resumes after the last processed seq, each event once',
    async (cut) => {
      const srv = server({ cuts: [cut], chunk: 7 });
      const { value, seqs } = await follow(srv);
      expect(seqs).toEqual(range(0, 19));
      expect(value?.task).toEqual(COMPLETED);
      // Cut after all 20 events and the result (frames 21): nothing was missing, no resume.
      const streams = srv.streams();
      expect(streams).toHaveLength(cut.frames === 21 ? 1 : 2);
      expect(streams[1]?.params.after).toBe(cut.frames === 0 || cut.frames === 21 ? undefined : cut.frames - 1);
      expectCursorsKept(srv);
    },
  );

  it.each([1, 3, 7, 64, 100_000])(
    'every stream cut mid-frame, in %i-byte chunks, with replays: each event once, in order',
    async (chunk) => {
      // Each resume replays 2 events (dropped), then gives one whole event and half of the next.
      const cuts = Array.from({ length: 19 }, (_, i): Cut => ({ frames: i === 0 ? 1 : 3, bytes: 40, how: i % 2 ? 'error' : 'close' }));
      const srv = server({ cuts, chunk, replay: 2 });
      // One attempt per break: only the progress each resume makes keeps the follow going.
      const { value, seqs, error } = await follow(srv, { reconnect: { ...FAST, maxAttempts: 1 } });
      expect(error).toBeUndefined();
      expect(seqs).toEqual(range(0, 19));
      expect(value).toEqual({ task: COMPLETED, lastSeq: 19 });
      expect(srv.streams()).toHaveLength(20);
      expectCursorsKept(srv);
    },
  );

  it.each([
    { frames: 0, bytes: 0 },
    { frames: 5, bytes: 25 },
  ])('a stream gone silent after $frames frames + $bytes bytes, with no close or reset, is resumed after idleTimeoutMs', async (cut) => {
    const srv = server({ cuts: [{ ...cut, how: 'hang' }] });
    const { value, seqs } = await follow(srv, { idleTimeoutMs: 50 });
    expect(seqs).toEqual(range(0, 19));
    expect(value).toEqual({ task: COMPLETED, lastSeq: 19 });
    expect(srv.streams().map((sent) => sent.params.after)).toEqual([undefined, cut.frames === 0 ? undefined : cut.frames - 1]);
    // Closed by the client: the dead stream (before the resume: expectCursorsKept), and the last, left at its result.
    expect(srv.bodies.cancelled).toBe(2);
    expectCursorsKept(srv);
  });

  it.each(['tasks/stream', 'tasks/get'])(
    'a %s that goes down a dead connection (no answer at all) is abandoned after idleTimeoutMs and sent again',
    async (method) => {
      let unanswered = 0;
      const srv = server({
        reply: (sent) => {
          if (sent.method !== method || unanswered++ > 0) return undefined;
          return new Promise<Response>((_, reject) =>
            sent.signal?.addEventListener('abort', () => reject(sent.signal!.reason), { once: true }),
          );
        },
      });
      const { value, seqs } = await follow(srv, { idleTimeoutMs: 50 });
      expect(seqs).toEqual(range(0, 19));
      expect(value?.task).toEqual(COMPLETED);
      expect(srv.log.filter((sent) => sent.method === method)).toHaveLength(2);
    },
  );

  it('a tasks/get answer whose body goes silent half-way is taken as dead after idleTimeoutMs and asked again', async () => {
    const srv = server({
      reply: (sent, n) => {
        if (sent.method !== 'tasks/get' || n !== 1) return undefined;
        const half = encoder.encode('{"jsonrpc":"2.0","id":');
        let sentHalf = false;
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sentHalf) return new Promise<void>(() => undefined); // nothing more, never an end
            sentHalf = true;
            controller.enqueue(half);
          },
        });
        return new Response(body, { headers: { 'Content-Type': 'application/json' } });
      },
    });
    const { value } = await follow(srv, { idleTimeoutMs: 50 });
    expect(value?.task).toEqual(COMPLETED);
    expect(srv.log.map((sent) => sent.method)).toEqual(['tasks/stream', 'tasks/get', 'tasks/get']);
  });

  it('resumes a cut tasks/get answer', async () => {
    const srv = server({
      reply: (sent, n) =>
        sent.method === 'tasks/get' && n === 1
          ? new Response('{"jsonrpc":"2.0","id":', { headers: { 'Content-Type': 'application/json' } })
          : undefined,
    });
    const { value } = await follow(srv);
    expect(value?.task).toEqual(COMPLETED);
    expect(srv.log.map((sent) => sent.method)).toEqual(['tasks/stream', 'tasks/get', 'tasks/get']);
  });
});

describe('followTask: transient failures', () => {
  it.each<[string, (sent: Sent) => Response | Promise<Response>]>([
    ['503', () => new Response('busy', { status: 503 })],
    ['429', () => new Response('slow down', { status: 429 })],
    ['a 502 with a JSON-RPC body', (sent) => json(rpcError(sent.id, -32603, 'upstream'), 502)],
    // What the server answers when the task object throws (reset by a deploy): the SDK's in-band -32603.
    ['a -32603 on a 200', (sent) => json(rpcError(sent.id, -32603, 'Internal error'))],
    ['a network error', () => Promise.reject(new TypeError('fetch failed'))],
    [
      'too_many_task_streams',
      (sent) => json(rpcError(sent.id, -32000, 'Too many streams', { reason: 'too_many_task_streams', limit: 32 })),
    ],
  ])('retries the stream after %s', async (_name, failure) => {
    const srv = server({ reply: (sent, n) => (n < 2 ? failure(sent) : undefined) });
    const { value, seqs } = await follow(srv);
    expect(seqs).toEqual(range(0, 19));
    expect(value?.task).toEqual(COMPLETED);
    expect(srv.log.map((sent) => sent.method)).toEqual(['tasks/stream', 'tasks/stream', 'tasks/stream', 'tasks/get']);
  });

  it.each<[string, (sent: Sent) => Response]>([
    ['a 503', () => new Response('', { status: 503 })],
    ['a -32603 on a 200', (sent) => json(rpcError(sent.id, -32603, 'Internal error'))],
  ])('retries tasks/get after %s', async (_name, failure) => {
    const srv = server({ reply: (sent, n) => (sent.method === 'tasks/get' && n === 1 ? failure(sent) : undefined) });
    const { value } = await follow(srv);
    expect(value?.task).toEqual(COMPLETED);
    expect(srv.log.map((sent) => sent.method)).toEqual(['tasks/stream', 'tasks/get', 'tasks/get']);
  });

  it('gives up with ReconnectExhaustedError after maxAttempts failures without progress, with the cursor', async () => {
    const srv = server({ cuts: [{ frames: 4 }], reply: (_sent, n) => (n > 0 ? new Response('', { status: 503 }) : undefined) });
    const { error, seqs } = await follow(srv);
    expect(error).toBeInstanceOf(ReconnectExhaustedError);
    expect(error).toMatchObject({ attempts: 3, cursor: '3' });
    expect(seqs).toEqual(range(0, 3));
    // The cut stream (it made progress: the count starts there), then one reconnect per allowed attempt.
    expect(srv.log).toHaveLength(1 + FAST.maxAttempts);
  });

  it('a stream the server kept open a while and then ended, with nothing new, is not a failed attempt', async () => {
    // Two streams held open past STEADY_CONNECTION_MS with only a keepalive (a maximum connection
    // age, SEP-1699 polling), then the timeline; one attempt allowed without progress.
    const idle = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(encoder.encode(': keepalive\n\n'));
            setTimeout(() => controller.close(), STEADY_CONNECTION_MS + 100);
          },
        }),
        { headers: { 'Content-Type': 'text/event-stream' } },
      );
    const srv = server({ reply: (sent, n) => (sent.method === 'tasks/stream' && n < 2 ? idle() : undefined) });
    const { value, seqs, error } = await follow(srv, { reconnect: { ...FAST, maxAttempts: 1 } });
    expect(error).toBeUndefined();
    expect(seqs).toEqual(range(0, 19));
    expect(value?.task).toEqual(COMPLETED);
    expect(srv.log.map((sent) => sent.method)).toEqual(['tasks/stream', 'tasks/stream', 'tasks/stream', 'tasks/get']);
  });

  it('waits what a 429’s Retry-After asks, when that is longer than its backoff', async () => {
    const times: number[] = [];
    const srv = server({
      reply: (_sent, n) => {
        times.push(Date.now());
        return n === 0 ? new Response('slow down', { status: 429, headers: { 'Retry-After': '1' } }) : undefined;
      },
    });
    const { value } = await follow(srv, { reconnect: { initialDelayMs: 10, maxDelayMs: 5_000, factor: 1, maxAttempts: 3 } });
    expect(value?.task).toEqual(COMPLETED);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(950);
  });

  it('waits the backoff between attempts', async () => {
    const times: number[] = [];
    const srv = server({
      reply: (_sent, n) => {
        times.push(Date.now());
        return n < 2 ? new Response('', { status: 503 }) : undefined;
      },
    });
    await follow(srv, { reconnect: { initialDelayMs: 40, maxDelayMs: 1000, factor: 2, maxAttempts: 3 } });
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(35);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(75);
  });
});

describe('followTask: refusals', () => {
  const gone = (id: number) =>
    rpcError(id, -32010, 'Task events are no longer available', { reason: 'events_gone', taskId: TASK, earliestSeq: 10 });

  it.each<{ name: string; reply: (sent: Sent) => Response; error: object; type: new (...args: never[]) => Error }>([
    {
      name: 'events_gone in a JSON answer',
      reply: (sent) => json(gone(sent.id)),
      type: TaskEventsGoneError,
      error: { taskId: TASK, earliestSeq: 10, after: undefined },
    },
    { name: 'events_gone with 410', reply: (sent) => json(gone(sent.id), 410), type: TaskEventsGoneError, error: { earliestSeq: 10 } },
    {
      name: 'events_gone under another code: the reason decides',
      reply: (sent) => json(rpcError(sent.id, -31999, 'gone', { reason: 'events_gone', earliestSeq: 4 })),
      type: TaskEventsGoneError,
      error: { earliestSeq: 4 },
    },
    {
      name: 'events_gone as the stream’s last frame',
      reply: (sent) => new Response(`: keepalive\n\n${frame(gone(sent.id))}`, { headers: { 'Content-Type': 'text/event-stream' } }),
      type: TaskEventsGoneError,
      error: { earliestSeq: 10 },
    },
    {
      name: '-32602 (an unknown task)',
      reply: (sent) => json(rpcError(sent.id, -32602, 'Invalid params: unknown task')),
      type: TaskRefusedError,
      error: { method: 'tasks/stream', taskId: TASK, status: 200, code: -32602, detail: 'Invalid params: unknown task' },
    },
    {
      name: '-32602 with 400',
      reply: (sent) => json(rpcError(sent.id, -32602, 'Invalid params'), 400),
      type: TaskRefusedError,
      error: { status: 400, code: -32602 },
    },
    {
      name: '-32601 (no task streams)',
      reply: (sent) => json(rpcError(sent.id, -32601, 'Method not found')),
      type: TaskMethodNotFoundError,
      error: { method: 'tasks/stream', taskId: TASK },
    },
    {
      name: 'a 401 without a JSON-RPC body',
      reply: () => new Response('no', { status: 401 }),
      type: HttpStatusError,
      error: { status: 401 },
    },
    {
      name: 'an HTML page',
      reply: () => new Response('<html>', { headers: { 'Content-Type': 'text/html' } }),
      type: HttpStatusError,
      error: { status: 200 },
    },
  ])('$name: rejects at once, typed', async ({ reply, type, error: fields }) => {
    const srv = server({ reply: (sent) => (sent.method === 'tasks/stream' ? reply(sent) : undefined) });
    const { error, seqs } = await follow(srv);
    expect(error).toBeInstanceOf(type);
    expect(error).toMatchObject(fields);
    expect(seqs).toEqual([]);
    expect(srv.log).toHaveLength(1);
  });

  it('events_gone on a resume carries the cursor it refused, after what was delivered', async () => {
    const srv = server({ cuts: [{ frames: 3 }], reply: (sent, n) => (n === 1 ? json(gone(sent.id)) : undefined) });
    const { error, seqs } = await follow(srv);
    expect(seqs).toEqual([0, 1, 2]);
    expect(error).toBeInstanceOf(TaskEventsGoneError);
    expect(error).toMatchObject({ taskId: TASK, earliestSeq: 10, after: 2 });
    expect(srv.log).toHaveLength(2);
  });

  it('a refused tasks/get is typed with its method', async () => {
    const srv = server({ reply: (sent) => (sent.method === 'tasks/get' ? json(rpcError(sent.id, -32602, 'unknown task')) : undefined) });
    const { error, seqs } = await follow(srv);
    expect(seqs).toEqual(range(0, 19));
    expect(error).toBeInstanceOf(TaskRefusedError);
    expect(error).toMatchObject({ method: 'tasks/get', code: -32602 });
  });
});

describe('followTask: contract breaks', () => {
  const events = timeline();
  it.each<{ name: string; events: WireEvent[]; reason: string; seqs: number[] }>([
    { name: 'a skipped seq', events: events.filter((event) => event.seq !== 2), reason: 'gap', seqs: [0, 1] },
    {
      name: 'an event of another task',
      events: events.map((e) => (e.seq === 3 ? { ...e, taskId: 'other' } : e)),
      reason: 'wrong_task',
      seqs: [0, 1, 2],
    },
    {
      name: 'related-task naming another task',
      events: events.map((e) => (e.seq === 3 ? { ...e, related: 'other' } : e)),
      reason: 'wrong_task',
      seqs: [0, 1, 2],
    },
    {
      name: 'no related-task metadata',
      events: events.map((e) => (e.seq === 3 ? { ...e, related: null } : e)),
      reason: 'malformed_event',
      seqs: [0, 1, 2],
    },
    {
      name: 'a payload that is not an object',
      events: events.map((e) => (e.seq === 1 ? { ...e, payload: [1] } : e)),
      reason: 'malformed_event',
      seqs: [0],
    },
    {
      name: 'a seq that is not an integer',
      events: events.map((e) => (e.seq === 1 ? { ...e, seq: 1.5 } : e)),
      reason: 'malformed_event',
      seqs: [0],
    },
  ])('$name: TaskProtocolError, nothing delivered past it, no further request', async ({ events: served, reason, seqs: delivered }) => {
    const srv = server({ events: served });
    const { error, seqs } = await follow(srv);
    expect(error).toBeInstanceOf(TaskProtocolError);
    expect(error).toMatchObject({ taskId: TASK, reason, lastSeq: delivered.at(-1) });
    expect(seqs).toEqual(delivered);
    expect(srv.log).toHaveLength(1);
    expect(srv.bodies.open).toBe(0);
  });

  it.each<[string, (id: number) => string]>([
    ['a frame that is not JSON', () => 'event: message\ndata: {not json\n\n'],
    ['a response to another request', (id) => frame(complete(id + 100))],
  ])('%s: TaskProtocolError', async (_name, bad) => {
    const srv = server({
      reply: (sent) =>
        sent.method === 'tasks/stream' ? new Response(bad(sent.id), { headers: { 'Content-Type': 'text/event-stream' } }) : undefined,
    });
    const { error } = await follow(srv);
    expect(error).toBeInstanceOf(TaskProtocolError);
  });

  it('a tasks/get answer for another task: TaskProtocolError', async () => {
    const srv = server({
      reply: (sent) => (sent.method === 'tasks/get' ? taskAnswer(sent.id, { ...COMPLETED, taskId: 'other' }) : undefined),
    });
    const { error } = await follow(srv);
    expect(error).toMatchObject({ name: 'TaskProtocolError', reason: 'wrong_task' });
  });

  it('ignores other notifications and server comments on the stream', async () => {
    const srv = server({
      reply: (sent) =>
        sent.method === 'tasks/stream'
          ? new Response(
              `: keepalive\n\nevent: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } })}\n\n` +
                `${timeline(2)
                  .map((event) => frame(notification(event)))
                  .join('')}: keepalive\r\n\r\n${frame(complete(sent.id))}`,
              { headers: { 'Content-Type': 'text/event-stream' } },
            )
          : undefined,
    });
    const { value, seqs } = await follow(srv);
    expect(seqs).toEqual([0, 1]);
    expect(value?.lastSeq).toBe(1);
  });
});

describe('followTask: the end', () => {
  it.each([
    { status: 'failed', error: { code: -32603, message: 'the tool threw' } },
    { status: 'cancelled', statusMessage: 'cancelled by the client' },
  ])('resolves with a $status task as tasks/get tells it', async (final) => {
    const task = { ...COMPLETED, result: undefined, ...final };
    const events = timeline().map((e) => (e.seq === 19 ? { ...e, payload: { status: final.status } } : e));
    const srv = server({ events, reply: (sent) => (sent.method === 'tasks/get' ? taskAnswer(sent.id, task) : undefined) });
    const { value } = await follow(srv);
    expect(value?.task).toEqual(JSON.parse(JSON.stringify(task)));
  });

  it('streams again when the server closed the stream while the task runs', async () => {
    const working = { ...COMPLETED, status: 'working', result: undefined };
    const all = timeline();
    let gets = 0;
    const srv = server({
      reply: (sent) => {
        if (sent.method === 'tasks/get') return taskAnswer(sent.id, ++gets === 1 ? working : COMPLETED);
        // The first stream closes normally after 5 events, before the task's end.
        if (sent.params.after === undefined) {
          const text =
            all
              .slice(0, 5)
              .map((event) => frame(notification(event)))
              .join('') + frame(complete(sent.id));
          return new Response(text, { headers: { 'Content-Type': 'text/event-stream' } });
        }
        return undefined;
      },
    });
    const { value, seqs } = await follow(srv);
    expect(seqs).toEqual(range(0, 19));
    expect(value?.task).toEqual(COMPLETED);
    expect(srv.log.map((sent) => [sent.method, sent.params.after])).toEqual([
      ['tasks/stream', undefined],
      ['tasks/get', undefined],
      ['tasks/stream', 4],
      ['tasks/get', undefined],
    ]);
  });

  it('confirms with one more stream when no terminal status event was seen (another server’s types)', async () => {
    const foreign = timeline().map((e) => ({ ...e, type: 'com.example.step' }));
    let streams = 0;
    const srv = server({
      events: foreign,
      reply: (sent) => {
        if (sent.method !== 'tasks/stream' || streams++ > 0) return undefined;
        const text =
          foreign
            .slice(0, 12)
            .map((event) => frame(notification(event)))
            .join('') + frame(complete(sent.id));
        return new Response(text, { headers: { 'Content-Type': 'text/event-stream' } });
      },
    });
    const { value, seqs } = await follow(srv);
    expect(seqs).toEqual(range(0, 19));
    expect(value?.lastSeq).toBe(19);
    expect(srv.log.map((sent) => [sent.method, sent.params.after])).toEqual([
      ['tasks/stream', undefined],
      ['tasks/get', undefined],
      ['tasks/stream', 11],
      ['tasks/get', undefined],
    ]);
  });

  it('an ended task with nothing after the cursor: the JSON result at once, then tasks/get', async () => {
    const srv = server({ reply: (sent) => (sent.method === 'tasks/stream' ? json(complete(sent.id)) : undefined) });
    const { value, seqs } = await follow(srv, { after: 19 });
    expect(seqs).toEqual([]);
    expect(value).toEqual({ task: COMPLETED, lastSeq: 19 });
  });
});

describe('followTask: stopping', () => {
  it('an abort during onEvent closes the stream and rejects with the last processed seq, with no further request', async () => {
    const srv = server({ cuts: [{ frames: 20, how: 'hang' }] });
    const controller = new AbortController();
    const { error, seqs } = await follow(srv, {
      signal: controller.signal,
      onEvent: (event) => {
        srv.seen.push(event);
        if (event.seq === 5) controller.abort(new Error('user left'));
      },
    });
    expect(error).toBeInstanceOf(TaskFollowCancelledError);
    expect(error).toMatchObject({ taskId: TASK, lastSeq: 5, cause: new Error('user left') });
    expect(seqs).toEqual(range(0, 5));
    expect(srv.log).toHaveLength(1);
    expect(srv.bodies).toEqual({ open: 0, cancelled: 1 });
  });

  it('an abort while the stream waits closes it', async () => {
    const srv = server({ cuts: [{ frames: 3, how: 'hang' }] });
    const controller = new AbortController();
    const following = follow(srv, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    const { error, seqs } = await following;
    expect(error).toMatchObject({ name: 'TaskFollowCancelledError', lastSeq: 2 });
    expect(seqs).toEqual([0, 1, 2]);
    expect(srv.bodies).toEqual({ open: 0, cancelled: 1 });
    expect(srv.log).toHaveLength(1);
  });

  it('an abort during the backoff sends nothing more', async () => {
    const controller = new AbortController();
    const srv = server({ reply: () => new Response('', { status: 503 }) });
    const following = follow(srv, { signal: controller.signal, reconnect: { ...FAST, initialDelayMs: 10_000, maxDelayMs: 10_000 } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    const { error } = await following;
    expect(error).toBeInstanceOf(TaskFollowCancelledError);
    expect(srv.log).toHaveLength(1);
  });

  it('an aborted signal: no request at all', async () => {
    const srv = server();
    const { error } = await follow(srv, { signal: AbortSignal.abort() });
    expect(error).toBeInstanceOf(TaskFollowCancelledError);
    expect(srv.log).toEqual([]);
  });

  it('a throwing onEvent ends the follow with its error; the event does not count as processed', async () => {
    const srv = server();
    const failure = new Error('disk full');
    const { error } = await follow(srv, {
      onEvent: (event) => {
        if (event.seq === 4) throw failure;
        srv.seen.push(event);
      },
    });
    expect(error).toBe(failure);
    expect(srv.seen.map((event) => event.seq)).toEqual(range(0, 3));
    expect(srv.log).toHaveLength(1);
    expect(srv.bodies.open).toBe(0);
  });

  it('waits for an async onEvent before the next event', async () => {
    const srv = server();
    const order: string[] = [];
    await follow(srv, {
      onEvent: async (event) => {
        order.push(`start ${event.seq}`);
        await new Promise((resolve) => setTimeout(resolve, 1));
        order.push(`end ${event.seq}`);
      },
    });
    expect(order).toEqual(range(0, 19).flatMap((seq) => [`start ${seq}`, `end ${seq}`]));
  });
});

describe('readTaskEvent', () => {
  const event = (type: string, payload: Record<string, unknown>): TaskStreamEvent => ({ seq: 0, taskId: TASK, type, payload });

  it.each<[string, TaskStreamEvent, KnownTaskEvent | undefined]>([
    ['a status', event(STATUS, { status: 'working', statusMessage: '1/3' }), { kind: 'status', status: 'working', statusMessage: '1/3' }],
    [
      'input_required with its questions',
      event(STATUS, { status: 'input_required', inputRequests: { ok: { method: 'elicitation/create' } } }),
      { kind: 'status', status: 'input_required', inputRequests: { ok: { method: 'elicitation/create' } } },
    ],
    [
      'failed with why',
      event(STATUS, { status: 'failed', error: { code: -32603, message: 'boom' } }),
      { kind: 'status', status: 'failed', error: { code: -32603, message: 'boom' } },
    ],
    ['an unknown status', event(STATUS, { status: 'paused' }), undefined],
    [
      'a malformed statusMessage is left out',
      event(STATUS, { status: 'working', statusMessage: 7 }),
      { kind: 'status', status: 'working' },
    ],
    [
      'progress',
      event('mcp-edge-sessions.progress', { progress: 2, total: 5, message: 'two' }),
      { kind: 'progress', progress: 2, total: 5, message: 'two' },
    ],
    ['progress that is not a number', event('mcp-edge-sessions.progress', { progress: '2' }), undefined],
    [
      'a log line',
      event('mcp-edge-sessions.log', { level: 'info', logger: 'tool', data: { a: 1 } }),
      { kind: 'log', level: 'info', logger: 'tool', data: { a: 1 } },
    ],
    ['a log line without data', event('mcp-edge-sessions.log', { level: 'info' }), undefined],
    [
      'an omitted event',
      event('mcp-edge-sessions.omitted', { type: 'com.example.big', reason: 'too_large', bytes: 9, maxBytes: 8 }),
      { kind: 'omitted', type: 'com.example.big', reason: 'too_large' },
    ],
    ['a tool’s own type', event('com.example.partial', { text: 'hi' }), undefined],
  ])('%s', (_name, input, expected) => {
    expect(readTaskEvent(input)).toEqual(expected);
  });
});
