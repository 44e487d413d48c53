/**
 * The fuzzer behind test/fuzz/edge-fuzz.test.ts (a few thousand requests in workerd) and
 * scripts/fuzz.mjs (100,000 against `wrangler dev`): fast-check generates whole HTTP requests
 * — methods, headers, bodies, session ids, cursors — and sequences of them, a world runs them
 * against any `fetch` and judges every answer against four invariants:
 *
 * 1. never a 5xx;
 * 2. nothing internal in a body: no stack frame, file path or `SomethingError:`; every error
 *    body is the wire contract's JSON-RPC error (`application/json`), 202 and 204 are empty;
 * 3. never a session without `initialize`: a new `Mcp-Session-Id` only answers a 200 to a POST
 *    of one initialize request, and a legacy request naming an id never issued (or deleted)
 *    gets a 4xx of the edge or 404 (never 2xx, never a cursor verdict);
 * 4. valid sessions unaffected: a session opened before the fuzz (`openWitness`) still answers
 *    ping and an echo, and replays its stream identically, after it (`checkWitness`).
 *
 * Plain TypeScript with erasable types only, and no import of `cloudflare:*`, so Node 24 runs it
 * as is from scripts/fuzz.mjs, and the test runs it in workerd.
 */
import fc from 'fast-check';

/**
 * Sends a request. `streamed`: the body was given as a stream, to go without Content-Length.
 * A fetcher that will not send a request (its HTTP stack refuses a header) throws an Error
 * named `ClientRefusal`: the request is skipped, not held against the server.
 */
export type Fetcher = (request: Request, sending?: { streamed: boolean }) => Promise<Response>;
export const CLIENT_REFUSAL = 'ClientRefusal';

export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
export const MODERN_VERSION = '2026-07-28';

export type Tally = { requests: number; fiveXX: number; leaks: number; withoutInitialize: number; broken: number; skipped: number };
export type Violation = { kind: 'fiveXX' | 'leaks' | 'withoutInitialize' | 'broken'; what: string; request: string; answer: string };

// ---- What the generator makes ------------------------------------------------------------

/** Which session a request names; real ids are only known when it runs, so it names them by index. */
export type SessionRef =
  | { kind: 'none' }
  | { kind: 'live'; pick: number }
  | { kind: 'witness'; pick: number }
  | { kind: 'deleted'; pick: number }
  | { kind: 'literal'; value: string };

/** Which cursor a GET sends: one the server issued (maybe spoiled), another session's, or any text. */
export type CursorRef =
  | { kind: 'none' }
  | { kind: 'real'; pick: number; mutation: number; foreign: boolean }
  | { kind: 'literal'; value: string };

export type Body =
  | { kind: 'none' }
  | { kind: 'text'; text: string; stream: boolean }
  | { kind: 'bytes'; bytes: Uint8Array; stream: boolean }
  | { kind: 'huge'; stream: boolean };

export interface Action {
  readonly method: string;
  readonly path: string;
  /** Header name → value; `undefined` leaves the header out. Values may be markers (below). */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly session: SessionRef;
  readonly cursor: CursorRef;
  readonly body: Body;
}

/** Markers in header values, resolved when the request is built. */
const SESSION_VERSION = '\u0000session-version';
const BODY_METHOD = '\u0000body-method';
const BODY_NAME = '\u0000body-name';
const BODY_NAME_B64 = '\u0000body-name-base64';

/** Raw JSON text put in place of a string value after JSON.stringify: numbers JSON.stringify cannot write. */
const raw = (text: string) => `@@RAW(${text})@@`;
const unraw = (json: string) => json.replace(/"@@RAW\((.*?)\)@@"/g, '$1');

const METHODS_OF_SESSION = [
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'prompts/list',
  'prompts/get',
  'logging/setLevel',
  'completion/complete',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
  'initialize',
  'server/discover',
  'subscriptions/listen',
  'tasks/get',
  'tasks/list',
  'tasks/cancel',
  'tasks/update',
  'tasks/result',
  'roots/list',
  'sampling/createMessage',
];

