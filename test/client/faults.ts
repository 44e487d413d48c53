/**
 * A fetch to the Worker under test (`exports.default.fetch`) that breaks connections on purpose:
 * each request the plan targets takes the next cut, and its response body ends (or errors) after
 * that many bytes, as a dropped connection would leave it. The server is not told until the cut:
 * what it did with the request, it did.
 */
import { Client } from '@modelcontextprotocol/client';
import { exports } from 'cloudflare:workers';
import { ForkSafeTransport, type FetchLike, type ReconnectOptions } from '../../src/client/index.ts';
import { openSession, toolCall, URL_, type Version } from '../support/mcp-http.ts';

export interface SeenRequest {
  readonly method: string;
  readonly lastEventId: string | null;
  /** The POST body's JSON-RPC method and id, if it had them. */
  readonly rpc: string | undefined;
  readonly id: string | number | undefined;
  readonly headers: Headers;
}

/**
 * `at`: bytes of the body the client receives before the cut (0: none, the headers only).
 * `how`: `error` (the read fails, a reset), `close` (the body just ends), `drop` (no answer at
 * all: the fetch rejects after the server got the request), `stall` (the body neither ends nor
 * carries another byte, the server still sending: a connection dropped without a word, as a NAT
 * drops one), `unanswered` (the request goes down such a connection: it never reaches the server,
 * and the fetch waits until the client aborts it).
 */
export interface Cut {
  readonly at: number;
  readonly how?: 'error' | 'close' | 'drop' | 'stall' | 'unanswered';
}

export interface Logged {
  readonly method: string;
  readonly rpc: string | undefined;
  readonly lastEventId: string | null;
  readonly status: number;
  readonly streamId: string | null;
  readonly cut: Cut | undefined;
  /** When the request was made (Date.now()). */
  readonly time: number;
}

export interface FaultyFetch extends FetchLike {
  readonly log: Logged[];
}

/** Rewrites a request before it goes to the Worker, or a response before the client sees it. */
export interface Tamper {
  request?(request: Request): Request | Promise<Request>;
  response?(response: Response, request: Request): Response | Promise<Response>;
}

const inProcess = (request: Request) => exports.default.fetch(request);

/**
 * `target` picks the requests to break; each takes the next of `cuts` (a number is an `error`
 * cut at that offset) until they run out.
 */
