/**
 * The fuzzer behind test/fuzz/edge-fuzz.test.ts (a few thousand requests in workerd) and
 * scripts/faults/fuzz.mjs (100,000 against `wrangler dev`): fast-check generates whole HTTP requests
 * — methods, headers, bodies, session ids, cursors — and sequences of them (fuzz-actions.ts,
 * fuzz-bodies.ts), a world (this file) runs them against any `fetch` and judges every answer
 * against four invariants:
 *
 * 1. never a 5xx;
 * 2. nothing internal in a body: no stack frame, file path or `SomethingError:`; every error
 *    body is the wire contract's JSON-RPC error (`application/json`), 202 and 204 are empty;
 * 3. never a session without `initialize`: a new `Mcp-Session-Id` only answers a 200 to a POST
 *    of one initialize request, and a legacy request naming an id never issued (or deleted)
 *    gets a 4xx of the edge or 404 (never 2xx, never a cursor verdict);
 * 4. valid sessions unaffected: a session opened before the fuzz (`openWitness`, in
 *    fuzz-witness.ts) still answers ping and an echo, and replays its stream identically, after
 *    it (`checkWitness`).
 *
 * The fuzz-*.ts files are plain TypeScript with erasable types only, and import no
 * `cloudflare:*`, so Node 24 runs them as is from scripts/faults/fuzz.mjs, and the test runs them in workerd.
 */
import { type Action, BODY_METHOD, BODY_NAME, BODY_NAME_B64, type CursorRef, SESSION_VERSION, type SessionRef } from './fuzz-actions.ts';
import { errorShapeProblem, headersOf, isObject, readAnswer, WHOLE_ANSWER_MS } from './fuzz-answers.ts';
import { CLIENT_REFUSAL, type Fetcher, LEGACY_VERSIONS, MODERN_VERSION, type Tally, type Violation } from './fuzz-types.ts';

interface KnownSession {
  readonly id: string;
  readonly version: string;
  /** Event ids this session's SSE answers carried, newest last. */
  readonly cursors: string[];
  /** Its epoch (`Mcp-Session-Epoch` of its initialize answer), once known. */
  epoch?: string;
}

export interface WorldOptions {
  readonly fetch: Fetcher;
  /** The endpoint's origin, e.g. `http://localhost` (workerd) or `http://127.0.0.1:8802`. */
  readonly origin: string;
  /** The longest an SSE answer is read: a standalone stream never ends by itself. */
  readonly readMs?: number;
  /** The quiet time after which an open SSE answer is left. */
  readonly idleMs?: number;
  /** Violations kept in full for the report. */
  readonly keep?: number;
}

const MAX_LIVE = 40;
const MAX_CURSORS = 24;
const HUGE_BYTES = 4 * 1024 * 1024 + 1;

