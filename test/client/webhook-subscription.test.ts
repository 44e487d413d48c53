/**
 * subscribeWebhook (src/client/webhook-subscription.ts) against a scripted fake server: a fetch
 * that answers `server/discover` (by default with the Events extension advertised), each
 * `events/subscribe` and `events/unsubscribe` from the test's script, and records what was sent
 * and when on the test's clock. Time is a fake clock given to the loop (`clock`): a wait is a
 * pending wake-up the test fires, so no test waits in real time and none asserts a duration; the
 * schedule is checked as positions on that clock (a refresh sent before the grant's
 * `refreshBefore`). The cursor store is a variable the test moves as the application's endpoint
 * would (receiveWebhook's onDelivery persisting a delivery's cursor).
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_NO_EXPIRY_REFRESH_MS,
  DEFAULT_RECONNECT,
  type DeliveryStatus,
  EventsCallbackEndpointError,
  EventsProtocolError,
  EventsRequestError,
  EventsUnsupportedError,
  type FetchLike,
  newWebhookSecret,
  ReconnectExhaustedError,
  type SubscribeWebhookOptions,
  type SubscriptionClock,
  subscribeWebhook,
} from '../../src/client/index.ts';
import { liveRetryWait, MIN_REFRESH_WAIT_MS, refreshWait } from '../../src/client/refresh-schedule.ts';
import { EVENTS_EXTENSION_ID, EventsErrorCode } from '../../src/core/events-wire.ts';

const MCP = 'https://mcp.test/mcp';
const HOOK = 'https://hooks.test/mcp/incidents';
const NAME = 'demo.note';
const SECRET = newWebhookSecret();
const START = Date.parse('2026-12-01T12:00:00.000Z');
const HOUR = 3_600_000;
const FAST = { initialDelayMs: 1_000, maxDelayMs: 4_000, factor: 2, maxAttempts: 3 };

// ---- The clock -------------------------------------------------------------------------------

/** A clock whose waits resolve only when the test fires them: `fire()` moves to the earliest wake-up. */
function fakeClock(): SubscriptionClock & { fire(): boolean; readonly pending: number } {
  let now = START;
  const waits: { at: number; wake: () => void }[] = [];
  return {
    now: () => now,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (signal.aborted) return resolve();
        const entry = { at: now + ms, wake: resolve };
        waits.push(entry);
        const abandon = () => {
          waits.splice(waits.indexOf(entry), 1);
          resolve();
        };
        signal.addEventListener('abort', abandon, { once: true });
      }),
    fire() {
      if (waits.length === 0) return false;
      const earliest = waits.reduce((a, b) => (b.at < a.at ? b : a));
      waits.splice(waits.indexOf(earliest), 1);
      now = Math.max(now, earliest.at);
      earliest.wake();
      return true;
    },
    get pending() {
      return waits.length;
    },
  };
}

type Clock = ReturnType<typeof fakeClock>;
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** Lets the loop act, firing its waits one by one, until `reached()` holds; bounded in steps, not time. */
async function until(clock: Clock, reached: () => boolean, maxSteps = 400): Promise<void> {
  for (let step = 0; step < maxSteps; step++) {
    await tick();
    if (reached()) return;
    clock.fire();
  }
  throw new Error('the condition was not reached');
}

/** Fires waits until the clock passes `at` (the loop keeps waiting: nothing else is expected to happen). */
async function runUntil(clock: Clock, at: number, maxSteps = 400): Promise<void> {
  await until(clock, () => clock.now() >= at, maxSteps);
}

// ---- The scripted server ---------------------------------------------------------------------

interface Sent {
  readonly method: string;
  readonly id: number;
  readonly params: any;
  readonly headers: Headers;
  /** When it was sent, on the test's clock. */
  readonly at: number;
}

type Reply = (sent: Sent) => Response | Promise<Response>;

const rpc = (id: number, result: object) => Response.json({ jsonrpc: '2.0', id, result });
const rpcError =
  (code: number, message: string, data?: unknown, status = 200): Reply =>
  ({ id }) =>
    Response.json({ jsonrpc: '2.0', id, error: { code, message, data } }, { status });
const iso = (ms: number) => new Date(ms).toISOString();

