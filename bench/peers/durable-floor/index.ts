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
 *
 * Tasks (T1, T2), the floor of the project's Tasks extension: a 2026-07-28 `tools/call` of
 * `work` that declares the extension gets a random 128-bit task id and a FloorTask object
 * addressed by it, which creates its table, INSERTs the task (`working`), answers the
 * CreateTaskResult, and in its next turn UPDATEs the row to `completed` with the result (the
 * tool has nothing to do). `tasks/get` reads the row.
 *
 * Task streams (T3), the floor of SEP-2694 on one object per task: `progress_task {n}` creates
 * the task as `work` does and an events table, and from its next turn INSERTs each progress
 * event (one row each, the `notifications/tasks/event` text itself) before writing it to any
 * stream open on the task, pausing one macrotask after the first event and every 512th (else
 * nothing else is served meanwhile), then UPDATEs the task to `completed`. `tasks/stream` (no
 * `after`) answers from the object: seq 0 (the creation) and the stored events, then, while the
 * task works, the rest as they are stored; then the `completed` status and the empty result.
 * The same frames as ours' (the types under its prefix, as the harness reads them), but for the
 * terminal event, which carries no `statusMessage`.
 *
 * Nothing else of 2026-07-28 is served (every other request goes the 2025 way, as before): no
 * SDK, no TTL alarm, no stored call, no principal in the address, no check that `Mcp-Name`
 * matches the id.
 *
 * Both object classes count what Cloudflare bills them for (B1) through ../shared/billing.ts,
 * served at GET /bench/billing and off unless B1 turns it on.
 */
import { DurableObject } from 'cloudflare:workers';
import { countRequest, instrument, serveBilling } from '../shared/billing.ts';
import { initializeResult, jsonError, type Message, parseMessage, run, SseWriter, sseHeaders } from '../shared/mini-mcp.ts';
import { MODERN, newTaskId, storeCompleted, storeWorkingTask, TASK_ID, TASKS_EXTENSION } from './task-rows.ts';