/** Tools that answer at once or within a few ms: none waits on the client (no sampling, elicitation). */
const TOOLS = [
  'echo',
  'countdown',
  'broadcast',
  'tally',
  'whoami',
  'test_simple_text',
  'test_error_handling',
  'test_tool_with_logging',
  'test_tool_with_progress',
  'test_image_content',
  'test_multiple_content_types',
  'test_reconnection',
  'no_such_tool',
];

const smallString = fc.string({ maxLength: 12 });
const anyText = fc.oneof(
  { weight: 3, arbitrary: smallString },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
);

/** JSON-RPC ids, good and bad: small integers collide on purpose (duplicate ids), huge ones overflow. */
const requestId = fc.oneof(
  { weight: 12, arbitrary: fc.nat({ max: 30 }) },
  { weight: 3, arbitrary: smallString },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(
      2 ** 53,
      2 ** 53 + 2,
      -(2 ** 53),
      -1,
      1.5,
      1e21,
      1e308,
      raw('123456789012345678901234567890'),
      raw('1e400'),
      raw('-0'),
      raw('1.0'),
      raw('"\\ud800"'),
      'x'.repeat(1024),
      'x'.repeat(1025),
      '',
      null,
      true,
      {},
      [],
      [1],
      'deadbeef.1',
    ),
  },
);

/** A client's answer to a server request: ids in the server's `<tag>.<n>` form, stale tags, junk. */
const responseMessage = fc.record(
  {
    jsonrpc: fc.constant('2.0'),
    id: fc.oneof(
      fc.constantFrom<unknown>('0badc0de.1', 'deadbeef.0', null, 1),
      fc.stringMatching(/^[0-9a-f]{8}$/).map((t) => `${t}.1`),
    ),
    result: fc.oneof(fc.constant({}), fc.constant({ roots: [] }), fc.jsonValue({ maxDepth: 2 })),
    error: fc.oneof(
      fc.constant({ code: -32601, message: 'no' }),
      fc.record({ code: fc.oneof(fc.integer(), fc.double()), message: anyText }),
      fc.jsonValue({ maxDepth: 1 }),
    ),
  },
  { requiredKeys: ['jsonrpc'] },
);

const toolArguments = (name: string) => {
  switch (name) {
    case 'echo':
      return fc.oneof(
        fc.record({ text: anyText }),
        fc.record({ text: anyText, repeat: fc.integer({ min: -1, max: 50 }) }),
        fc.constant({ text: 'x'.repeat(200_000) }),
        fc.constant({ text: 12 }),
      );
    case 'countdown':
      return fc.oneof(
        fc.record({ from: fc.integer({ min: 0, max: 3 }), interval_ms: fc.integer({ min: -1, max: 3 }) }),
        fc.constant({ from: 'x' }),
      );
    case 'broadcast':
      return fc.record({ count: fc.integer({ min: 0, max: 3 }), interval_ms: fc.constantFrom(0, 1) });
    case 'tally':
      return fc.oneof(fc.record({ key: smallString }), fc.constant({ key: 'x'.repeat(257) }));
    default:
      return fc.oneof(fc.constant({}), fc.jsonValue({ maxDepth: 2 }));
  }
};

const toolCallParams = fc.constantFrom(...TOOLS).chain((name) =>
  fc.record(
    {
      name: fc.oneof({ weight: 9, arbitrary: fc.constant<unknown>(name) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) }),
      arguments: toolArguments(name),
      _meta: fc.oneof(
        fc.record({ progressToken: fc.oneof(fc.nat(), smallString, fc.constant<unknown>(null), fc.constant<unknown>(1.5)) }),
        fc.constant<unknown>('meta'),
      ),
    },
    { requiredKeys: ['name'] },
  ),
);

/** The 2026-07-28 envelope, right or spoiled. */
const envelope = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constant({
      'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'fuzz', version: '1' },
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      'io.modelcontextprotocol/protocolVersion': fc.oneof(fc.constantFrom(MODERN_VERSION, '2025-11-25', '2099-01-01'), fc.jsonValue()),
      'io.modelcontextprotocol/clientCapabilities': fc.oneof(
        fc.constant({ extensions: { 'io.modelcontextprotocol/tasks': {} } }),
        fc.jsonValue(),
      ),
      'io.modelcontextprotocol/clientInfo': fc.jsonValue({ maxDepth: 1 }),
    }),
  },
);

