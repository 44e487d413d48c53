/**
 * What the two floor peers share: just enough MCP to answer initialize, tools/list and the two
 * benchmark tools, and an SSE writer that frames and chunks exactly like the project's
 * SseConnection (src/session/connection.ts): `id: <id>\ndata: <json>\n\n` per message, the
 * first frame of a burst at once, the rest coalesced into chunks of up to 16 KiB, flushed at the
 * latest when the current turn of the event loop ends. No priming event, no heartbeats.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Message = { jsonrpc?: string; id?: string | number | null; method?: string; params?: any; result?: Json; error?: Json };

export const SUPPORTED_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];

const encoder = new TextEncoder();
const COALESCE_BYTES = 16 * 1024;

export class SseWriter {
  readonly body: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #unflushed = '';
  #flushTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  readonly #onCancel: () => void;

  constructor(onCancel: () => void = () => {}) {
    this.#onCancel = onCancel;
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      cancel: () => this.#end(false),
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  send(id: string, data: string): void {
    this.write(`id: ${id}\ndata: ${data}\n\n`);
  }

  /** Already framed SSE text (a replay). */
  write(frames: string): void {
    if (this.#closed) return;
    if (this.#flushTimer === undefined) {
      this.#enqueue(frames);
      this.#flushTimer = setTimeout(() => {
        this.#flushTimer = undefined;
        this.#flush();
      }, 0);
      return;
    }
    this.#unflushed += frames;
    if (this.#unflushed.length >= COALESCE_BYTES) this.#flush();
  }

  close(): void {
    this.#end(true);
  }

  #enqueue(chunk: string): void {
    try {
      this.#controller.enqueue(encoder.encode(chunk));
    } catch {
      this.#end(false);
    }
  }

  #flush(): void {
    if (this.#closed || this.#unflushed === '') return;
    const chunk = this.#unflushed;
    this.#unflushed = '';
    this.#enqueue(chunk);
  }

  #end(closeBody: boolean): void {
    if (this.#closed) return;
    if (closeBody) this.#flush();
    this.#unflushed = '';
    this.#closed = true;
    if (this.#flushTimer !== undefined) clearTimeout(this.#flushTimer);
    if (closeBody) {
      try {
        this.#controller.close();
      } catch {
        // cancelled by the reader
      }
    }
    if (!closeBody) this.#onCancel();
  }
}

export const TOOLS = [
  {
    name: 'echo',
    description: 'Returns its text.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  {
    name: 'progress',
    description: 'Sends n progress notifications as fast as possible, then returns "done <n>".',
    inputSchema: { type: 'object', properties: { n: { type: 'integer', minimum: 0, maximum: 1_000_000 } }, required: ['n'] },
  },
];

export function jsonError(status: number, code: number, message: string, id: Message['id'] = null): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
}

export function sseHeaders(extra: Record<string, string> = {}): Headers {
  return new Headers({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', ...extra });
}

export function parseMessage(text: string): Message | undefined {
  try {
    const value = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

export function initializeResult(message: Message, name: string): Json {
  const requested = message.params?.protocolVersion;
  return {
    protocolVersion: SUPPORTED_VERSIONS.includes(requested) ? requested : SUPPORTED_VERSIONS[0]!,
    capabilities: { tools: {} },
    serverInfo: { name, version: '0.0.0' },
  };
}

/**
 * The messages a request produces, in order, handed to `emit` one at a time as JSON text;
 * `emit` returns nothing, the loop never waits. Every path ends with exactly one response.
 */
export function run(message: Message, serverName: string, emit: (json: string) => void): void {
  const id = message.id ?? null;
  const respond = (result: Json) => emit(JSON.stringify({ jsonrpc: '2.0', id, result }));
  const fail = (code: number, text: string) => emit(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message: text } }));
  switch (message.method) {
    case 'initialize':
      respond(initializeResult(message, serverName));
      return;
    case 'ping':
      respond({});
      return;
    case 'tools/list':
      respond({ tools: TOOLS as unknown as Json });
      return;
    case 'tools/call': {
      const name = message.params?.name;
      const args = message.params?.arguments ?? {};
      if (name === 'echo' && typeof args.text === 'string') {
        respond({ content: [{ type: 'text', text: args.text }] });
        return;
      }
      if (name === 'progress' && Number.isSafeInteger(args.n) && args.n >= 0 && args.n <= 1_000_000) {
        const n: number = args.n;
        const progressToken = message.params?._meta?.progressToken;
        if (progressToken !== undefined) {
          for (let progress = 1; progress <= n; progress++) {
            emit(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress, total: n } }));
          }
        }
        respond({ content: [{ type: 'text', text: `done ${n}` }] });
        return;
      }
      fail(-32602, `invalid tools/call: ${String(name)}`);
      return;
    }
    default:
      fail(-32601, `method not found: ${String(message.method)}`);
  }
}
