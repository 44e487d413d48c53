/**
 * followEvents against a scripted fake server: a fetch function that answers `server/discover`
 * (by default with the Events extension advertised) and then each request in turn with the
 * test's reply (a poll result, an SSE push stream closed or held open, a refusal, a failure) and,
 * once the script runs out, stops the follow (the follower's `signal`) and fails
 * the request as an aborted fetch does. Each test names a client rule of SEP-3415
 * (docs/events.md, rows "planned (client)") or of the follower's contract (at-least-once, cursor
 * after the occurrences, dedup by eventId). Time is vitest's fake clock: no test waits.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  EventsCursorRefusedError,
  EventsProtocolError,
  EventsRequestError,
  EventsTerminatedError,
  EventsUnsupportedError,
  followEvents,
  HttpStatusError,
  ReconnectExhaustedError,
  type EventOccurrence,
  type FetchLike,
  type FollowEventsOptions,
} from '../../src/client/index.ts';
import { EVENTS_EXTENSION_ID, EventsErrorCode, SUBSCRIPTION_ID_META_KEY } from '../../src/core/events-wire.ts';

const URL_ = 'https://mcp.test/mcp';
const NAME = 'demo.note';
const FAST = { initialDelayMs: 0, maxDelayMs: 0, factor: 1, maxAttempts: 3 };
const encoder = new TextEncoder();

// ---- The wire --------------------------------------------------------------------------------

const occurrence = (n: number, cursor?: string | null): EventOccurrence => ({
  eventId: `e${n}`,
  name: NAME,
  timestamp: '2026-12-01T19:45:51.441Z',
  data: { text: `note ${n}`, n },
  ...(cursor !== undefined && { cursor }),
});

const meta = (id: number) => ({ _meta: { [SUBSCRIPTION_ID_META_KEY]: id } });
const notify = (method: string, params: object) => (id: number) => ({
  jsonrpc: '2.0',
  method: `notifications/events/${method}`,
  params: { ...params, ...meta(id) },
});
const active = (cursor: string | null, truncated = false) => notify('active', { cursor, truncated });
const event = (n: number, cursor?: string | null) => notify('event', occurrence(n, cursor));
const heartbeat = (cursor: string | null) => notify('heartbeat', { cursor });
const transientError = notify('error', { error: { code: -32603, message: 'UpstreamError', data: { reason: 'upstream 503' } } });
const terminated = notify('terminated', { error: { code: EventsErrorCode.Forbidden, message: 'Forbidden: revoked', data: {} } });
const streamResult = (id: number) => ({ jsonrpc: '2.0', id, result: { resultType: 'complete', ...meta(id) } });
const rpcError = (id: number, code: number, message: string, data?: unknown) => ({ jsonrpc: '2.0', id, error: { code, message, data } });

type Message = (id: number) => unknown;
const frame = (message: unknown) => `data: ${JSON.stringify(message)}\n\n`;
const SSE = { 'Content-Type': 'text/event-stream' };

interface PollAnswer {
  readonly events?: readonly EventOccurrence[];
  readonly cursor?: string | null;
  readonly truncated?: boolean;
  readonly hasMore?: boolean;
  readonly nextPollMs?: number;
}

// ---- The scripted server -------------------------------------------------------------------

interface Sent {
  readonly method: string;
  readonly id: number;
  readonly params: any;
  readonly headers: Headers;
}

type Reply = (sent: Sent) => Response | Promise<Response>;

/** A poll result. */
const polled =
  ({ events = [], cursor = null, truncated = false, hasMore = false, nextPollMs = 0 }: PollAnswer): Reply =>
  ({ id }) =>
    Response.json({ jsonrpc: '2.0', id, result: { resultType: 'complete', events, cursor, truncated, hasMore, nextPollMs } });

/** A push stream that sends `messages` and closes. */
const streamed =
  (...messages: Message[]): Reply =>
  ({ id }) =>
    new Response(messages.map((message) => frame(message(id))).join(''), { headers: SSE });