export function faultyFetch(
  target: (request: SeenRequest) => boolean = () => false,
  cuts: readonly (number | Cut)[] = [],
  tamper: Tamper = {},
): FaultyFetch {
  const queue = cuts.map((cut) => (typeof cut === 'number' ? { at: cut } : cut));
  const log: Logged[] = [];
  const faulty = async (input: string | URL, init?: RequestInit) => {
    let request = new Request(input, init);
    const sent = request.method === 'POST' ? (JSON.parse(await request.clone().text()) as { method?: string; id?: string | number }) : {};
    const rpc = sent.method;
    request = (await tamper.request?.(request)) ?? request;
    const time = Date.now();
    const seen = { method: request.method, lastEventId: request.headers.get('Last-Event-ID'), rpc, id: sent.id, headers: request.headers };
    const cut = target(seen) ? queue.shift() : undefined;
    if (cut?.how === 'unanswered') {
      log.push({ method: seen.method, rpc, lastEventId: seen.lastEventId, status: 0, streamId: null, cut, time });
      const signal = init?.signal;
      return new Promise<Response>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
    }
    let response = await inProcess(request);
    response = (await tamper.response?.(response, request)) ?? response;
    const { method, lastEventId } = seen;
    log.push({ method, rpc, lastEventId, status: response.status, streamId: response.headers.get('Mcp-Stream-Id'), cut, time });
    if (cut === undefined || response.body === null) return response;
    if (cut.how === 'drop') {
      await response.body.cancel();
      throw new TypeError('the connection was lost before the answer (injected)');
    }
    const body = cutBody(response.body, cut.at, (cut.how ?? 'error') as 'error' | 'close' | 'stall');
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  return Object.assign(faulty, { log });
}

/** `body` as a client behind a failing connection reads it: its first `at` bytes, then the break. */
export function cutBody(body: ReadableStream<Uint8Array>, at: number, how: 'error' | 'close' | 'stall'): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let passed = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Nothing more, ever, until the client gives up on it (cancel); the server is not told.
      if (passed >= at && how === 'stall') return new Promise<void>(() => undefined);
      if (passed >= at) {
        // The client is gone from the server's point of view too.
        await reader.cancel().catch(() => undefined);
        if (how === 'error') controller.error(new TypeError('the connection was reset (injected)'));
        else controller.close();
        return;
      }
      const { done, value } = await reader.read();
      if (done) return controller.close();
      const room = at - passed;
      const piece = value.byteLength <= room ? value : value.slice(0, room);
      passed += piece.byteLength;
      controller.enqueue(piece);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** The first POST of each tool call (not its re-sends). */
export function firstToolCallPosts(): (request: SeenRequest) => boolean {
  const seen = new Set<string | number>();
  return (request) => {
    if (request.method !== 'POST' || request.rpc !== 'tools/call' || request.id === undefined || seen.has(request.id)) return false;
    seen.add(request.id);
    return true;
  };
}

/** Requests of a tool call: its POST and every resume (only broken streams are resumed here). */
export const toolCallStreams = (request: SeenRequest) =>
  (request.method === 'POST' && request.rpc === 'tools/call') || (request.method === 'GET' && request.lastEventId !== null);

/**
 * Where the frames of a countdown's stream end, in bytes, read from the Worker with a raw
 * session: the offsets worth cutting at (before, at and after each frame boundary).
 */
export async function countdownFrameEnds(version: Version, from: number): Promise<number[]> {
  const session = await openSession(version);
  const events = await session.call('tools/call', toolCall('countdown', { from, interval_ms: 0 }, { progressToken: 1 }));
  let end = 0;
  return events.map((event) => (end += new TextEncoder().encode(event.raw).byteLength));
}

/** The SDK's id of a request the transport sent under `wire` (src/client/wire-ids.ts: the SDK's id after the transport's prefix). */
export const sdkIdOf = (wire: string): unknown => JSON.parse(wire.slice(wire.indexOf('.') + 1));

/** A ForkSafeTransport on `fetch`, its Client connected, and what it reported. */
export async function connect(fetch: FetchLike, options: ConnectOptions = {}) {
  const errors: Error[] = [];
  const modes: string[] = [];
  const transport = new ForkSafeTransport(URL_, {
    fetch,
    // The server asks for 1 s between reconnects; the tests cut dozens of connections.
    reconnect: { maxDelayMs: 5, ...options.reconnect },
    onmode: (mode) => modes.push(mode),
    ...(options.standaloneStream !== undefined && { standaloneStream: options.standaloneStream }),
    ...(options.idleTimeoutMs !== undefined && { idleTimeoutMs: options.idleTimeoutMs }),
  });
  const client = new Client(
    { name: 'fork-safe-test', version: '1.0.0' },
    options.version === undefined ? {} : { supportedProtocolVersions: [options.version] },
  );
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  return { client, transport, errors, modes };
}

export interface ConnectOptions {
  readonly version?: Version;
  readonly reconnect?: Partial<ReconnectOptions>;
  readonly standaloneStream?: boolean;
  readonly idleTimeoutMs?: number;
}

/** countdown with onprogress: what reached the caller, and how the call ended. */
export async function countdown(
  client: Client,
  from: number,
  interval_ms: number,
): Promise<{ progress: number[]; result?: unknown; error?: unknown }> {
  const progress: number[] = [];
  const outcome = await client
    .callTool({ name: 'countdown', arguments: { from, interval_ms } }, { onprogress: (p) => progress.push(p.progress) })
    .then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
  return { progress, ...outcome };
}

export const liftoff = (from: number) => ({ content: [{ type: 'text', text: `liftoff after ${from}` }] });

export const tally = async (client: Client, key: string) => {
  const result = await client.callTool({ name: 'tally', arguments: { key } });
  return (result.content as { text: string }[])[0]!.text;
};

/** How a call ended, or `hung` if it had not after `ms` (a bounded wait, not a timing claim). */
export async function settle<T>(call: Promise<T>, ms = 10_000): Promise<{ result?: T; error?: unknown } | 'hung'> {
  let timer = 0;
  const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), ms)));
  const outcome = call.then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  return Promise.race([outcome, hung]).finally(() => clearTimeout(timer));
}
