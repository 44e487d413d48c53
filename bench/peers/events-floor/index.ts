/**
 * Benchmark peer "events-floor": the least that carries an MCP Events type (SEP-3415, draft) on
 * one SQLite Durable Object, the floor E1 and E2 set ours against (bench/README.md, *E1/E2*).
 *
 * A bare Worker (no SDK) and ONE object per event type (`FloorEventLog`, addressed by the type's
 * name; the floor declares one type, `demo.note`, data `{text, n}`). It speaks the wire ours
 * serves for the three operations the E workloads use, on 2026-07-28 POSTs routed by their
 * `Mcp-Method` header, the body forwarded to the object unread:
 * - emit: a `tools/call` of `post_note {text}`. The object INSERTs one row (seq INTEGER PRIMARY
 *   KEY, payload) and writes the occurrence to every stream open on it, then answers the call
 *   with its eventId. Nothing awaits the write: `sql.exec` is synchronous and the output gate
 *   holds the answer and the stream bytes until the row commits, so the call returns after the
 *   insert, as `emit` must.
 * - push: `events/stream {name}`. The object answers an SSE response: `notifications/events/active`
 *   first, the stored occurrences after the cursor (if one was given), then each occurrence as it
 *   is stored, as `notifications/events/event` frames, every one with the request's id as
 *   `_meta["io.modelcontextprotocol/subscriptionId"]`.
 * - poll: `events/poll {name, cursor}`. One SELECT of the rows after the cursor (the head when it
 *   is null) and the answer; nothing written.
 *
 * The stream is held by the object, not by the Worker: the least code and the shortest path (the
 * occurrence leaves in the turn that stored it, no second hop), so it is the floor of E1's
 * latency. What it gives up is what ours is built for: while a stream is open the object has a
 * request in flight and cannot hibernate (billed duration on the platform, W7's subject). Ours
 * holds its streams in the Worker with the log's object hibernating.
 *
 * Left out, as a floor leaves out all it can: cursors are the seq in plain digits (ours seals a
 * position and the log's identity), no deduplication by eventId (ours keeps an index for it), no
 * retention or cleanup (the table only grows), no heartbeats, no `maxAgeMs`, no argument filter
 * (`contains`), no `events/list`, no per-principal bounds, no authorization.
 *
 * The object counts what Cloudflare bills it for through ../shared/billing.ts (B1's counters),
 * served at GET /bench/billing and off unless a workload turns it on. Unlike a session's or a
 * task's object, the log is constructed once, at its first use, before any workload counts: it
 * wraps its storage at the first request that finds counting on (`instrumentLate`).
 */
import { DurableObject } from 'cloudflare:workers';
import { countRequest, instrument, instrumentLate, serveBilling } from '../shared/billing.ts';
import { jsonError, type Message, parseMessage, SseWriter, sseHeaders } from '../shared/mini-mcp.ts';

interface Env {
  readonly FLOOR_EVENT_LOG: DurableObjectNamespace<FloorEventLog>;
}

const MODERN = '2026-07-28';
/** The one event type the floor declares (as the demo and ours' peer do) and the tool that emits it. */
const TYPE_NAME = 'demo.note';
const TOOL = 'post_note';
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
/** SEP-3415's NotFound, as src/core/events-wire.ts numbers it (the floor imports nothing of src/). */
const NOT_FOUND = -32023;
const NEXT_POLL_MS = 1_000;
const DEFAULT_MAX_EVENTS = 100;
const MAX_EVENTS = 1_000;

interface Stream {
  readonly writer: SseWriter;
  readonly id: Message['id'];
}

/** One event type's log: one row per occurrence, and the streams following it. */
export class FloorEventLog extends DurableObject<Env> {
  readonly #sql: SqlStorage;
  readonly #streams = new Set<Stream>();
  /** The last seq stored: this object is the log's only writer. */
  #head: number;