const initializeParams = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      protocolVersion: fc.constantFrom(...LEGACY_VERSIONS),
      capabilities: fc.oneof(fc.constant({}), fc.constant({ roots: { listChanged: true }, sampling: {}, elicitation: {} })),
      clientInfo: fc.constant({ name: 'fuzz', version: '1.0.0' }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        protocolVersion: fc.oneof(fc.constantFrom('2024-11-05', '2099-01-01', MODERN_VERSION, ''), fc.jsonValue()),
        capabilities: fc.jsonValue({ maxDepth: 2 }),
        clientInfo: fc.oneof(fc.record({ name: anyText, version: anyText }), fc.jsonValue({ maxDepth: 1 })),
      },
      { requiredKeys: [] },
    ),
  },
);

const paramsFor = (method: string) => {
  const others = fc.oneof(
    { weight: 4, arbitrary: fc.constant<unknown>(undefined) },
    { weight: 2, arbitrary: fc.constant<unknown>({}) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>([], 'p', null) },
  );
  switch (method) {
    case 'tools/call':
      return fc.oneof({ weight: 6, arbitrary: toolCallParams }, { weight: 1, arbitrary: others });
    case 'initialize':
      return fc.oneof({ weight: 6, arbitrary: initializeParams }, { weight: 1, arbitrary: others });
    case 'logging/setLevel':
      return fc.record({ level: fc.oneof(fc.constantFrom('debug', 'info', 'error', 'emergency'), anyText) });
    case 'resources/read':
    case 'resources/subscribe':
      return fc.record({ uri: fc.oneof(fc.constantFrom('test://static-text', 'test://nope', 'file:///etc/passwd'), anyText) });
    case 'prompts/get':
      return fc.record({
        name: fc.oneof(fc.constantFrom('test_simple_prompt', 'nope'), anyText),
        arguments: fc.jsonValue({ maxDepth: 1 }),
      });
    case 'notifications/cancelled':
      return fc.record({ requestId: requestId, reason: anyText }, { requiredKeys: ['requestId'] });
    case 'notifications/progress':
      return fc.record({ progressToken: requestId, progress: fc.double() });
    case 'tasks/get':
    case 'tasks/cancel':
    case 'tasks/result':
    case 'tasks/update':
      return fc.record({ taskId: fc.oneof(smallString, fc.uuid()) });
    default:
      return others;
  }
};

/** A message with `_meta` spliced in: the modern envelope, a progress token, or junk. */
const withMeta = (params: unknown, meta: unknown): unknown =>
  typeof params === 'object' && params !== null && !Array.isArray(params) ? { ...params, _meta: meta } : params;