const answered =
  (body: (id: number) => unknown, status = 200): Reply =>
  ({ id }) =>
    Response.json(body(id), { status });

/** A push stream held open: the test sends on it; `cancelled` once the client closed it. */
function live() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let id = 0;
  const state = { cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
    cancel: () => {
      state.cancelled = true;
    },
  });
  return {
    reply: ((sent: Sent) => {
      id = sent.id;
      return new Response(body, { headers: SSE });
    }) as Reply,
    send: (...messages: Message[]) => controller.enqueue(encoder.encode(messages.map((m) => frame(m(id))).join(''))),
    comment: () => controller.enqueue(encoder.encode(': keepalive\n\n')),
    state,
  };
}

/** A `server/discover` result whose capabilities carry `extensions`. */
const discovered =
  (extensions: Record<string, unknown>): Reply =>
  ({ id }) =>
    Response.json({ jsonrpc: '2.0', id, result: { supportedVersions: ['2026-07-28'], capabilities: { tools: {}, extensions } } });

/** A server that advertises the Events extension, as the SEP has it: an empty settings object. */
const advertised = discovered({ [EVENTS_EXTENSION_ID]: {} });

/**
 * The scripted server: `server/discover` is answered from `discovery` (by default, once, with the
 * extension advertised), every other request from `replies`, in turn. `sent` holds the others,
 * `discovers` the `server/discover` requests, `methods` every method in the order sent.
 */
function server(replies: readonly Reply[], discovery: readonly Reply[] = [advertised]) {
  const sent: Sent[] = [];
  const discovers: Sent[] = [];
  const methods: string[] = [];
  const stopper = new AbortController();
  const fetch: FetchLike = async (_url, init) => {
    const body = JSON.parse(init?.body as string);
    const request: Sent = { method: body.method, id: body.id, params: body.params, headers: new Headers(init?.headers) };
    methods.push(request.method);
    const asked = request.method === 'server/discover' ? discovers : sent;
    asked.push(request);
    const reply = (request.method === 'server/discover' ? discovery : replies)[asked.length - 1];
    if (reply === undefined) {
      // The script is done: the test's stop, and the request fails as an aborted fetch does.
      stopper.abort();
      throw new DOMException('The operation was aborted.', 'AbortError');
    }
    return reply(request);
  };
  return { sent, discovers, methods, fetch, signal: stopper.signal, cursors: () => sent.map((request) => request.params.cursor) };
}

/** Every callback, in order, as one line each. */
function recorder(sent?: readonly Sent[]) {
  const calls: string[] = [];
  return {
    calls,
    onEvent: (o: EventOccurrence) => void calls.push(`event ${o.eventId}${sent === undefined ? '' : ` @${sent.length}`}`),
    saveCursor: (cursor: string) => void calls.push(`save ${cursor}`),
    onTruncated: ({ from, cursor }: { from: string | null; cursor: string | null }) => void calls.push(`truncated ${from} -> ${cursor}`),
    onError: (error: { code: number | undefined }) => void calls.push(`error ${error.code}`),
  };
}

function follow(
  replies: readonly Reply[],
  options: Partial<FollowEventsOptions> & Pick<FollowEventsOptions, 'mode'>,
  discovery?: readonly Reply[],
) {
  const fake = server(replies, discovery);
  const record = recorder();
  const handle = followEvents({
    url: URL_,
    name: NAME,
    fetch: fake.fetch,
    signal: fake.signal,
    reconnect: FAST,
    pollFloorMs: 0,
    ...record,
    ...options,
  });
  return { ...fake, ...record, handle };
}

/** Lets the follower act on what it was given, without moving the fake clock. */
const settle = () => vi.advanceTimersByTimeAsync(0);

afterEach(() => {
  vi.useRealTimers();
});

// ---- Poll --------------------------------------------------------------------------------------