/** A subscribe result granting `ttlMs` from the request's time (null: no expiry). */
const granted =
  (options: { ttlMs?: number | null; cursor?: string | null; truncated?: boolean; deliveryStatus?: object; id?: string } = {}): Reply =>
  ({ id, at }) =>
    rpc(id, {
      resultType: 'complete',
      id: options.id ?? 'sub_a3f1c8e2b0d49f7e',
      refreshBefore: options.ttlMs === null ? null : iso(at + (options.ttlMs ?? HOUR)),
      cursor: options.cursor === undefined ? 'c-server' : options.cursor,
      truncated: options.truncated ?? false,
      ...(options.deliveryStatus && { deliveryStatus: options.deliveryStatus }),
    });
const unsubscribed: Reply = ({ id }) => rpc(id, { resultType: 'complete' });
const unavailable: Reply = () => new Response('down', { status: 503 });
const limited: Reply = () => new Response('', { status: 429 });
const unreachable: Reply = () => Promise.reject(new TypeError('network connection lost'));
const internal = rpcError(-32603, 'Internal error');
const advertised: Reply = ({ id }) =>
  rpc(id, { supportedVersions: ['2026-07-28'], capabilities: { extensions: { [EVENTS_EXTENSION_ID]: {} } } });

/**
 * The server: `server/discover` from `discovery`, `events/subscribe` from `subscribes` in turn,
 * then from `otherwise` (by default, granting an hour) again and again; `events/unsubscribe` from `unsubscribes`.
 */
function server(clock: Clock, script: { discovery?: Reply[]; subscribes?: Reply[]; unsubscribes?: Reply[]; otherwise?: Reply } = {}) {
  const sent: Sent[] = [];
  const queues: Record<string, Reply[]> = {
    'server/discover': [...(script.discovery ?? [advertised])],
    'events/subscribe': [...(script.subscribes ?? [])],
    'events/unsubscribe': [...(script.unsubscribes ?? [unsubscribed])],
  };
  const fetch: FetchLike = async (_url, init) => {
    const body = JSON.parse(init?.body as string);
    const request: Sent = { method: body.method, id: body.id, params: body.params, headers: new Headers(init?.headers), at: clock.now() };
    sent.push(request);
    const reply = queues[request.method]?.shift() ?? (request.method === 'events/subscribe' ? (script.otherwise ?? granted()) : undefined);
    if (reply === undefined) throw new Error(`the script has no answer for ${request.method}`);
    return reply(request);
  };
  const of = (method: string) => sent.filter((request) => request.method === method);
  return { sent, fetch, methods: () => sent.map((request) => request.method), subscribes: () => of('events/subscribe'), of };
}

/** The application's cursor store and what the loop told it, one line each. */
function application(initial: string | null = null) {
  const calls: string[] = [];
  const store = { cursor: initial };
  return {
    calls,
    store,
    loadCursor: async () => store.cursor,
    saveCursor: async (cursor: string) => {
      calls.push(`save ${cursor}`);
      store.cursor = cursor;
    },
    onTruncated: ({ from, cursor }: { from: string | null; cursor: string | null }) => void calls.push(`truncated ${from} -> ${cursor}`),
    onStatus: (status: DeliveryStatus) => void calls.push(`status ${status.active} ${status.lastError}`),
  };
}