/** One JSON-RPC message, mostly well-formed, and spoiled in one way or several. */
const jsonRpcMessage: fc.Arbitrary<unknown> = fc
  .oneof({ weight: 6, arbitrary: fc.constantFrom(...METHODS_OF_SESSION) }, { weight: 1, arbitrary: anyText })
  .chain((method) =>
    fc
      .record(
        {
          jsonrpc: fc.oneof(
            { weight: 30, arbitrary: fc.constant<unknown>('2.0') },
            { weight: 1, arbitrary: fc.constantFrom<unknown>('1.0', 2, null) },
          ),
          id: requestId,
          method: fc.oneof(
            { weight: 30, arbitrary: fc.constant<unknown>(method) },
            { weight: 1, arbitrary: fc.constantFrom<unknown>(7, '', null) },
          ),
          params: paramsFor(method),
          meta: fc.oneof(
            { weight: 6, arbitrary: fc.constant<unknown>(undefined) },
            { weight: 2, arbitrary: envelope },
            { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
          ),
          extra: fc.oneof(
            { weight: 30, arbitrary: fc.constant<unknown>(undefined) },
            { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
          ),
          notification: fc.boolean(),
        },
        { requiredKeys: ['jsonrpc', 'method', 'params', 'meta', 'extra', 'notification'] },
      )
      .map(({ id, params, meta, extra, notification, ...rest }) => {
        const message: Record<string, unknown> = { ...rest };
        // Notifications by name carry no id; otherwise the id's presence is the generator's.
        if (!(notification && String(method).startsWith('notifications/')) && id !== undefined) message.id = id;
        const finalParams = meta === undefined ? params : withMeta(params ?? {}, meta);
        if (finalParams !== undefined) message.params = finalParams;
        if (extra !== undefined) message.extra = extra;
        return message;
      }),
  );

const jsonText = (value: unknown) => unraw(JSON.stringify(value) ?? 'null');

/** POST bodies: mostly JSON-RPC, then batches, any JSON, any bytes, nothing, too much. */
const postBody: fc.Arbitrary<Body> = fc
  .record({
    text: fc.oneof(
      { weight: 14, arbitrary: jsonRpcMessage.map(jsonText) },
      { weight: 4, arbitrary: initializeParams.map((params) => jsonText({ jsonrpc: '2.0', id: 0, method: 'initialize', params })) },
      { weight: 3, arbitrary: fc.array(fc.oneof(jsonRpcMessage, responseMessage), { maxLength: 4 }).map(jsonText) },
      { weight: 2, arbitrary: responseMessage.map(jsonText) },
      { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(jsonText) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 64 }) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          '',
          ' ',
          '{',
          '[',
          '[]',
          '{}',
          'null',
          '{"jsonrpc":"2.0","id":1,"method":"ping"',
          '\ufeff{"jsonrpc":"2.0","id":1,"method":"ping"}',
        ),
      },
    ),
    // Some bodies go as a stream, without Content-Length: the edge reads those itself.
    stream: fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  })
  .chain(({ text, stream }) =>
    fc.oneof(
      { weight: 300, arbitrary: fc.constant<Body>({ kind: 'text', text, stream }) },
      { weight: 20, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes): Body => ({ kind: 'bytes', bytes, stream })) },
      // Not UTF-8: a lone continuation byte, an overlong form, a surrogate's encoding.
      {
        weight: 10,
        arbitrary: fc.constantFrom<Body>(
          { kind: 'bytes', bytes: new Uint8Array([0x7b, 0x80, 0x7d]), stream },
          { kind: 'bytes', bytes: new Uint8Array([0xc0, 0xaf]), stream },
          { kind: 'bytes', bytes: new Uint8Array([0xed, 0xa0, 0x80]), stream },
        ),
      },
      { weight: 10, arbitrary: fc.constant<Body>({ kind: 'none' }) },
      { weight: 1, arbitrary: fc.constant<Body>({ kind: 'huge', stream }) },
    ),
  );

const sessionId = fc.oneof(
  { weight: 14, arbitrary: fc.nat().map((pick): SessionRef => ({ kind: 'live', pick })) },
  { weight: 3, arbitrary: fc.nat().map((pick): SessionRef => ({ kind: 'witness', pick })) },
  { weight: 2, arbitrary: fc.constant<SessionRef>({ kind: 'none' }) },
  { weight: 1, arbitrary: fc.nat().map((pick): SessionRef => ({ kind: 'deleted', pick })) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        // Well-formed, never issued: 256 bits nobody was given.
        fc.stringMatching(/^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/),
        // Other servers' formats, and the edges of the syntax.
        fc.uuid(),
        fc.stringMatching(/^[A-Za-z0-9_-]{42}[BCDF]$/),
        fc.stringMatching(/^[\x21-\x7e]{1,60}$/),
        fc.constantFrom('', ' ', 'A'.repeat(1024), 'A'.repeat(1025), 'has space', 'é', '\t', '0'),
      )
      .map((value): SessionRef => ({ kind: 'literal', value })),
  },
);

const cursor = fc.oneof(
  { weight: 4, arbitrary: fc.constant<CursorRef>({ kind: 'none' }) },
  {
    weight: 6,
    arbitrary: fc
      .record({ pick: fc.nat(), mutation: fc.nat({ max: 12 }), foreign: fc.boolean() })
      .map((r): CursorRef => ({ kind: 'real', ...r })),
  },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.tuple(fc.nat({ max: 3 }), fc.nat({ max: 12 }), fc.nat({ max: 12 })).map(([e, s, q]) => `${e}-${s}-${q}`),
        fc.constantFrom(
          '',
          '-',
          '1--1',
          '01-1-1',
          '1-1-01',
          '1-1-1 ',
          '+1-1-1',
          '1-1-99999999999999999',
          '9007199254740993-1-1',
          '1-1',
          '1-1-1-1',
          'abc',
        ),
        fc.stringMatching(/^[\x20-\x7e]{0,40}$/),
      )
      .map((value): CursorRef => ({ kind: 'literal', value })),
  },
);