/** Text that betrays internals: stack frames, source paths, error class names, serialized errors. */
const LEAKS: readonly RegExp[] = [
  /\bat (?:async )?[\w$.<>[\] ]*\(?(?:file:|\/|[A-Za-z]:\\|node:|<anonymous>|\w[\w./-]*\.(?:m?[jt]s|cjs))/,
  /\.(?:m?[jt]s|cjs|mts):\d+/,
  /file:\/\//,
  /(?:^|[\s"'(=])\/(?:work|home|root|src|tmp|usr|var|opt|Users)\//,
  /node_modules|\.wrangler|workerd\/|miniflare/i,
  /\b(?:Type|Reference|Syntax|Range|Eval|URI|Aggregate|Internal|Sqlite|SQLITE|Zod|Mcp|Protocol|DOMException|Http)?Error: /,
  /"stack"\s*:/,
  /\bSQLITE_[A-Z]+|\bno such (?:table|column)\b/,
];

export class FuzzWorld {
  readonly tally: Tally = { requests: 0, fiveXX: 0, leaks: 0, withoutInitialize: 0, broken: 0, skipped: 0, resumed: 0 };
  readonly violations: Violation[] = [];
  readonly statuses = new Map<string, number>();
  /** Error answers by status and message (numbers and quoted values blanked): what the fuzz mostly hits. */
  readonly refusals = new Map<string, number>();
  /** The first request and answer of each kind of refusal. */
  readonly examples = new Map<string, string>();
  readonly live: KnownSession[] = [];
  /** Every id the server issued, and the ones deleted since (with when the deletion was seen). */
  readonly issued = new Set<string>();
  readonly deleted = new Map<string, number>();
  /** Sessions opened before the fuzz and checked after it: the fuzz may use them, never delete them. */
  readonly witnesses: KnownSession[] = [];
  readonly #options: Required<WorldOptions>;
  readonly #encoder = new TextEncoder();
  /**
   * What requests said that looks like a leak (a `file://` resource URI, say): a server may
   * fairly echo it back, in this answer or in a later one (an error stored in a stream and
   * replayed on resume), so it is not held against it.
   */
  readonly #echoable = new Set<string>();

  constructor(options: WorldOptions) {
    this.#options = { readMs: 2_000, idleMs: 150, keep: 20, ...options };
  }

  /** A session of the pool for the fuzz to use (and abuse). */
  adopt(session: { id: string; version: string; epoch?: string }): void {
    this.issued.add(session.id);
    this.live.push({ id: session.id, version: session.version, cursors: [], epoch: session.epoch });
    if (this.live.length > MAX_LIVE) this.live.shift();
  }

  /** Runs one action and judges its answer. `sent`: false if the client would not send it (not counted). */
  async run(action: Action): Promise<{ sent: boolean; violations: Violation[] }> {
    const built = this.#build(action);
    if (built === undefined) {
      this.tally.skipped++;
      return { sent: false, violations: [] };
    }
    const { request, describe, target, bodyText, headerText, streamed } = built;
    for (const pattern of LEAKS) {
      for (const match of `${bodyText}\n${headerText}`.matchAll(new RegExp(pattern.source, `${pattern.flags}g`)))
        this.#echoable.add(match[0]);
    }
    const sentAt = performance.now();
    let response: Response;
    try {
      response = await this.#options.fetch(request, { streamed });
    } catch (error) {
      // The client would not send it (a header or method its HTTP stack refuses): not the server's doing.
      if (error instanceof Error && error.name === CLIENT_REFUSAL) {
        this.tally.skipped++;
        return { sent: false, violations: [] };
      }
      // No answer at all: the Worker threw out of fetch (workerd), or the server hung up or hung.
      this.tally.requests++;
      const violation: Violation = { kind: 'fiveXX', what: `no answer: ${String(error)}`, request: describe, answer: '' };
      this.tally.fiveXX++;
      if (this.violations.length < this.#options.keep) this.violations.push(violation);
      return { sent: true, violations: [violation] };
    }
    this.tally.requests++;
    const answer = await readAnswer(
      response,
      action.method.toUpperCase() === 'GET' ? this.#options.idleMs : 1_000,
      this.#options.readMs,
      () => built.leave.abort(),
    );
    const key = `${action.method.toUpperCase()} ${response.status}`;
    if (response.headers.get('Mcp-Stream-Resumed') === 'true' && request.headers.has('Last-Event-ID')) this.tally.resumed++;
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
    if (response.status >= 400) {
      const message = /"message":"((?:[^"\\]|\\.){0,80})/.exec(answer.text)?.[1]?.replace(/\\?"[^"]*\\?"|\d+/g, '_') ?? '';
      const note = `${response.status} ${message}`;
      this.refusals.set(note, (this.refusals.get(note) ?? 0) + 1);
      if (!this.examples.has(note)) this.examples.set(note, `${describe}\n  → ${answer.text.slice(0, 1_000)}`);
    }
    const found = this.#judge(action, response, answer, { sentAt, target, bodyText, headerText });
    this.#learn(action, response, answer, target);
    for (const v of found) {
      this.tally[v.kind]++;
      if (this.violations.length < this.#options.keep) {
        this.violations.push({
          ...v,
          request: describe,
          answer: `${response.status} ${JSON.stringify(headersOf(response))} ${answer.text.slice(0, 400)}`,
        });
      }
    }
    return {
      sent: true,
      violations: found.map((v) => ({ ...v, request: describe, answer: `${response.status} ${answer.text.slice(0, 400)}` })),
    };
  }

  #sessionOf(ref: SessionRef): { id: string | undefined; known: KnownSession | undefined } {
    switch (ref.kind) {
      case 'none':
        return { id: undefined, known: undefined };
      case 'live': {
        const known = this.live.length === 0 ? this.witnesses[0] : this.live[ref.pick % this.live.length];
        return { id: known?.id, known };
      }
      case 'witness': {
        const known = this.witnesses[ref.pick % Math.max(1, this.witnesses.length)];
        return { id: known?.id, known };
      }
      case 'deleted': {
        const gone = [...this.deleted.keys()];
        return { id: gone.length === 0 ? 'A'.repeat(43) : gone[ref.pick % gone.length], known: undefined };
      }
      case 'literal':
        return { id: ref.value, known: undefined };
    }
  }

  #cursorOf(ref: CursorRef, known: KnownSession | undefined): string | undefined {
    if (ref.kind === 'none') return undefined;
    if (ref.kind === 'literal') return ref.value;
    if (ref.kind === 'shaped') {
      const own = Number(known?.epoch ?? known?.cursors[0]?.split('-')[0] ?? 1);
      const epoch = [own, own + 1, 1, 0][ref.epoch % 4];
      return `${epoch}-${ref.stream}-${ref.seq}`;
    }
    const pool = ref.foreign || known === undefined ? this.live.flatMap((s) => (s === known ? [] : s.cursors)) : known.cursors;
    const real = pool.length === 0 ? '1-1-0' : pool[ref.pick % pool.length]!;
    return mutateCursor(real, ref.mutation);
  }

  #build(action: Action) {
    const method = action.method;
    const upper = method.toUpperCase();
    const { id, known } = this.#sessionOf(action.session);
    const bodyText = action.body.kind === 'text' ? action.body.text : '';
    let parsed: unknown;
    try {
      parsed = JSON.parse(bodyText);
    } catch {
      parsed = undefined;
    }
    const first = Array.isArray(parsed) ? parsed[0] : parsed;
    const bodyMethod = isObject(first) && typeof first.method === 'string' ? first.method : 'ping';
    const params = isObject(first) && isObject(first.params) ? first.params : {};
    const bodyName = [params.name, params.uri, params.taskId].find((v) => typeof v === 'string') as string | undefined;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(action.headers)) {
      if (value === undefined) continue;
      const resolved =
        value === SESSION_VERSION
          ? (known?.version ?? '2025-11-25')
          : value === BODY_METHOD
            ? bodyMethod
            : value === BODY_NAME
              ? bodyName
              : value === BODY_NAME_B64
                ? bodyName === undefined
                  ? undefined
                  : `=?base64?${base64(this.#encoder.encode(bodyName))}?=`
                : value;
      // Header values are byte strings without control characters: a name with any is sent base64'd.
      if (resolved !== undefined && /^[\x20-\x7e]*$/.test(resolved)) headers[name] = resolved;
    }
    if (id !== undefined) headers['Mcp-Session-Id'] = id;
    const cursor = this.#cursorOf(action.cursor, known);
    if (cursor !== undefined) headers['Last-Event-ID'] = cursor;
    let body: BodyInit | undefined;
    let bodyBytes: Uint8Array | undefined;
    let stream = false;
    switch (action.body.kind) {
      case 'none':
        break;
      case 'text':
        bodyBytes = this.#encoder.encode(action.body.text);
        stream = action.body.stream;
        break;
      case 'bytes':
        bodyBytes = action.body.bytes;
        stream = action.body.stream;
        break;
      case 'huge':
        bodyBytes = new Uint8Array(HUGE_BYTES).fill(0x20);
        bodyBytes.set(this.#encoder.encode('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"'));
        stream = action.body.stream;
        break;
    }
    if (bodyBytes !== undefined) body = stream ? streamOf(bodyBytes) : bodyBytes;
    const target = { method: upper, sessionId: id, headers, parsed };
    const describe = `${method} ${action.path} ${JSON.stringify(headers)} ${action.body.kind === 'huge' ? `<${HUGE_BYTES} bytes>` : action.body.kind === 'bytes' ? `bytes[${[...action.body.bytes].join(',')}]` : JSON.stringify(bodyText.slice(0, 600))}${stream ? ' (streamed, no Content-Length)' : ''}`;
    try {
      // The client's leaving reaches the Worker through the request's signal, as in production.
      const leave = new AbortController();
      const request = new Request(`${this.#options.origin}${action.path}`, {
        method,
        headers,
        signal: leave.signal,
        ...(body !== undefined && { body, duplex: 'half' }),
      } as RequestInit);
      return { request, describe, target, bodyText, headerText: Object.values(headers).join('\n'), streamed: stream, leave };
    } catch {
      return undefined; // a method or header this client's fetch will not send
    }
  }

  #judge(
    action: Action,
    response: Response,
    answer: { text: string; complete: boolean },
    sent: {
      sentAt: number;
      target: { method: string; sessionId: string | undefined; headers: Record<string, string>; parsed: unknown };
      bodyText: string;
      headerText: string;
    },
  ): Omit<Violation, 'request' | 'answer'>[] {
    const found: Omit<Violation, 'request' | 'answer'>[] = [];
    const { status } = response;
    const { method, sessionId, headers, parsed } = sent.target;
    if (status >= 500) found.push({ kind: 'fiveXX', what: `status ${status}` });

    // Anything internal in the body (what requests said is echoed back fairly).
    for (const pattern of LEAKS) {
      const match = pattern.exec(answer.text);
      if (match !== null && !this.#echoable.has(match[0]) && !sent.bodyText.includes(match[0]) && !sent.headerText.includes(match[0])) {
        found.push({ kind: 'leaks', what: `body matches ${pattern}: ${JSON.stringify(match[0])}` });
        break;
      }
    }
    const contentType = response.headers.get('Content-Type') ?? '';
    if (status >= 400 && method !== 'HEAD') {
      const problem = answer.complete ? errorShapeProblem(answer.text, contentType) : `not finished within ${WHOLE_ANSWER_MS} ms`;
      if (problem !== undefined) found.push({ kind: 'leaks', what: `error body not the JSON-RPC error shape: ${problem}` });
    }
    if ((status === 202 || status === 204) && answer.text !== '') found.push({ kind: 'leaks', what: `${status} with a body` });
    if ((status < 200 || (status >= 300 && status < 400)) && status !== 101)
      found.push({ kind: 'leaks', what: `unexpected status ${status}` });

    // A session id in an answer: only a 200 to a POST of one initialize, and a new one.
    const given = response.headers.get('Mcp-Session-Id');
    if (given !== null) {
      const initialize = isObject(parsed) && parsed.method === 'initialize' && 'id' in parsed;
      if (!(status === 200 && method === 'POST' && initialize && action.path.startsWith('/mcp') && sessionId === undefined)) {
        found.push({ kind: 'withoutInitialize', what: `Mcp-Session-Id ${given} on a ${status} to ${method} without a sole initialize` });
      } else if (this.issued.has(given)) {
        found.push({ kind: 'withoutInitialize', what: `Mcp-Session-Id ${given} issued twice` });
      }
    }

    // A legacy request naming a session that does not exist: refused, never served or resumed.
    const era = headers['MCP-Protocol-Version']?.trim();
    const deletedAt = sessionId === undefined ? undefined : this.deleted.get(sessionId);
    const absent = sessionId !== undefined && (!this.issued.has(sessionId) || (deletedAt !== undefined && deletedAt <= sent.sentAt));
    if (absent && era !== MODERN_VERSION && action.path === '/mcp' && ['GET', 'POST', 'DELETE'].includes(method)) {
      if (![400, 403, 404, 405, 406, 413, 415].includes(status)) {
        found.push({
          kind: 'withoutInitialize',
          what: `${status} to ${method} naming session ${sessionId}, which was ${deletedAt === undefined ? 'never issued' : 'deleted'}`,
        });
      }
    }
    return found;
  }

  /** What an answer taught: a new session for the pool, a deletion, the event ids of a stream (cursors to resume, spoil, misuse). */
  #learn(
    action: Action,
    response: Response,
    answer: { text: string },
    target: { method: string; sessionId: string | undefined; parsed: unknown },
  ): void {
    const given = response.headers.get('Mcp-Session-Id');
    if (given !== null && response.status === 200) {
      const params = isObject(target.parsed) && isObject(target.parsed.params) ? target.parsed.params : {};
      const asked = typeof params.protocolVersion === 'string' ? params.protocolVersion : '2025-11-25';
      this.adopt({
        id: given,
        version: (LEGACY_VERSIONS as readonly string[]).includes(asked) ? asked : '2025-11-25',
        epoch: response.headers.get('Mcp-Session-Epoch') ?? undefined,
      });
    }
    const id = target.sessionId;
    if (id === undefined) return;
    if (target.method === 'DELETE' && response.status === 204 && action.path === '/mcp') {
      this.deleted.set(id, performance.now());
      const at = this.live.findIndex((s) => s.id === id);
      if (at >= 0) this.live.splice(at, 1);
      return;
    }
    const known = this.live.find((s) => s.id === id) ?? this.witnesses.find((s) => s.id === id);
    if (known === undefined || !(response.headers.get('Content-Type') ?? '').includes('text/event-stream')) return;
    for (const match of answer.text.matchAll(/^id: ?(.*)$/gm)) {
      known.cursors.push(match[1]!);
      if (known.cursors.length > MAX_CURSORS) known.cursors.shift();
    }
  }

  /** A session the fuzz may use but must leave working. */
  protect(session: { id: string; version: string; epoch?: string }): void {
    this.issued.add(session.id);
    this.witnesses.push({ id: session.id, version: session.version, cursors: [], epoch: session.epoch });
  }

  /** DELETE must never reach a witness: the fuzz aims it at a deleted session instead. */
  guard(action: Action): Action {
    if (
      action.method.toUpperCase() === 'DELETE' &&
      (action.session.kind === 'witness' || (action.session.kind === 'live' && this.live.length === 0))
    ) {
      return { ...action, session: { kind: 'deleted', pick: 0 } };
    }
    return action;
  }
}