function setup(script: Parameters<typeof server>[1] = {}, options: Partial<SubscribeWebhookOptions> = {}, initial: string | null = null) {
  const clock = fakeClock();
  const fake = server(clock, script);
  const app = application(initial);
  const subscribing = subscribeWebhook({
    url: MCP,
    name: NAME,
    arguments: { contains: 'deploy' },
    delivery: { url: HOOK, secret: SECRET },
    fetch: fake.fetch,
    clock,
    random: () => 0.5,
    reconnect: FAST,
    ...app,
    ...options,
  });
  return { clock, ...fake, ...app, subscribing };
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

// ---- Tests -----------------------------------------------------------------------------------

describe('subscribeWebhook: discovery and the first subscribe', () => {
  // "A client MUST NOT send them to a server that has not advertised the extension."
  it.each([
    { how: 'capabilities without the extension', discovery: (({ id }) => rpc(id, { capabilities: { extensions: {} } })) as Reply },
    { how: 'server/discover refused -32601', discovery: rpcError(-32601, 'Method not found') },
  ])('a server that has not advertised the extension ($how): EventsUnsupportedError, no events/subscribe sent', async ({ discovery }) => {
    const { subscribing, methods, calls } = setup({ discovery: [discovery] });
    expect(await failure(subscribing)).toBeInstanceOf(EventsUnsupportedError);
    expect(methods()).toEqual(['server/discover']);
    expect(calls).toEqual([]);
  });

  it('discovers, then subscribes once with the 2026-07-28 request: key, delivery, secret, loaded cursor, ttlMs', async () => {
    const { subscribing, sent, calls } = setup(
      {},
      { ttlMs: 2 * HOUR, maxAgeMs: 300_000, headers: { Authorization: 'Bearer t' } },
      'c-stored',
    );
    const subscription = await subscribing;
    expect(subscription.id).toBe('sub_a3f1c8e2b0d49f7e');
    expect(subscription.refreshBefore).toBe(iso(START + HOUR));
    expect(sent.map((request) => request.method)).toEqual(['server/discover', 'events/subscribe']);
    const subscribe = sent[1]!;
    expect(subscribe.params).toMatchObject({
      name: NAME,
      arguments: { contains: 'deploy' },
      delivery: { url: HOOK, secret: SECRET },
      cursor: 'c-stored',
      maxAgeMs: 300_000,
      ttlMs: 2 * HOUR,
      _meta: { 'io.modelcontextprotocol/clientCapabilities': { extensions: { [EVENTS_EXTENSION_ID]: {} } } },
    });
    expect(Object.fromEntries(subscribe.headers)).toMatchObject({
      authorization: 'Bearer t',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'events/subscribe',
      'mcp-name': NAME,
    });
    // The answer's cursor, a new one, is persisted; the application's store now holds it.
    expect(calls).toEqual(['save c-server']);
    await subscription.stop();
  });

  it('a secret that is not whsec_ is refused before any request', async () => {
    const { subscribing, sent } = setup({}, { delivery: { url: HOOK, secret: 'hunter2' } });
    expect(await failure(subscribing)).toBeInstanceOf(TypeError);
    expect(sent).toEqual([]);
  });

  it('a null grant that was not asked for (ttlMs not null) is a protocol error', async () => {
    const { subscribing } = setup({ subscribes: [granted({ ttlMs: null })] });
    expect(await failure(subscribing)).toMatchObject({ name: 'EventsProtocolError', reason: 'malformed_result' });
  });
});

describe('subscribeWebhook: refreshing', () => {
  it('refreshes before refreshBefore, with the cursor the application persisted since and the same key and secret', async () => {
    const { subscribing, clock, subscribes, store } = setup({}, {}, 'c0');
    const subscription = await subscribing;
    const deadline = Date.parse(subscription.refreshBefore!);
    // A delivery processed by the endpoint: its cursor persisted by the application (receiveWebhook's onDelivery).
    store.cursor = 'c-delivered';
    await until(clock, () => subscribes().length === 2);
    const [first, refresh] = subscribes();
    expect(refresh!.at).toBeGreaterThan(first!.at);
    expect(refresh!.at).toBeLessThan(deadline);
    expect(refresh!.params).toMatchObject({ cursor: 'c-delivered', delivery: { url: HOOK, secret: SECRET }, name: NAME });
    expect(refresh!.params.arguments).toEqual(first!.params.arguments);
    // Each grant schedules the next: the third refresh falls before the second grant's refreshBefore.
    await until(clock, () => subscribes().length === 3);
    expect(subscribes()[2]!.at).toBeLessThan(refresh!.at + HOUR);
    await subscription.stop();
  });

  it("hands a refresh's deliveryStatus to onStatus, and does not persist a cursor it already holds", async () => {
    const status = { active: false, lastDeliveryAt: '2026-12-01T11:00:00Z', lastError: 'http_5xx', failedSince: '2026-12-01T11:05:00Z' };
    const { subscribing, clock, subscribes, calls } = setup({
      subscribes: [granted({ cursor: 'c1' }), granted({ cursor: 'c1', deliveryStatus: status })],
    });
    const subscription = await subscribing;
    await until(clock, () => subscribes().length === 2 && calls.length === 2);
    expect(calls).toEqual(['save c1', 'status false http_5xx']);
    await subscription.stop();
  });

  it('a null cursor (no replay) in an answer is never persisted', async () => {
    const { subscribing, clock, subscribes, calls } = setup(
      { subscribes: [granted({ cursor: null }), granted({ cursor: null })] },
      {},
      'c0',
    );
    const subscription = await subscribing;
    await until(clock, () => subscribes().length === 2);
    expect(calls).toEqual([]);
    await subscription.stop();
  });

  it('refreshBefore: null (no expiry, asked with ttlMs: null): "clients SHOULD still call events/subscribe … occasionally": about daily, with the persisted cursor; its failures tried again past the budget (it never lapses)', async () => {
    const status = { active: false, lastDeliveryAt: null, lastError: 'timeout', failedSince: '2026-12-01T13:00:00Z' };
    const { subscribing, clock, subscribes, store, calls } = setup(
      {
        subscribes: [
          granted({ ttlMs: null, cursor: 'c1' }),
          unavailable,
          unreachable,
          unavailable,
          unavailable,
          granted({ ttlMs: null, cursor: 'c2', deliveryStatus: status }),
        ],
        otherwise: granted({ ttlMs: null, cursor: 'c2' }),
      },
      { ttlMs: null },
    );
    const subscription = await subscribing;
    expect(subscription.refreshBefore).toBeNull();
    expect(subscribes()[0]!.params.ttlMs).toBeNull();
    // The loop waits in slices of a minute (a machine asleep notices within one): some 1,400 a day.
    await runUntil(clock, START + 0.9 * DEFAULT_NO_EXPIRY_REFRESH_MS - 1, 2_000);
    expect(subscribes()).toHaveLength(1);
    store.cursor = 'c-delivered';
    await until(clock, () => calls.includes('save c2'), 2_000);
    const refreshes = subscribes().slice(1);
    expect(refreshes).toHaveLength(5);
    expect(refreshes[0]!.at - START).toBeGreaterThanOrEqual(0.9 * DEFAULT_NO_EXPIRY_REFRESH_MS);
    expect(refreshes[0]!.at - START).toBeLessThanOrEqual(DEFAULT_NO_EXPIRY_REFRESH_MS);
    // More failures in a row than the budget's maxAttempts: a no-expiry subscription is not given up.
    expect(refreshes.length - 1).toBeGreaterThan(FAST.maxAttempts);
    expect(refreshes.map((request) => request.params)).toEqual(
      Array(5).fill(expect.objectContaining({ cursor: 'c-delivered', ttlMs: null })),
    );
    expect(calls).toEqual(['save c1', 'save c2', 'status false timeout']);
    // The next one, a day on.
    await until(clock, () => subscribes().length === 7, 2_000);
    expect(subscribes()[6]!.at - subscribes()[5]!.at).toBeGreaterThanOrEqual(0.9 * DEFAULT_NO_EXPIRY_REFRESH_MS);
    await subscription.stop();
    expect(await subscription.done).toEqual({ unsubscribed: false });
  });

  it('noExpiryRefreshMs: Infinity: a no-expiry grant is never refreshed; 0 is refused', async () => {
    const { subscribing, clock, subscribes } = setup(
      { subscribes: [granted({ ttlMs: null })] },
      { ttlMs: null, noExpiryRefreshMs: Infinity },
    );
    const subscription = await subscribing;
    await runUntil(clock, START + 2 * DEFAULT_NO_EXPIRY_REFRESH_MS, 3_000);
    expect(subscribes()).toHaveLength(1);
    await subscription.stop();
    await expect(setup({}, { ttlMs: null, noExpiryRefreshMs: 0 }).subscribing).rejects.toThrow(RangeError);
  });

  it('a refresh that fails for now (5xx, 429, the network, an internal error) is tried again before refreshBefore, then goes on', async () => {
    const { subscribing, clock, subscribes } = setup({ subscribes: [granted(), unavailable, limited, unreachable, internal, granted()] });
    const subscription = await subscribing;
    const deadline = Date.parse(subscription.refreshBefore!);
    await until(clock, () => subscribes().length === 7);
    const refreshes = subscribes().slice(1, 6);
    expect(refreshes.every((request) => request.at < deadline)).toBe(true);
    // More failures in a row than the budget's maxAttempts: a live subscription is not given up.
    expect(refreshes.length - 1).toBeGreaterThan(FAST.maxAttempts);
    expect(refreshes.map((request) => request.params.cursor)).toEqual(Array(5).fill('c-server'));
    await subscription.stop();
  });

  it('a lapsed subscription (refreshBefore passed while failing) is subscribed again with the persisted cursor; a gap is told first', async () => {
    let deadline = Number.POSITIVE_INFINITY;
    const downUntilLapsed: Reply = (sent) =>
      sent.at < deadline ? unavailable(sent) : granted({ cursor: 'c-fresh', truncated: true })(sent);
    const { subscribing, clock, subscribes, store, calls } = setup({ subscribes: [granted({ cursor: 'c1' })], otherwise: downUntilLapsed });
    const subscription = await subscribing;
    deadline = Date.parse(subscription.refreshBefore!);
    store.cursor = 'c-delivered';
    await until(clock, () => calls.includes('save c-fresh'), 1_000);
    const last = subscribes().at(-1)!;
    expect(last.at).toBeGreaterThanOrEqual(deadline);
    expect(last.params.cursor).toBe('c-delivered');
    expect(calls).toEqual(['save c1', 'truncated c-delivered -> c-fresh', 'save c-fresh']);
    expect(subscription.refreshBefore).toBe(iso(last.at + HOUR));
    await subscription.stop();
  });

  it('past refreshBefore, failures count against the budget: ReconnectExhaustedError', async () => {
    const { subscribing, clock, subscribes } = setup({ subscribes: [granted()], otherwise: unavailable });
    const subscription = await subscribing;
    const deadline = Date.parse(subscription.refreshBefore!);
    const error = failure(subscription.done);
    await until(clock, () => clock.pending === 0 && subscribes().length > 2, 1_000);
    expect(await error).toBeInstanceOf(ReconnectExhaustedError);
    const afterLapse = subscribes().filter((request) => request.at >= deadline);
    expect(afterLapse).toHaveLength(FAST.maxAttempts + 1);
  });
});

describe('subscribeWebhook: refusals end the loop, typed and not retried', () => {
  const refusals = [
    { name: 'CallbackEndpointError', code: EventsErrorCode.CallbackEndpointError, data: { reason: 'challenge_failed' } },
    { name: 'Forbidden', code: EventsErrorCode.Forbidden, data: { reason: 'grant_revoked' } },
    { name: 'NotFound', code: EventsErrorCode.NotFound, data: { kind: 'event' } },
    { name: 'Unsupported', code: EventsErrorCode.Unsupported, data: { feature: 'deliveryMode', value: 'webhook' } },
    { name: 'InvalidParams', code: EventsErrorCode.InvalidParams, data: { reason: 'invalid_arguments' } },
    { name: 'ResourceExhausted', code: EventsErrorCode.ResourceExhausted, data: { limit: 'subscriptions', max: 100 } },
  ];

  it.each(refusals)('$name on a refresh: done rejects with its typed error, nothing sent after it', async ({ name, code, data }) => {
    const { subscribing, clock, subscribes, sent } = setup({ subscribes: [granted(), rpcError(code, name, data)] });
    const subscription = await subscribing;
    const error = await (async () => {
      const ended = failure(subscription.done);
      await until(clock, () => subscribes().length === 2);
      return ended;
    })();
    expect(error).toBeInstanceOf(EventsRequestError);
    expect(error).toMatchObject({ errorName: name, code, method: 'events/subscribe', data });
    if (name === 'CallbackEndpointError') expect(error).toMatchObject({ name: 'EventsCallbackEndpointError', reason: 'challenge_failed' });
    await runUntil(clock, clock.now() + 3 * HOUR).catch(() => undefined);
    expect(sent.at(-1)!.method).toBe('events/subscribe');
    expect(subscribes()).toHaveLength(2);
  });

  it('CallbackEndpointError on the first subscribe (the endpoint did not echo the challenge): subscribeWebhook rejects', async () => {
    const refusal = rpcError(EventsErrorCode.CallbackEndpointError, 'CallbackEndpointError', { reason: 'timeout' }, 400);
    const { subscribing, subscribes } = setup({ subscribes: [refusal] });
    const error = await failure(subscribing);
    expect(error).toBeInstanceOf(EventsCallbackEndpointError);
    expect(error).toMatchObject({ reason: 'timeout', status: 400 });
    expect(subscribes()).toHaveLength(1);
  });

  it('a refresh answered for another id is a protocol error', async () => {
    const { subscribing, clock, subscribes } = setup({ subscribes: [granted(), granted({ id: 'sub_other' })] });
    const subscription = await subscribing;
    const ended = failure(subscription.done);
    await until(clock, () => subscribes().length === 2);
    const error = await ended;
    expect(error).toBeInstanceOf(EventsProtocolError);
    expect(error).toMatchObject({ reason: 'wrong_subscription' });
  });
});

describe('subscribeWebhook: stop and unsubscribe', () => {
  it('stop() stops refreshing without unsubscribing', async () => {
    const { subscribing, clock, methods } = setup();
    const subscription = await subscribing;
    await subscription.stop();
    expect(await subscription.done).toEqual({ unsubscribed: false });
    await runUntil(clock, START + 3 * HOUR).catch(() => undefined);
    expect(methods()).toEqual(['server/discover', 'events/subscribe']);
  });

  it('aborting the signal stops it as stop() does', async () => {
    const stopper = new AbortController();
    const { subscribing, clock, methods } = setup({}, { signal: stopper.signal });
    const subscription = await subscribing;
    stopper.abort();
    expect(await subscription.done).toEqual({ unsubscribed: false });
    await runUntil(clock, START + 3 * HOUR).catch(() => undefined);
    expect(methods()).toEqual(['server/discover', 'events/subscribe']);
  });

  it.each([
    { how: 'answered', reply: unsubscribed },
    { how: 'NotFound (nothing to remove)', reply: rpcError(EventsErrorCode.NotFound, 'NotFound', { kind: 'subscription' }) },
  ])('unsubscribe() sends events/unsubscribe with the key and no secret, and ends the loop ($how)', async ({ reply }) => {
    const { subscribing, clock, methods, of } = setup({ unsubscribes: [unavailable, reply] });
    const subscription = await subscribing;
    const unsubscribing = subscription.unsubscribe();
    // The first answer (503) is tried again after a wait on the clock.
    await until(clock, () => of('events/unsubscribe').length === 2);
    await unsubscribing;
    expect(await subscription.done).toEqual({ unsubscribed: true });
    const [, request] = of('events/unsubscribe');
    expect(request!.params).toMatchObject({ name: NAME, arguments: { contains: 'deploy' }, delivery: { url: HOOK } });
    expect(request!.params.delivery.secret).toBeUndefined();
    expect(request!.headers.get('mcp-method')).toBe('events/unsubscribe');
    await runUntil(clock, START + 3 * HOUR).catch(() => undefined);
    expect(methods()).toEqual(['server/discover', 'events/subscribe', 'events/unsubscribe', 'events/unsubscribe']);
  });

  it('an unsubscribe refused otherwise rejects with its typed error; the loop has stopped all the same', async () => {
    const { subscribing } = setup({ unsubscribes: [rpcError(EventsErrorCode.Forbidden, 'Forbidden', {})] });
    const subscription = await subscribing;
    const error = await failure(subscription.unsubscribe());
    expect(error).toMatchObject({ name: 'EventsRequestError', errorName: 'Forbidden', method: 'events/unsubscribe' });
    expect(await subscription.done).toEqual({ unsubscribed: false });
  });
});

describe('refresh-schedule', () => {
  it.each([
    // remaining, margin, random → wait: a tenth of the remaining time (or the margin) left, jittered over the tenth before it.
    { remaining: HOUR, margin: 60_000, random: 0, wait: 0.9 * HOUR },
    { remaining: HOUR, margin: 60_000, random: 0.999_999, wait: Math.floor(0.9 * HOUR * (1 - 0.1 * 0.999_999)) },
    { remaining: HOUR, margin: 30 * 60_000, random: 0, wait: 0.5 * HOUR },
    { remaining: 10 * HOUR, margin: 60_000, random: 0, wait: 9 * HOUR },
    // A grant shorter than twice the margin is refreshed at its middle, not at once.
    { remaining: 60_000, margin: 60_000, random: 0, wait: 30_000 },
    // Already due or past (a skewed clock): the floor, never a tight loop.
    { remaining: 0, margin: 60_000, random: 0, wait: MIN_REFRESH_WAIT_MS },
    { remaining: -5_000, margin: 60_000, random: 0, wait: MIN_REFRESH_WAIT_MS },
  ])('refreshWait($remaining, $margin, $random) = $wait', ({ remaining, margin, random, wait }) => {
    expect(refreshWait(remaining, margin, random)).toBe(wait);
    expect(wait).toBeLessThan(Math.max(remaining, MIN_REFRESH_WAIT_MS + 1));
  });

  it.each([
    { failures: 0, until: HOUR, wait: 1_000 },
    { failures: 1, until: HOUR, wait: 2_000 },
    { failures: 2, until: HOUR, wait: 4_000 },
    // Past the budget's attempts: its longest wait, still trying.
    { failures: 10, until: HOUR, wait: 4_000 },
    // Never past refreshBefore.
    { failures: 2, until: 1_500, wait: 1_500 },
  ])('liveRetryWait($failures, until $until) = $wait', ({ failures, until: untilMs, wait }) => {
    expect(liveRetryWait(failures, { ...DEFAULT_RECONNECT, ...FAST }, untilMs)).toBe(wait);
  });
});