const headerValue = fc.stringMatching(/^[\x21-\x7e][\x20-\x7e]{0,40}$/);
const optionalFrom = (...values: (string | undefined)[]) => fc.constantFrom(...values);

/** Each header as a client would send it, right for the method. */
const cleanValues = (method: string) => ({
  Accept: method === 'GET' ? optionalFrom('text/event-stream') : optionalFrom('application/json, text/event-stream'),
  'Content-Type': optionalFrom('application/json'),
  'MCP-Protocol-Version': optionalFrom(SESSION_VERSION, SESSION_VERSION, SESSION_VERSION, undefined),
  'Mcp-Method': optionalFrom(undefined),
  'Mcp-Name': optionalFrom(undefined),
  Origin: optionalFrom(undefined, undefined, 'http://localhost'),
  Host: optionalFrom(undefined),
});

/** Each header from anything: right, wrong, empty, absent. */
const weirdValues = {
  Accept: fc.oneof(
    fc.constantFrom(
      undefined,
      '',
      'application/json, text/event-stream',
      'text/event-stream',
      'application/json',
      '*/*',
      'text/*, application/*',
      'application/json;q=0, text/event-stream',
      'application/json, text/event-stream;q=0',
      'APPLICATION/JSON, TEXT/EVENT-STREAM',
      'application/json,text/event-stream;charset=utf-8',
    ),
    headerValue,
  ),
  'Content-Type': fc.oneof(
    fc.constantFrom(
      undefined,
      '',
      'application/json; charset=utf-8',
      'application/json; charset=UTF-8',
      'application/json; charset=latin1',
      'application/json;;',
      'text/plain',
      'application/jsonx',
      'multipart/form-data; boundary=x',
    ),
    headerValue,
  ),
  'MCP-Protocol-Version': fc.oneof(
    fc.constantFrom(undefined, ...LEGACY_VERSIONS, MODERN_VERSION, '2024-11-05', '', ' 2025-11-25 '),
    headerValue,
  ),
  'Mcp-Method': fc.oneof(fc.constantFrom(BODY_METHOD, 'tools/call', ''), headerValue),
  'Mcp-Name': fc.oneof(fc.constantFrom(BODY_NAME, BODY_NAME_B64, '=?base64?=?=', '=?BASE64?ZWNobw==?=', ''), headerValue),
  Origin: fc.oneof(
    fc.constantFrom(
      'http://127.0.0.1:8787',
      'http://[::1]',
      'https://localhost',
      'http://evil.example',
      'null',
      '',
      'http://localhost.evil.example',
    ),
    headerValue,
  ),
  Host: fc.oneof(
    fc.constantFrom('localhost', '127.0.0.1:1', '[::1]', 'LOCALHOST', 'evil.example', 'localhost.evil.example', ''),
    headerValue,
  ),
};

type HeaderName = keyof typeof weirdValues;

const recordOf = (values: Record<HeaderName, fc.Arbitrary<string | undefined>>) => fc.record(values);

/**
 * Headers by mode: all clean (most requests, so they get past the edge to the objects), the
 * 2026-07-28 routing headers right or contradicting the body, or each header spoiled one time
 * in four (so one wrong header among right ones is common, which is what finds order bugs).
 */
