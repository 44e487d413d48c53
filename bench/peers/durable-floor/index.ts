/**
 * Benchmark peer "durable-floor": the floor, plus durability. Each session is a SQLite Durable
 * Object; every message of a response is INSERTed as a row (stream, seq, message) before its
 * frame is written to the SSE stream. Nothing awaits the write: ctx.storage.sql.exec is
 * synchronous and the output gate holds the response bytes until the rows commit. Event ids
 * are `<stream>-<seq>`; GET + Last-Event-ID replays the rows after the cursor from the table,
 * then ends the response (every stream is finished within the turn that opened it); GET
 * without one opens an idle standalone stream.
 * Unlike the floor, and like the project and the SDK with an event store, a session that
 * negotiated 2025-11-25 gets a priming event first on every SSE response (`<stream>-0`, or the
 * cursor on a resume; empty data, `retry: 1000`), so a client holds a cursor before any message.
 */
import { DurableObject } from 'cloudflare:workers';
import { initializeResult, jsonError, parseMessage, run, SseWriter, sseHeaders } from '../shared/mini-mcp.ts';

interface Env {
  readonly FLOOR_SESSION: DurableObjectNamespace<FloorSession>;
}

const SERVER_NAME = 'bench-durable-floor';
const NEW_SESSION = 'X-Bench-New-Session';
const COALESCE_BYTES = 16 * 1024;
const RETRY_MS = 1000;

