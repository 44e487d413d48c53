/**
 * What the generator makes, the bodies of requests: JSON-RPC messages, mostly well-formed and
 * spoiled in one way or several (ids, methods, params, the 2026-07-28 envelope), batches of
 * them, a client's answers to server requests, any JSON, any bytes, nothing, too much.
 */
import fc from 'fast-check';
import { LEGACY_VERSIONS, MODERN_VERSION } from './fuzz-types.ts';

export type Body =
  | { kind: 'none' }
  | { kind: 'text'; text: string; stream: boolean }
  | { kind: 'bytes'; bytes: Uint8Array; stream: boolean }
  | { kind: 'huge'; stream: boolean };

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
export const postBody: fc.Arbitrary<Body> = fc
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