const headersArb = (method: string) => {
  const clean = cleanValues(method);
  const spoiled = Object.fromEntries(
    (Object.keys(weirdValues) as HeaderName[]).map((name) => [
      name,
      fc.oneof({ weight: 3, arbitrary: clean[name] }, { weight: 1, arbitrary: weirdValues[name] }),
    ]),
  ) as Record<HeaderName, fc.Arbitrary<string | undefined>>;
  const modern = {
    ...clean,
    Accept: optionalFrom(
      'application/json, text/event-stream',
      'application/json, text/event-stream',
      'application/json',
      'text/event-stream',
    ),
    'MCP-Protocol-Version': optionalFrom(MODERN_VERSION, MODERN_VERSION, MODERN_VERSION, ` ${MODERN_VERSION}`, undefined),
    'Mcp-Method': fc.oneof(
      { weight: 6, arbitrary: optionalFrom(BODY_METHOD) },
      { weight: 1, arbitrary: weirdValues['Mcp-Method'] },
      { weight: 1, arbitrary: optionalFrom(undefined) },
    ),
    'Mcp-Name': fc.oneof(
      { weight: 4, arbitrary: optionalFrom(BODY_NAME) },
      { weight: 1, arbitrary: optionalFrom(BODY_NAME_B64) },
      { weight: 1, arbitrary: weirdValues['Mcp-Name'] },
      { weight: 1, arbitrary: optionalFrom(undefined) },
    ),
  };
  return fc.oneof(
    { weight: 6, arbitrary: recordOf(clean) },
    { weight: 2, arbitrary: recordOf(modern) },
    { weight: 3, arbitrary: recordOf(spoiled) },
  );
};

const methodArb = fc.oneof(
  { weight: 50, arbitrary: fc.constant('POST') },
  { weight: 20, arbitrary: fc.constant('GET') },
  { weight: 5, arbitrary: fc.constant('DELETE') },
  { weight: 3, arbitrary: fc.constant('OPTIONS') },
  { weight: 2, arbitrary: fc.constantFrom('HEAD', 'PUT', 'PATCH') },
  { weight: 1, arbitrary: fc.constantFrom('PROPFIND', 'MKCOL', 'post', 'Get') },
);

const pathArb = fc.oneof(
  { weight: 60, arbitrary: fc.constant('/mcp') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '/mcp/',
      '/',
      '/MCP',
      '/mcp?x=1',
      '/mcp/../mcp',
      '/mcp%2f',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
      '/authorize',
      '/token',
      '/register',
    ),
  },
);

/** One request: any method and path (mostly POST and GET on /mcp), headers by mode (`headersArb`), a session, a cursor, a body. */
export const actionArb: fc.Arbitrary<Action> = methodArb.chain((method) => {
  const upper = method.toUpperCase();
  const bodied = upper !== 'GET' && upper !== 'HEAD';
  return fc.record({
    method: fc.constant(method),
    path: pathArb,
    headers: headersArb(upper),
    session: sessionId,
    cursor: upper === 'GET' ? cursor : fc.constant<CursorRef>({ kind: 'none' }),
    body: bodied
      ? upper === 'POST'
        ? postBody
        : fc.oneof(fc.constant<Body>({ kind: 'none' }), postBody)
      : fc.constant<Body>({ kind: 'none' }),
  });
});

/** A sequence: later requests name the sessions and cursors earlier ones were given. */
export const sequenceArb = (maxLength: number) => fc.array(actionArb, { minLength: 1, maxLength, size: 'max' });

// ---- The world the requests run in -------------------------------------------------------