describe('followEvents by poll', () => {
  it('from null: a null cursor is never persisted, and the next poll starts from now again', async () => {
    const { handle, calls, cursors } = follow(
      [
        polled({ events: [occurrence(1)], cursor: null }),
        polled({ events: [occurrence(2)], cursor: 'c1' }),
        // "A client that receives cursor: null MUST NOT attempt to persist or replay from it."
        polled({ events: [], cursor: null }),
      ],
      { mode: 'poll' },
    );
    await expect(handle.done).resolves.toEqual({ cursor: 'c1' });
    expect(calls).toEqual(['event e1', 'event e2', 'save c1']);
    expect(cursors()).toEqual([null, null, 'c1', null]);
  });

  it('persists the cursor only after every occurrence of its answer was handed over', async () => {
    const { handle, calls, cursors } = follow([polled({ events: [occurrence(1), occurrence(2)], cursor: 'c2' })], {
      mode: 'poll',
      cursor: 'c0',
    });
    await handle.done;
    expect(calls).toEqual(['event e1', 'event e2', 'save c2']);
    expect(cursors()).toEqual(['c0', 'c2']);
  });

  it('hasMore: polls again at once with the new cursor, ignoring nextPollMs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { handle, sent, cursors } = follow(
      [
        polled({ events: [occurrence(1)], cursor: 'c1', hasMore: true, nextPollMs: 60_000 }),
        polled({ events: [occurrence(2)], cursor: 'c2', nextPollMs: 5_000 }),
      ],
      { mode: 'poll', pollFloorMs: 1_000 },
    );
    await settle();
    expect(cursors()).toEqual([null, 'c1']);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(sent).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent).toHaveLength(3);
    await handle.done;
  });

  // "Clients SHOULD apply a configurable floor (default 1000 ms)": the wait is max(nextPollMs, floor).
  it.each([
    { nextPollMs: 10, floor: undefined, wait: 1_000 },
    { nextPollMs: 0, floor: undefined, wait: 1_000 },
    { nextPollMs: 5_000, floor: undefined, wait: 5_000 },
    { nextPollMs: 10, floor: 250, wait: 250 },
  ])('waits $wait ms after nextPollMs $nextPollMs with floor $floor', async ({ nextPollMs, floor, wait }) => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { handle, sent } = follow([polled({ cursor: 'c1', nextPollMs })], { mode: 'poll', pollFloorMs: floor });
    await settle();
    await vi.advanceTimersByTimeAsync(wait - 1);
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent).toHaveLength(2);
    await handle.done;
  });

  it('truncated: tells the application, hands the answer over, then persists the fresh cursor', async () => {
    const { handle, calls, cursors } = follow([polled({ events: [occurrence(5)], cursor: 'fresh', truncated: true })], {
      mode: 'poll',
      cursor: 'old',
    });
    await handle.done;
    expect(calls).toEqual(['truncated old -> fresh', 'event e5', 'save fresh']);
    expect(cursors()).toEqual(['old', 'fresh']);
  });

  it('drops an occurrence delivered again by eventId', async () => {
    const { handle, calls } = follow(
      [polled({ events: [occurrence(1), occurrence(2)], cursor: 'c2' }), polled({ events: [occurrence(2), occurrence(3)], cursor: 'c3' })],
      { mode: 'poll' },
    );
    await handle.done;
    expect(calls).toEqual(['event e1', 'event e2', 'save c2', 'event e3', 'save c3']);
  });

  it('remembers only the last dedupWindow eventIds', async () => {
    const { handle, calls } = follow(
      [polled({ events: [occurrence(1), occurrence(2)], cursor: 'c2' }), polled({ events: [occurrence(1)], cursor: 'c3' })],
      { mode: 'poll', dedupWindow: 1 },
    );
    await handle.done;
    expect(calls).toEqual(['event e1', 'event e2', 'save c2', 'event e1', 'save c3']);
  });
});

// ---- Push --------------------------------------------------------------------------------------