  constructor(ctx: DurableObjectState, env: Env) {
    super(instrument(ctx, 'FloorEventLog'), env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec('CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, payload TEXT NOT NULL)');
    this.#head = this.#sql.exec<{ head: number | null }>('SELECT max(seq) AS head FROM events').one().head ?? 0;
  }

  override async fetch(request: Request): Promise<Response> {
    countRequest('FloorEventLog', 'fetch');
    // The type's one log lives for the whole run: counted from the first request with counting on.
    instrumentLate(this.ctx, 'FloorEventLog');
    const message = parseMessage(await request.text());
    if (message === undefined) return jsonError(400, -32700, 'Parse error');
    const id = message.id ?? null;
    if (message.method === 'tools/call') return this.#emit(id, message.params?.arguments?.text);
    if (message.params?.name !== TYPE_NAME) return jsonError(200, NOT_FOUND, `NotFound: no event type ${message.params?.name}`, id);
    const after = positionOf(message.params?.cursor, this.#head);
    if (after === undefined) return jsonError(200, -32602, 'InvalidParams: not a cursor of this log', id);
    if (message.method === 'events/stream') return this.#stream(id, after);
    return this.#poll(id, after, message.params?.maxEvents);
  }

  #emit(id: Message['id'], text: unknown): Response {
    if (typeof text !== 'string') return jsonError(200, -32602, `${TOOL}: text must be a string`, id);
    const seq = ++this.#head;
    const occurrence = { eventId: `${seq}`, name: TYPE_NAME, timestamp: new Date().toISOString(), data: { text, n: seq } };
    this.#sql.exec('INSERT INTO events (seq, payload) VALUES (?, ?)', seq, JSON.stringify(occurrence));
    for (const stream of this.#streams) stream.writer.write(eventFrame(stream.id, occurrence, seq));
    const result = {
      resultType: 'complete',
      content: [{ type: 'text', text: occurrence.eventId }],
      structuredContent: { eventId: occurrence.eventId },
    };
    return Response.json({ jsonrpc: '2.0', id, result });
  }

  /** `events/stream`: active, what is stored after `after`, then each occurrence as it is stored. */
  #stream(id: Message['id'], after: number): Response {
    const stream: Stream = { writer: new SseWriter(() => this.#streams.delete(stream)), id };
    let frames = frame(id, 'notifications/events/active', { cursor: `${after}`, truncated: false });
    if (after < this.#head)
      for (const { seq, payload } of this.#rowsAfter(after, this.#head - after)) frames += eventFrame(id, JSON.parse(payload), seq);
    stream.writer.write(frames);
    this.#streams.add(stream);
    return new Response(stream.writer.body, { headers: sseHeaders() });
  }

  /** `events/poll`: the occurrences after `after`, at most `maxEvents`, and the cursor after the last. */
  #poll(id: Message['id'], after: number, maxEvents: unknown): Response {
    const limit =
      Number.isSafeInteger(maxEvents) && (maxEvents as number) > 0 ? Math.min(maxEvents as number, MAX_EVENTS) : DEFAULT_MAX_EVENTS;
    const rows = this.#rowsAfter(after, limit + 1);
    const hasMore = rows.length > limit;
    const events = rows.slice(0, limit).map((row) => JSON.parse(row.payload));
    const cursor = `${events.length === 0 ? after : rows[events.length - 1]!.seq}`;
    const result = { resultType: 'complete', events, cursor, truncated: false, hasMore, nextPollMs: hasMore ? 0 : NEXT_POLL_MS };
    return Response.json({ jsonrpc: '2.0', id, result });
  }

  /** Always one SELECT, also for an empty answer: the read a poll at the head costs. */
  #rowsAfter(after: number, limit: number): { seq: number; payload: string }[] {
    return this.#sql
      .exec<{ seq: number; payload: string }>(
        'SELECT seq, payload FROM events WHERE seq > ? ORDER BY seq LIMIT ?',
        after,
        Math.max(limit, 0),
      )
      .toArray();
  }
}

/** A cursor's position (the last seq delivered): null is "from now", the head; else the seq's digits, at most the head. */
function positionOf(cursor: unknown, head: number): number | undefined {
  if (cursor === undefined || cursor === null) return head;
  if (typeof cursor !== 'string' || !/^(0|[1-9][0-9]{0,15})$/.test(cursor)) return undefined;
  const seq = Number(cursor);
  return seq <= head ? seq : undefined;
}

function frame(id: Message['id'], method: string, params: Record<string, unknown>): string {
  return `data: ${JSON.stringify({ jsonrpc: '2.0', method, params: { ...params, _meta: { [SUBSCRIPTION_ID]: id } } })}\n\n`;
}

const eventFrame = (id: Message['id'], occurrence: Record<string, unknown>, seq: number) =>
  frame(id, 'notifications/events/event', { ...occurrence, cursor: `${seq}` });

/** The 2026-07-28 methods the floor serves; the rest is refused. */
const SERVED = new Set(['tools/call', 'events/stream', 'events/poll']);

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const billing = serveBilling(request);
    if (billing !== undefined) return billing;
    if (new URL(request.url).pathname !== '/mcp') return jsonError(404, -32000, 'Not Found');
    const method = request.headers.get('Mcp-Method') ?? '';
    if (request.method !== 'POST' || request.headers.get('MCP-Protocol-Version') !== MODERN || !SERVED.has(method)) {
      return jsonError(400, -32600, `the events floor serves only 2026-07-28 POSTs of tools/call ${TOOL}, events/stream and events/poll`);
    }
    if (method === 'tools/call' && request.headers.get('Mcp-Name') !== TOOL)
      return jsonError(200, -32602, `no tool ${request.headers.get('Mcp-Name')}`);
    // One type, one object: the tool emits `demo.note`, and poll and stream name it (checked by the object).
    return env.FLOOR_EVENT_LOG.get(env.FLOOR_EVENT_LOG.idFromName(TYPE_NAME)).fetch(request);
  },
} satisfies ExportedHandler<Env>;