export class FloorSession extends DurableObject<Env> {
  readonly #sql: SqlStorage;
  #exists: boolean | undefined;
  #lastStream: number | undefined;
  #priming: boolean | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
  }

  override async fetch(request: Request): Promise<Response> {
    switch (request.method) {
      case 'POST':
        return this.#post(request);
      case 'GET':
        return this.#resume(request);
      case 'DELETE':
        await this.ctx.storage.deleteAll();
        this.#exists = false;
        this.#lastStream = undefined;
        this.#priming = undefined;
        return new Response(null, { status: 204 });
      default:
        return new Response(null, { status: 405, headers: { Allow: 'GET, POST, DELETE' } });
    }
  }

  get #sessionExists(): boolean {
    this.#exists ??= this.#sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").toArray().length > 0;
    return this.#exists;
  }

  async #post(request: Request): Promise<Response> {
    const message = parseMessage(await request.text());
    if (message === undefined) return jsonError(400, -32700, 'Parse error');
    if (message.method === undefined && !('result' in message || 'error' in message)) {
      return jsonError(400, -32600, 'Invalid Request');
    }
    const creating = request.headers.has(NEW_SESSION);
    if (creating !== (message.method === 'initialize')) {
      return jsonError(400, -32000, creating ? 'Bad Request: Mcp-Session-Id required' : 'Bad Request: session exists', message.id);
    }
    if (creating) this.#create(initializeResult(message, SERVER_NAME) as { protocolVersion: string });
    else if (!this.#sessionExists) return jsonError(404, -32001, 'Session not found', message.id);
    if (message.method === undefined || message.id === undefined || message.id === null) {
      return new Response(null, { status: 202 });
    }
    const stream = this.#nextStream();
    const writer = new SseWriter();
    this.#prime(writer, `${stream}-0`);
    let seq = 0;
    run(message, SERVER_NAME, (json) => {
      seq++;
      this.#sql.exec('INSERT INTO events (stream, seq, message) VALUES (?, ?, ?)', stream, seq, json);
      writer.send(`${stream}-${seq}`, json);
    });
    writer.close();
    const headers = sseHeaders();
    if (creating) headers.set('Mcp-Session-Id', request.headers.get('Mcp-Session-Id')!);
    return new Response(writer.body, { headers });
  }

  #resume(request: Request): Response {
    const cursor = request.headers.get('Last-Event-ID');
    if (cursor === null) return this.#standalone();
    const match = /^([1-9][0-9]*)-(0|[1-9][0-9]*)$/.exec(cursor);
    if (match === null) return jsonError(400, -32000, 'Bad Request: malformed Last-Event-ID');
    if (!this.#sessionExists) return jsonError(404, -32001, 'Session not found');
    const stream = Number(match[1]);
    const after = Number(match[2]);
    const last = this.#sql.exec<{ last: number | null }>('SELECT max(seq) AS last FROM events WHERE stream = ?', stream).one().last;
    if (last === null) return jsonError(409, -32000, `unknown stream ${stream}`);
    if (after > last) return jsonError(409, -32000, `event ${after} is beyond the last event (${last}) of stream ${stream}`);
    const writer = new SseWriter();
    this.#prime(writer, cursor);
    let frames = '';
    for (const row of this.#sql.exec<{ seq: number; message: string }>(
      'SELECT seq, message FROM events WHERE stream = ? AND seq > ? ORDER BY seq',
      stream,
      after,
    )) {
      frames += `id: ${stream}-${row.seq}\ndata: ${row.message}\n\n`;
      if (frames.length >= COALESCE_BYTES) {
        writer.write(frames);
        frames = '';
      }
    }
    if (frames !== '') writer.write(frames);
    writer.close();
    return new Response(writer.body, { headers: sseHeaders() });
  }

  /**
   * GET without a cursor: a standalone stream, held open until the client leaves. Nothing is
   * ever sent on it (the floor's tools only answer their own calls); it is what W6 measures:
   * a session object that holds one idle SSE connection.
   */
  #standalone(): Response {
    if (!this.#sessionExists) return jsonError(404, -32001, 'Session not found');
    const writer = new SseWriter();
    this.#prime(writer, `${this.#nextStream()}-0`);
    return new Response(writer.body, { headers: sseHeaders() });
  }

  #prime(writer: SseWriter, id: string): void {
    this.#priming ??= this.#sql.exec<{ v: string }>("SELECT v FROM meta WHERE k = 'protocol'").one().v >= '2025-11-25';
    if (this.#priming) writer.write(`id: ${id}\nretry: ${RETRY_MS}\ndata: \n\n`);
  }

  #create({ protocolVersion }: { protocolVersion: string }): void {
    this.#sql.exec(
      'CREATE TABLE IF NOT EXISTS events (stream INTEGER NOT NULL, seq INTEGER NOT NULL, message TEXT NOT NULL, PRIMARY KEY (stream, seq)) WITHOUT ROWID',
    );
    this.#sql.exec('CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v NOT NULL)');
    this.#sql.exec("INSERT OR IGNORE INTO meta (k, v) VALUES ('last_stream', 0)");
    this.#sql.exec("INSERT OR IGNORE INTO meta (k, v) VALUES ('protocol', ?)", protocolVersion);
    this.#exists = true;
  }

  #nextStream(): number {
    this.#lastStream ??= this.#sql.exec<{ v: number }>("SELECT v FROM meta WHERE k = 'last_stream'").one().v;
    this.#lastStream++;
    this.#sql.exec("UPDATE meta SET v = ? WHERE k = 'last_stream'", this.#lastStream);
    return this.#lastStream;
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    if (new URL(request.url).pathname !== '/mcp') return jsonError(404, -32000, 'Not Found');
    let sessionId = request.headers.get('Mcp-Session-Id');
    const headers = new Headers(request.headers);
    if (sessionId === null) {
      if (request.method !== 'POST') return jsonError(400, -32000, 'Bad Request: Mcp-Session-Id required');
      sessionId = crypto.randomUUID();
      headers.set('Mcp-Session-Id', sessionId);
      headers.set(NEW_SESSION, '1');
    } else {
      headers.delete(NEW_SESSION);
    }
    const stub = env.FLOOR_SESSION.get(env.FLOOR_SESSION.idFromName(sessionId));
    return stub.fetch(new Request(request, { headers }));
  },
} satisfies ExportedHandler<Env>;