describe('followEvents by push', () => {
  it('active, then each event in order, the cursor after each persisted once', async () => {
    const { handle, calls, cursors } = follow([streamed(active('a0'), event(1, 'c1'), event(2, 'c2'), active('c2'))], { mode: 'push' });
    await handle.done;
    expect(calls).toEqual(['save a0', 'event e1', 'save c1', 'event e2', 'save c2']);
    expect(cursors()).toEqual([null, 'c2']);
  });

  it('persists the heartbeat cursor when it differs from the last one persisted', async () => {
    const { handle, calls } = follow([streamed(active('a0'), heartbeat('a0'), heartbeat('h1'), heartbeat('h1'), heartbeat('h2'))], {
      mode: 'push',
      cursor: 'a0',
    });
    await handle.done;
    expect(calls).toEqual(['save h1', 'save h2']);
  });

  it('a null cursor (no replay) is not persisted, and the stream reopens from now', async () => {
    const { handle, calls, cursors } = follow([streamed(active(null), event(1, null), heartbeat(null))], { mode: 'push', cursor: 'c0' });
    await handle.done;
    expect(calls).toEqual(['event e1']);
    expect(cursors()).toEqual(['c0', null]);
  });

  it('truncated on active, first or mid-stream: tells the application, then persists the fresh cursor', async () => {
    const { handle, calls } = follow([streamed(active('fresh', true), event(7, 'c7'), active('later', true))], {
      mode: 'push',
      cursor: 'old',
    });
    await handle.done;
    // A gap mid-stream: "a fresh notifications/events/active with truncated: true and a new cursor".
    expect(calls).toEqual(['truncated old -> fresh', 'save fresh', 'event e7', 'save c7', 'truncated c7 -> later', 'save later']);
  });

  // "Clients MUST NOT depend on receiving it" (StreamEventsResult): the stream is reopened either way.
  it.each([
    { ending: 'with its StreamEventsResult', last: [streamResult] },
    { ending: 'without a StreamEventsResult', last: [] },
  ])('a stream the server ended $ending is reopened with its cursor, repeats dropped', async ({ last }) => {
    const { handle, calls, cursors } = follow(
      [streamed(active('a0'), event(1, 'c1'), ...last), streamed(active('c1'), event(1, 'c1'), event(2, 'c2'))],
      { mode: 'push' },
    );
    await handle.done;
    expect(cursors()).toEqual([null, 'c1', 'c2']);
    expect(calls).toEqual(['save a0', 'event e1', 'save c1', 'event e2', 'save c2']);
  });

  it('terminated: the follow ends with the typed error and nothing is reopened', async () => {
    const { handle, calls, sent } = follow([streamed(active('a0'), event(1, 'c1'), terminated, event(2, 'c2'))], { mode: 'push' });
    const error = await handle.done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EventsTerminatedError);
    expect(error).toMatchObject({ errorName: 'Forbidden', cursor: 'c1', error: { code: EventsErrorCode.Forbidden } });
    expect(calls).toEqual(['save a0', 'event e1', 'save c1']);
    expect(sent).toHaveLength(1);
  });

  it('notifications/events/error is handed to onError and the stream goes on', async () => {
    const fake = server([streamed(active('a0'), transientError, event(1, 'c1'))]);
    const record = recorder(fake.sent);
    const handle = followEvents({
      url: URL_,
      name: NAME,
      mode: 'push',
      fetch: fake.fetch,
      signal: fake.signal,
      reconnect: FAST,
      ...record,
    });
    await handle.done;
    expect(record.calls).toEqual(['save a0', 'error -32603', 'event e1 @1', 'save c1']);
  });

  it('a stream silent (no event, no heartbeat) for more than twice the heartbeat is reopened with the last cursor', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const first = live();
    const { handle, sent, cursors } = follow([first.reply], { mode: 'push', heartbeatMs: 1_000 });
    await settle();
    first.send(active('a0'), event(1, 'c1'));
    await vi.advanceTimersByTimeAsync(1_500);
    first.comment(); // a keep-alive comment is not a heartbeat
    await vi.advanceTimersByTimeAsync(499);
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2);
    expect(cursors()).toEqual([null, 'c1']);
    expect(first.state.cancelled).toBe(true);
    await handle.done;
  });

  it('a heartbeat starts the silence window again', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const first = live();
    const { handle, sent, cursors } = follow([first.reply], { mode: 'push', heartbeatMs: 1_000 });
    await settle();
    first.send(active('a0'));
    await vi.advanceTimersByTimeAsync(1_500);
    first.send(heartbeat('h1'));
    await vi.advanceTimersByTimeAsync(1_999);
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2);
    expect(cursors()).toEqual([null, 'h1']);
    await handle.done;
  });

  // "Clients SHOULD NOT apply their default request timeout to events/stream: the heartbeat is the liveness signal."
  it('a stream whose heartbeats keep coming stays open past any request timeout', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const first = live();
    const { handle, sent, calls } = follow([first.reply], { mode: 'push', heartbeatMs: 1_000 });
    await settle();
    first.send(active('a0'));
    for (let i = 0; i < 300; i++) {
      await vi.advanceTimersByTimeAsync(900);
      first.send(heartbeat('a0'));
    }
    expect(sent).toHaveLength(1);
    expect(first.state.cancelled).toBe(false);
    handle.stop();
    await expect(handle.done).resolves.toEqual({ cursor: 'a0' });
    expect(first.state.cancelled).toBe(true);
    expect(calls).toEqual(['save a0']);
  });

  it('stop via signal: the stream is closed, nothing more is handed over, done resolves with the last cursor', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const first = live();
    const stopper = new AbortController();
    const fake = server([first.reply]);
    const record = recorder();
    const handle = followEvents({ url: URL_, name: NAME, mode: 'push', fetch: fake.fetch, signal: stopper.signal, ...record });
    await settle();
    first.send(active('a0'), event(1, 'c1'));
    await settle();
    stopper.abort();
    await expect(handle.done).resolves.toEqual({ cursor: 'c1' });
    expect(first.state.cancelled).toBe(true);
    expect(fake.sent).toHaveLength(1);
    expect(record.calls).toEqual(['save a0', 'event e1', 'save c1']);
  });

  it('stopped from onEvent: the rest of the chunk is not handed over, nor the stopped event cursor persisted', async () => {
    const fake = server([streamed(active('a0'), event(1, 'c1'), event(2, 'c2'))]);
    const calls: string[] = [];
    const handle = followEvents({
      url: URL_,
      name: NAME,
      mode: 'push',
      fetch: fake.fetch,
      onEvent: (o) => {
        calls.push(`event ${o.eventId}`);
        handle.stop();
      },
      saveCursor: (cursor) => void calls.push(`save ${cursor}`),
    });
    await expect(handle.done).resolves.toEqual({ cursor: 'a0' });
    expect(calls).toEqual(['save a0', 'event e1']);
  });

  it('a notification of another subscription is a protocol error', async () => {
    const other = (id: number) => notify('event', occurrence(1, 'c1'))(id + 1);
    const { handle } = follow([streamed(active('a0'), other)], { mode: 'push' });
    await expect(handle.done).rejects.toMatchObject({ name: 'EventsProtocolError', reason: 'wrong_subscription' });
  });

  it('an occurrence of another event type is a protocol error', async () => {
    const wrong = notify('event', { ...occurrence(1, 'c1'), name: 'other.type' });
    const { handle, calls } = follow([streamed(active('a0'), wrong)], { mode: 'push' });
    await expect(handle.done).rejects.toBeInstanceOf(EventsProtocolError);
    expect(calls).toEqual(['save a0']);
  });
});