interface KnownSession {
  readonly id: string;
  readonly version: string;
  /** Event ids this session's SSE answers carried, newest last. */
  readonly cursors: string[];
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
  readonly tally: Tally = { requests: 0, fiveXX: 0, leaks: 0, withoutInitialize: 0, broken: 0, skipped: 0 };
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
  adopt(session: { id: string; version: string }): void {
    this.issued.add(session.id);
    this.live.push({ id: session.id, version: session.version, cursors: [] });
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
      this.adopt({ id: given, version: (LEGACY_VERSIONS as readonly string[]).includes(asked) ? asked : '2025-11-25' });
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
  protect(session: { id: string; version: string }): void {
    this.issued.add(session.id);
    this.witnesses.push({ id: session.id, version: session.version, cursors: [] });
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

/** How long any answer but an SSE stream may take to arrive whole. */
const WHOLE_ANSWER_MS = 10_000;

/**
 * Reads an answer. An SSE stream can stay open, so it is read until `idleMs` pass with
 * nothing new or `totalMs` in all; any other answer is finite, and read whole (within
 * WHOLE_ANSWER_MS: on a loaded machine its body can come well after its headers).
 */
export async function readAnswer(
  response: Response,
  idleMs: number,
  totalMs: number,
  leave: () => void = () => {},
): Promise<{ text: string; complete: boolean }> {
  if (response.body === null) return { text: '', complete: true };
  if (!(response.headers.get('Content-Type') ?? '').includes('text/event-stream')) {
    idleMs = WHOLE_ANSWER_MS;
    totalMs = WHOLE_ANSWER_MS;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const deadline = Date.now() + totalMs;
  let text = '';
  let complete = false;
  try {
    for (;;) {
      const wait = Math.min(idleMs, deadline - Date.now());
      if (wait <= 0) break;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const result = await Promise.race([
        reader.read(),
        new Promise<'quiet'>((resolve) => {
          timer = setTimeout(() => resolve('quiet'), wait);
        }),
      ]);
      if (timer !== undefined) clearTimeout(timer);
      if (result === 'quiet') break;
      if (result.done) {
        complete = true;
        break;
      }
      if (text.length < 1_000_000) text += decoder.decode(result.value, { stream: true });
    }
  } catch {
    complete = true; // the server ended the stream abruptly: what arrived is judged
  } finally {
    if (!complete) leave();
    reader.cancel().catch(() => undefined);
  }
  return { text, complete };
}

/** Why an error answer is not `{"jsonrpc":"2.0","id":…,"error":{"code","message"[,"data"]}}` as application/json. */
function errorShapeProblem(text: string, contentType: string): string | undefined {
  if (!contentType.toLowerCase().startsWith('application/json')) return `Content-Type ${JSON.stringify(contentType)}`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (!isObject(body)) return 'not an object';
  const keys = Object.keys(body).sort().join(',');
  if (keys !== 'error,id,jsonrpc') return `members ${keys}`;
  if (body.jsonrpc !== '2.0') return 'jsonrpc';
  if (!(body.id === null || typeof body.id === 'string' || typeof body.id === 'number')) return 'id';
  const error = body.error;
  if (!isObject(error)) return 'error not an object';
  if (!Number.isInteger(error.code)) return 'error.code';
  if (typeof error.message !== 'string') return 'error.message';
  const extra = Object.keys(error).filter((k) => !['code', 'message', 'data'].includes(k));
  if (extra.length > 0) return `error members ${extra.join(',')}`;
  return undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function headersOf(response: Response): Record<string, string> {
  const out: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  // In workerd, a native stream: a JavaScript ReadableStream body that the Worker never reads
  // (a GET or DELETE, a refused request) makes workerd print "read end of pipe was aborted" for
  // each, though nothing failed. Under Node (scripts/fuzz.mjs) there is no native stream.
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

// ---- The witness: a session opened before the fuzz, checked after it ----------------------

const CLIENT_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

export interface Witness {
  readonly id: string;
  readonly version: string;
  /** The stream of the echo made before the fuzz: its first id (the priming event) and every event after. */
  readonly cursor: string;
  readonly events: readonly { id: string; data: string }[];
}

function sseEvents(text: string): { id: string; data: string }[] {
  return text
    .split(/\n\n/)
    .filter((frame) => /^id: /m.test(frame))
    .map((frame) => ({
      id: /^id: ?(.*)$/m.exec(frame)![1]!,
      data: [...frame.matchAll(/^data: ?(.*)$/gm)].map((m) => m[1]).join('\n'),
    }));
}

async function post(fetcher: Fetcher, origin: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetcher(
    new Request(`${origin}/mcp`, { method: 'POST', headers: { ...CLIENT_HEADERS, ...headers }, body: JSON.stringify(body) }),
  );
  const answer = await readAnswer(response, 5_000, 10_000);
  return { response, text: answer.text, complete: answer.complete };
}

/** Opens a 2025-11-25 session and makes one echo call, whose stream is replayed after the fuzz. */
export async function openWitness(fetcher: Fetcher, origin: string, version = '2025-11-25'): Promise<Witness> {
  const init = await post(fetcher, origin, {
    jsonrpc: '2.0',
    id: `witness-init-${crypto.randomUUID()}`,
    method: 'initialize',
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'witness', version: '1.0.0' } },
  });
  const id = init.response.headers.get('Mcp-Session-Id');
  if (init.response.status !== 200 || id === null) throw new Error(`witness: initialize answered ${init.response.status} ${init.text}`);
  const headers = { 'Mcp-Session-Id': id, 'MCP-Protocol-Version': version };
  const initialized = await post(fetcher, origin, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  if (initialized.response.status !== 202) throw new Error(`witness: notifications/initialized answered ${initialized.response.status}`);
  const call = await post(fetcher, origin, echoCall('before the fuzz'), headers);
  const { cursor, events } = finishedStream(call.text);
  if (call.response.status !== 200 || !call.complete || events.length === 0)
    throw new Error(`witness: echo answered ${call.response.status} ${call.text}`);
  return { id, version, cursor, events };
}

/**
 * A finished stream as the witness keeps it: the cursor at its start (`E-S-0`, the priming
 * event's id on 2025-11-25, where older revisions have none) and its events.
 */
function finishedStream(text: string): { cursor: string; events: { id: string; data: string }[] } {
  const events = sseEvents(text).filter((e) => e.data !== '');
  const cursor = events.length === 0 ? '' : events[0]!.id.replace(/-\d+$/, '-0');
  return { cursor, events };
}

const echoCall = (text: string) => ({
  jsonrpc: '2.0',
  id: `witness-${crypto.randomUUID()}`,
  method: 'tools/call',
  params: { name: 'echo', arguments: { text } },
});

/**
 * What is wrong with the witness now (an empty list if it still works as it did), and the
 * witness to check next time: the same session, with the echo just made as its stream (a
 * finished stream's events are kept for RETENTION_MS, 10 minutes, so a long run checks often).
 */
export async function checkWitness(fetcher: Fetcher, origin: string, witness: Witness): Promise<{ problems: string[]; next: Witness }> {
  const problems: string[] = [];
  const headers = { 'Mcp-Session-Id': witness.id, 'MCP-Protocol-Version': witness.version };
  const ping = await post(fetcher, origin, { jsonrpc: '2.0', id: `witness-${crypto.randomUUID()}`, method: 'ping' }, headers);
  const pong = sseEvents(ping.text).find((e) => e.data !== '');
  if (ping.response.status !== 200 || pong === undefined || JSON.stringify(JSON.parse(pong.data).result) !== '{}') {
    problems.push(`ping answered ${ping.response.status} ${ping.text.slice(0, 300)}`);
  }
  const text = `after the fuzz ${crypto.randomUUID()}`;
  const call = await post(fetcher, origin, echoCall(text), headers);
  const events = sseEvents(call.text);
  const result = events.find((e) => e.data !== '');
  if (call.response.status !== 200 || result === undefined || JSON.parse(result.data).result?.content?.[0]?.text !== text) {
    problems.push(`echo answered ${call.response.status} ${call.text.slice(0, 300)}`);
  }
  // The stream made before the fuzz replays the same events, under the same ids, and ends.
  const resumed = await fetcher(
    new Request(`${origin}/mcp`, { method: 'GET', headers: { Accept: 'text/event-stream', ...headers, 'Last-Event-ID': witness.cursor } }),
  );
  const replay = await readAnswer(resumed, 5_000, 10_000);
  const replayed = sseEvents(replay.text).filter((e) => e.data !== '');
  if (
    resumed.status !== 200 ||
    resumed.headers.get('Mcp-Stream-Resumed') !== 'true' ||
    !replay.complete ||
    JSON.stringify(replayed) !== JSON.stringify(witness.events)
  ) {
    problems.push(
      `resume from ${witness.cursor} answered ${resumed.status} (resumed ${resumed.headers.get('Mcp-Stream-Resumed')}, complete ${replay.complete}): ${replay.text.slice(0, 300)}; expected ${JSON.stringify(witness.events).slice(0, 300)}`,
    );
  }
  const fresh = finishedStream(call.text);
  const next = fresh.events.length > 0 ? { ...witness, ...fresh } : witness;
  return { problems, next };
}

/** The one line both runners print. */
export const summary = (t: Tally, seed: number) =>
  `fuzz: ${t.requests} requests, ${t.fiveXX} 5xx, ${t.leaks} leaks, ${t.withoutInitialize} sessions without initialize, ${t.broken} broken sessions (seed ${seed})`;