/** `1-2-3` spoiled in one of a dozen ways (0 keeps it as issued). */
function mutateCursor(id: string, mutation: number): string {
  const parts = id.split('-').map(Number);
  const [e = 1, s = 1, q = 0] = parts;
  switch (mutation % 13) {
    case 1:
      return `${e}-${s}-${q + 1}`;
    case 2:
      return `${e}-${s}-${q + 1000}`;
    case 3:
      return `${e + 1}-${s}-${q}`;
    case 4:
      return `${e}-${s + 1}-${q}`;
    case 5:
      return `0${e}-${s}-${q}`;
    case 6:
      return ` ${id} `;
    case 7:
      return `${e}-${s}-${Math.max(0, q - 1)}`;
    case 8:
      return `${e}-${s}-18446744073709551616`;
    case 9:
      return `${e}-${s}-0`;
    case 10:
      return `${e}-${s}`;
    case 11:
      return `${e}-${s + 1000}-0`;
    case 12:
      return `-${id}`;
    default:
      return id;
  }
}

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  // In workerd, a native stream: a JavaScript ReadableStream body that the Worker never reads
  // (a GET or DELETE, a refused request) makes workerd print "read end of pipe was aborted" for
  // each, though nothing failed. Under Node (scripts/faults/fuzz.mjs) there is no native stream.
  if (typeof IdentityTransformStream === 'function') {
    const { readable, writable } = new IdentityTransformStream();
    const writer = writable.getWriter();
    // Backpressured: settles as the Worker reads, or rejects when it cancels; either is the test's answer.
    writer
      .write(bytes)
      .then(() => writer.close())
      .catch(() => {});
    return readable;
  }
  return new ReadableStream({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 64 * 1024) controller.enqueue(bytes.subarray(at, at + 64 * 1024));
      controller.close();
    },
  });
}