// ---- Both modes: the requests, refusals and failures ----------------------------------------

describe.each(['poll', 'push'] as const)('followEvents by %s', (mode) => {
  const method = mode === 'poll' ? 'events/poll' : 'events/stream';
  const ok = mode === 'poll' ? polled({ cursor: 'c1' }) : streamed(active('c1'));

  // "A client MUST NOT send them to a server that has not advertised the extension."
  it.each([
    { how: 'capabilities without extensions', discovery: discovered({}) },
    { how: 'another extension only', discovery: discovered({ 'io.modelcontextprotocol/tasks': {} }) },
    { how: 'the extension not as a settings object', discovery: discovered({ [EVENTS_EXTENSION_ID]: true }) },
    { how: 'server/discover refused -32601', discovery: answered((id) => rpcError(id, -32601, 'Method not found')) },
    { how: 'server/discover refused -32022 in a 400', discovery: answered((id) => rpcError(id, -32022, 'Unsupported', {}), 400) },
  ])('a server that has not advertised the extension ($how): EventsUnsupportedError, no events/* request sent', async ({ discovery }) => {
    const { handle, sent, methods, calls } = follow([ok], { mode, cursor: 'c0' }, [discovery]);
    const error = await handle.done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EventsUnsupportedError);
    expect(error).toMatchObject({ name: 'EventsUnsupportedError', eventName: NAME, cursor: 'c0' });
    expect(methods).toEqual(['server/discover']);
    expect(sent).toHaveLength(0);
    expect(calls).toEqual([]);
  });

  it('asks server/discover once, first, as a 2026-07-28 request with the headers given; reconnects do not ask again', async () => {
    const again = mode === 'poll' ? polled({ cursor: 'c2' }) : streamed(active('c2'));
    const { handle, discovers, methods } = follow([ok, again], { mode, headers: { Authorization: 'Bearer t' } });
    await handle.done;
    expect(methods).toEqual(['server/discover', method, method, method]);
    const [discover] = discovers;
    expect(Object.fromEntries(discover!.headers)).toMatchObject({
      authorization: 'Bearer t',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'server/discover',
    });
    expect(discover!.headers.has('mcp-name')).toBe(false);
    expect(discover!.params._meta).toMatchObject({
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { extensions: { [EVENTS_EXTENSION_ID]: {} } },
    });
  });

  it('a server/discover that fails for now (5xx, 429, the network, an internal error) is asked again, then the follow goes on', async () => {
    const unavailable: Reply = () => new Response('down', { status: 503 });
    const limited: Reply = () => new Response('', { status: 429 });
    const unreachable: Reply = () => Promise.reject(new TypeError('network connection lost'));
    const internal = answered((id) => rpcError(id, -32603, 'Internal error'));
    const { handle, methods, calls } = follow([ok], { mode, reconnect: { ...FAST, maxAttempts: 4 } }, [
      unavailable,
      limited,
      unreachable,
      internal,
      advertised,
    ]);
    await handle.done;
    expect(methods).toEqual([...Array(5).fill('server/discover'), method, method]);
    expect(calls).toEqual(['save c1']);
  });

  it('a server/discover refused otherwise (-32600) is EventsRequestError naming it, not retried', async () => {
    const { handle, methods } = follow([ok], { mode }, [answered((id) => rpcError(id, -32600, 'Invalid request')), advertised]);
    const error = await handle.done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EventsRequestError);
    expect(error).toMatchObject({ method: 'server/discover', code: -32600 });
    expect(methods).toEqual(['server/discover']);
  });

  it('sends a 2026-07-28 request declaring the Events extension, with the subscription and the headers given', async () => {
    const { handle, sent } = follow([ok], { mode, cursor: 'c0', arguments: { contains: 'x' }, headers: { Authorization: 'Bearer t' } });
    await handle.done;
    const [request] = sent;
    expect(request?.method).toBe(method);
    expect(Object.fromEntries(request!.headers)).toMatchObject({
      authorization: 'Bearer t',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    });
    expect(request?.params).toMatchObject({
      name: NAME,
      arguments: { contains: 'x' },
      cursor: 'c0',
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': { extensions: { [EVENTS_EXTENSION_ID]: {} } },
      },
    });
  });

  // A refused cursor is its own error: never silently restarted from null.
  it.each([
    { how: 'in a 200', status: 200, reason: 'cursor_ahead' },
    { how: 'with a 400', status: 400, reason: 'forged_cursor' },
    { how: 'in a 200', status: 200, reason: 'cursor_other_type' },
  ])('a cursor refused $how ($reason) ends the follow with EventsCursorRefusedError', async ({ status, reason }) => {
    const refusal = answered((id) => rpcError(id, -32602, 'InvalidParams: not a position', { reason }), status);
    const { handle, sent, calls } = follow([refusal, ok], { mode, cursor: 'stale' });
    const error = await handle.done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EventsCursorRefusedError);
    expect(error).toMatchObject({ reason, method, cursor: 'stale', code: -32602, errorName: 'InvalidParams' });
    expect(sent).toHaveLength(1);
    expect(calls).toEqual([]);
  });

  it.each([
    { name: 'NotFound', code: EventsErrorCode.NotFound, data: { kind: 'event' } },
    { name: 'Forbidden', code: EventsErrorCode.Forbidden, data: {} },
    { name: 'InvalidParams', code: -32602, data: { reason: 'invalid_arguments' } },
    { name: 'Unsupported', code: EventsErrorCode.Unsupported, data: { feature: 'deliveryMode', value: mode } },
    { name: 'ResourceExhausted', code: EventsErrorCode.ResourceExhausted, data: { limit: 'events/stream', max: 4 } },
    { name: undefined, code: -32601, data: undefined },
  ])('a $code refusal ends the follow with EventsRequestError, not retried', async ({ name, code, data }) => {
    const { handle, sent } = follow([answered((id) => rpcError(id, code, `${name}: no`, data)), ok], { mode });
    const error = await handle.done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EventsRequestError);
    expect(error).not.toBeInstanceOf(EventsCursorRefusedError);
    expect(error).toMatchObject({ errorName: name, code, data, method });
    expect(sent).toHaveLength(1);
  });

  it("5xx, 429, network failures and the server's internal error are retried with the same cursor", async () => {
    const unavailable: Reply = () => new Response('down', { status: 503 });
    const limited: Reply = () => new Response('', { status: 429 });
    const unreachable: Reply = () => Promise.reject(new TypeError('network connection lost'));
    const internal = answered((id) => rpcError(id, -32603, 'Internal error'));
    const { handle, cursors, calls } = follow([unavailable, limited, unreachable, internal, ok], {
      mode,
      cursor: 'c0',
      reconnect: { ...FAST, maxAttempts: 4 },
    });
    await handle.done;
    expect(cursors()).toEqual(['c0', 'c0', 'c0', 'c0', 'c0', 'c1']);
    expect(calls).toEqual(['save c1']);
  });

  it('past the reconnect budget without progress: ReconnectExhaustedError', async () => {
    const unavailable: Reply = () => new Response('down', { status: 503 });
    const { handle, sent } = follow([unavailable, unavailable, unavailable, ok], {
      mode,
      cursor: 'c0',
      reconnect: { ...FAST, maxAttempts: 2 },
    });
    await expect(handle.done).rejects.toMatchObject({ name: 'ReconnectExhaustedError', cursor: 'c0' });
    await expect(handle.done).rejects.toBeInstanceOf(ReconnectExhaustedError);
    expect(sent).toHaveLength(3);
  });

  it('a 4xx without a JSON-RPC error is HttpStatusError, not retried', async () => {
    const { handle, sent } = follow([() => new Response('<html>forbidden</html>', { status: 403 }), ok], { mode });
    await expect(handle.done).rejects.toBeInstanceOf(HttpStatusError);
    expect(sent).toHaveLength(1);
  });

  it('an onEvent that throws ends the follow with its error, the cursor after it not persisted', async () => {
    const first = mode === 'poll' ? polled({ events: [occurrence(1)], cursor: 'c1' }) : streamed(active('a0'), event(1, 'c1'));
    const fake = server([first]);
    const saved: string[] = [];
    const failure = new Error('the application failed');
    const handle = followEvents({
      url: URL_,
      name: NAME,
      mode,
      fetch: fake.fetch,
      onEvent: () => Promise.reject(failure),
      saveCursor: (cursor) => void saved.push(cursor),
    });
    await expect(handle.done).rejects.toBe(failure);
    expect(saved).not.toContain('c1');
  });
});