interface Env {
  readonly FLOOR_SESSION: DurableObjectNamespace<FloorSession>;
  readonly FLOOR_TASK: DurableObjectNamespace<FloorTask>;
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
    super(instrument(ctx, 'FloorSession'), env);
    this.#sql = ctx.storage.sql;
  }

  override async fetch(request: Request): Promise<Response> {
    countRequest('FloorSession', 'fetch');
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
    const answered = this.answer(message, (json) => {
      seq++;
      this.#sql.exec('INSERT INTO events (stream, seq, message) VALUES (?, ?, ?)', stream, seq, json);
      writer.send(`${stream}-${seq}`, json);
    });
    if (answered !== undefined) await answered;
    writer.close();
    const headers = sseHeaders();
    if (creating) headers.set('Mcp-Session-Id', request.headers.get('Mcp-Session-Id')!);
    return new Response(writer.body, { headers });
  }

  /**
   * The messages a request produces, handed to `emit` in order, its response last: here the
   * floor's own few lines of MCP, synchronously. The SDK floor (../sdk-floor) answers through
   * an McpServer instead and returns when the response was emitted.
   */
  protected answer(message: Message, emit: (json: string) => void): Promise<void> | undefined {
    run(message, SERVER_NAME, emit);
    return undefined;
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

const TTL_MS = 3_600_000;
const POLL_INTERVAL_MS = 1_000;

/** One task: one row in its own object's SQLite; a `progress_task`'s events, one row each. */
export class FloorTask extends DurableObject<Env> {
  readonly #sql: SqlStorage;
  /** Streams following the task while it works: each gets every event as it is stored. */
  readonly #live = new Set<{ readonly writer: SseWriter; readonly id: Message['id'] }>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(instrument(ctx, 'FloorTask'), env);
    this.#sql = ctx.storage.sql;
  }

  override async fetch(request: Request): Promise<Response> {
    countRequest('FloorTask', 'fetch');
    const { id, taskId, n } = (await request.json()) as { id: Message['id']; taskId: string; n?: number };
    switch (new URL(request.url).pathname) {
      case '/create':
        return this.#create(id, taskId, n);
      case '/stream':
        return this.#stream(id);
      default:
        return this.#get(id);
    }
  }

  /** `n`: a `progress_task`'s count of progress events; undefined for `work`. */
  #create(id: Message['id'], taskId: string, n: number | undefined): Response {
    const now = Date.now();
    storeWorkingTask(this.#sql, taskId, now, n !== undefined);
    // The tool runs in a later turn. The answer is held by the output gate until the CREATE and
    // the INSERT commit (one implicit transaction, this turn); the outcome is stored in a later
    // turn, its own write, as a tool's outcome would be. A `progress_task` pauses after its first
    // event, or a loop that never yields would hold the answer until it ended (measured: a 32.5
    // ms CreateTaskResult for 5,000 events), since the timer runs before it leaves; and every
    // 512th, or a stream could not be opened until it ended (the first event 30.7 ms after
    // tasks/stream). 512: swept, bench/README.md, "The floor of T3".
    setTimeout(async () => {
      try {
        for (let progress = 1; progress <= (n ?? 0); progress++) {
          const data = taskEvent(taskId, progress, 'progress', { progress, total: n });
          this.#sql.exec('INSERT INTO events (seq, data) VALUES (?, ?)', progress, data);
          for (const { writer } of this.#live) writer.write(`data: ${data}\n\n`);
          if (progress === 1 || progress % 512 === 0) await scheduler.wait(0);
        }
        storeCompleted(this.#sql, { content: [{ type: 'text', text: 'done' }] });
        for (const stream of this.#live) this.#end(stream, taskId, (n ?? 0) + 1);
      } catch (error) {
        // Not stored: the streams end without their result (the harness reports it), and the
        // task stays working, as an instance that died would leave it.
        console.error('floor task failed', error);
        for (const { writer } of this.#live) writer.close();
      } finally {
        this.#live.clear();
      }
    }, 0);
    return taskAnswer(id, { task_id: taskId, status: 'working', created_at: now, updated_at: now, result: null }, 'task');
  }

  /** `tasks/stream` from the first event: what is stored, then, while the task works, the rest as it is stored. */
  #stream(id: Message['id']): Response {
    const row = this.#row();
    if (row === undefined) return jsonError(200, -32602, 'Failed to retrieve task: Task not found', id);
    const writer = new SseWriter();
    let frames = `data: ${taskEvent(row.task_id, 0, 'status', { status: 'working' })}\n\n`;
    let last = 0;
    for (const event of this.#events()) {
      frames += `data: ${event.data}\n\n`;
      last = event.seq;
      if (frames.length >= COALESCE_BYTES) {
        writer.write(frames);
        frames = '';
      }
    }
    if (frames !== '') writer.write(frames);
    if (row.status === 'working') this.#live.add({ writer, id });
    else this.#end({ writer, id }, row.task_id, last + 1);
    return new Response(writer.body, { headers: sseHeaders() });
  }

  /** The terminal event at `seq`, the stream's empty result, and its end. */
  #end({ writer, id }: { readonly writer: SseWriter; readonly id: Message['id'] }, taskId: string, seq: number): void {
    writer.write(`data: ${taskEvent(taskId, seq, 'status', { status: 'completed', result: 'tasks/get' })}\n\n`);
    writer.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { resultType: 'complete' } })}\n\n`);
    writer.close();
  }

  /** The stored events, in order (none for a `work` task, which has no events table). */
  #events(): Iterable<{ seq: number; data: string }> {
    try {
      return this.#sql.exec<{ seq: number; data: string }>('SELECT seq, data FROM events ORDER BY seq');
    } catch {
      return [];
    }
  }

  #row(): TaskRow | undefined {
    try {
      return this.#sql.exec('SELECT * FROM task').toArray()[0] as TaskRow | undefined;
    } catch {
      return undefined; // No table: no task was ever created here.
    }
  }

  #get(id: Message['id']): Response {
    const row = this.#row();
    if (row === undefined) return jsonError(200, -32602, 'Failed to retrieve task: Task not found', id);
    return taskAnswer(id, row, 'complete');
  }
}

type TaskRow = { task_id: string; status: string; created_at: number; updated_at: number; result: string | null };

/** A `notifications/tasks/event`, as ours frames one (src/core/task-events.ts), of type `<prefix>.<kind>`. */
function taskEvent(taskId: string, seq: number, kind: 'status' | 'progress', payload: Record<string, unknown>): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    method: 'notifications/tasks/event',
    params: { seq, taskId, type: `mcp-edge-sessions.${kind}`, payload, _meta: { 'io.modelcontextprotocol/related-task': { taskId } } },
  });
}

function taskAnswer(id: Message['id'], row: TaskRow, resultType: 'task' | 'complete'): Response {
  const result = {
    resultType,
    taskId: row.task_id,
    status: row.status,
    createdAt: new Date(row.created_at).toISOString(),
    lastUpdatedAt: new Date(row.updated_at).toISOString(),
    ttlMs: TTL_MS,
    pollIntervalMs: POLL_INTERVAL_MS,
    ...(row.result !== null && { result: JSON.parse(row.result) }),
  };
  return Response.json({ jsonrpc: '2.0', id, result });
}

const TASK_TOOLS = ['work', 'progress_task'];

/**
 * A 2026-07-28 POST the floor serves as a task (`tools/call` of `work` or `progress_task`,
 * declared; `tasks/get`; `tasks/stream`), else undefined.
 */
async function serveTask(request: Request, env: Env): Promise<Response | undefined> {
  if (request.method !== 'POST') return undefined;
  const method = request.headers.get('Mcp-Method');
  const call = method === 'tools/call' && TASK_TOOLS.includes(request.headers.get('Mcp-Name') ?? '');
  if (method !== 'tasks/get' && method !== 'tasks/stream' && !call) return undefined;
  const message = parseMessage(await request.text());
  const declared = message?.params?._meta?.['io.modelcontextprotocol/clientCapabilities']?.extensions?.[TASKS_EXTENSION];
  if (message === undefined || typeof declared !== 'object' || declared === null) {
    return jsonError(400, -32600, 'the floor serves only tasks on 2026-07-28, to clients that declare the extension', message?.id);
  }
  let route = method === 'tasks/stream' ? '/stream' : '/get';
  let taskId = message.params?.taskId;
  let n: number | undefined;
  if (method === 'tools/call') {
    if (message.params?.name === 'progress_task') {
      n = (message.params.arguments as { n?: unknown } | undefined)?.n as number;
      if (!Number.isSafeInteger(n) || n < 0 || n > 1_000_000)
        return jsonError(200, -32602, 'n: an integer from 0 to 1,000,000', message.id);
    }
    route = '/create';
    taskId = newTaskId();
  } else if (typeof taskId !== 'string' || !TASK_ID.test(taskId)) {
    return jsonError(200, -32602, 'Failed to retrieve task: Task not found', message.id);
  }
  const stub = env.FLOOR_TASK.get(env.FLOOR_TASK.idFromName(taskId));
  return stub.fetch(`https://floor-task${route}`, { method: 'POST', body: JSON.stringify({ id: message.id ?? null, taskId, n }) });
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const { pathname } = new URL(request.url);
    const billing = serveBilling(request);
    if (billing !== undefined) return billing;
    if (pathname !== '/mcp') return jsonError(404, -32000, 'Not Found');
    // Only a 2026-07-28 request can be a task: the 2025 path pays one header read, no await.
    if (request.headers.get('MCP-Protocol-Version') === MODERN) {
      const task = await serveTask(request, env);
      if (task !== undefined) return task;
    }
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
