import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JsonRpcId } from '../../src/core/errors.ts';
import {
  answeredId,
  errorAnswer,
  idKey,
  isInitializeRequest,
  isNotification,
  isRequest,
  isResponse,
  MAX_BATCH_MESSAGES,
  MAX_REQUEST_ID_BYTES,
  MAX_STORED_ID_BYTES,
  parseJsonRpcBody,
  storedIdBytes,
  type JsonRpcMessage,
} from '../../src/core/jsonrpc.ts';
import { expectHttpError, thrownBy } from './helpers.ts';

const req = (id: unknown, method = 'tools/list', extra: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method, ...extra });
const body = (value: unknown) => JSON.stringify(value);

it('MAX_REQUEST_ID_BYTES is 256, MAX_STORED_ID_BYTES 262 and MAX_BATCH_MESSAGES 100', () => {
  expect(MAX_REQUEST_ID_BYTES).toBe(256);
  expect(MAX_STORED_ID_BYTES).toBe(262);
  expect(MAX_BATCH_MESSAGES).toBe(100);
});

describe('parseJsonRpcBody accepts', () => {
  it.each<{ name: string; text: string; messages: unknown[]; batch: boolean }>([
    {
      name: 'a request with params',
      text: body(req(1, 'initialize', { params: { protocolVersion: '2025-11-25' } })),
      messages: [req(1, 'initialize', { params: { protocolVersion: '2025-11-25' } })],
      batch: false,
    },
    { name: 'a request without params', text: body(req('a')), messages: [req('a')], batch: false },
    { name: 'a request with id 0', text: body(req(0)), messages: [req(0)], batch: false },
    { name: 'a request with a negative id', text: body(req(-1)), messages: [req(-1)], batch: false },
    { name: 'a request with an empty-string id', text: body(req('')), messages: [req('')], batch: false },
    {
      name: 'a request with a 256-byte id',
      text: body(req('i'.repeat(MAX_REQUEST_ID_BYTES))),
      messages: [req('i'.repeat(MAX_REQUEST_ID_BYTES))],
      batch: false,
    },
    {
      name: 'a request with a 256-byte id of 3-byte characters',
      text: body(req('€'.repeat(MAX_REQUEST_ID_BYTES / 4) + 'i'.repeat(MAX_REQUEST_ID_BYTES / 4))),
      messages: [req('€'.repeat(MAX_REQUEST_ID_BYTES / 4) + 'i'.repeat(MAX_REQUEST_ID_BYTES / 4))],
      batch: false,
    },
    {
      name: 'a batch of 100 messages',
      text: body(Array.from({ length: MAX_BATCH_MESSAGES }, (_, i) => req(i))),
      messages: Array.from({ length: MAX_BATCH_MESSAGES }, (_, i) => req(i)),
      batch: true,
    },
    { name: 'a request with the largest safe integer id', text: body(req(2 ** 53 - 1)), messages: [req(2 ** 53 - 1)], batch: false },
    {
      name: 'a request whose _meta has a string progress token and other keys',
      text: body(req(1, 'tools/call', { params: { name: 't', _meta: { progressToken: 'p', other: [1] } } })),
      messages: [req(1, 'tools/call', { params: { name: 't', _meta: { progressToken: 'p', other: [1] } } })],
      batch: false,
    },
    {
      name: 'a request whose _meta has an integer progress token and a related task',
      text: body(req(1, 'x', { params: { _meta: { progressToken: 7, 'io.modelcontextprotocol/related-task': { taskId: 't' } } } })),
      messages: [req(1, 'x', { params: { _meta: { progressToken: 7, 'io.modelcontextprotocol/related-task': { taskId: 't' } } } })],
      batch: false,
    },
    {
      name: 'a request with empty params',
      text: body(req(1, 'ping', { params: {} })),
      messages: [req(1, 'ping', { params: {} })],
      batch: false,
    },
    {
      name: 'a notification',
      text: body({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      messages: [{ jsonrpc: '2.0', method: 'notifications/initialized' }],
      batch: false,
    },
    {
      name: 'a notification with params',
      text: body({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }),
      messages: [{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }],
      batch: false,
    },
    {
      name: 'a result response',
      text: body({ jsonrpc: '2.0', id: 1, result: {} }),
      messages: [{ jsonrpc: '2.0', id: 1, result: {} }],
      batch: false,
    },
    {
      name: 'a result response with _meta',
      text: body({ jsonrpc: '2.0', id: 'x', result: { _meta: { a: 1 }, action: 'accept' } }),
      messages: [{ jsonrpc: '2.0', id: 'x', result: { _meta: { a: 1 }, action: 'accept' } }],
      batch: false,
    },
    {
      name: 'an error response',
      text: body({ jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'Method not found' } }),
      messages: [{ jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'Method not found' } }],
      batch: false,
    },
    {
      name: 'an error response with data and a null id',
      text: body({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error', data: [1] } }),
      messages: [{ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error', data: [1] } }],
      batch: false,
    },
    {
      name: 'an error response without an id (MCP’s schema allows it)',
      text: body({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' } }),
      messages: [{ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' } }],
      batch: false,
    },
    {
      name: 'a batch mixing a request, a notification and a response',
      text: body([req(1), { jsonrpc: '2.0', method: 'n' }, { jsonrpc: '2.0', id: 9, result: {} }]),
      messages: [req(1), { jsonrpc: '2.0', method: 'n' }, { jsonrpc: '2.0', id: 9, result: {} }],
      batch: true,
    },
    { name: 'a batch of one', text: body([req(1)]), messages: [req(1)], batch: true },
    { name: 'a batch with ids 1 and "1" (different ids)', text: body([req(1), req('1')]), messages: [req(1), req('1')], batch: true },
    {
      name: 'a batch where a request and a response share an id (different id spaces)',
      text: body([req(1), { jsonrpc: '2.0', id: 1, result: {} }]),
      messages: [req(1), { jsonrpc: '2.0', id: 1, result: {} }],
      batch: true,
    },
    {
      name: 'a batch with two responses sharing an id',
      text: body([
        { jsonrpc: '2.0', id: 1, result: {} },
        { jsonrpc: '2.0', id: 1, result: {} },
      ]),
      messages: [
        { jsonrpc: '2.0', id: 1, result: {} },
        { jsonrpc: '2.0', id: 1, result: {} },
      ],
      batch: true,
    },
    { name: 'a body surrounded by whitespace', text: `\n  ${body(req(1))}  \n`, messages: [req(1)], batch: false },
  ])('$name', ({ text, messages, batch }) => {
    expect(parseJsonRpcBody(text)).toEqual({ messages, batch });
  });
});

const ID_TOO_LARGE =
  'a request id may take at most 262 UTF-8 bytes as stored, JSON-escaped twice ' +
  '(256 bytes of text JSON leaves alone; a control character or lone surrogate takes 7, a " or \\ 4)';

describe('a request id is bounded by its largest stored form, in bytes', () => {
  const utf8 = (text: string) => new TextEncoder().encode(text).byteLength;
  /** What the session stores of an id: its key (requests, the answer's JSON) and the key as a JSON string (its stream's request list). */
  const storedForms = (id: JsonRpcId) => [idKey(id), JSON.stringify(idKey(id))];

  it.each<{ name: string; id: JsonRpcId; bytes: number }>([
    { name: 'an empty id: its quoting, 6 bytes', id: '', bytes: 6 },
    { name: '256 ASCII bytes: the bound exactly', id: 'i'.repeat(256), bytes: 262 },
    { name: '257 ASCII bytes', id: 'i'.repeat(257), bytes: 263 },
    { name: '36 U+0001 and 4 ASCII: 7 bytes each as stored, 1 sent', id: `iiii${'\u0001'.repeat(36)}`, bytes: 262 },
    { name: '36 U+0001 and 5 ASCII', id: `iiiii${'\u0001'.repeat(36)}`, bytes: 263 },
    { name: '36 U+001F and 4 ASCII', id: `iiii${'\u001f'.repeat(36)}`, bytes: 262 },
    { name: 'the attack: 8 ASCII and 248 U+0001, 256 bytes sent', id: `0000001-${'\u0001'.repeat(248)}`, bytes: 1_750 },
    { name: '85 newlines and 1 ASCII: 3 bytes each as stored', id: `i${'\n'.repeat(85)}`, bytes: 262 },
    { name: '85 newlines and 2 ASCII', id: `ii${'\n'.repeat(85)}`, bytes: 263 },
    { name: '64 quotes: 4 bytes each as stored', id: '"'.repeat(64), bytes: 262 },
    { name: '65 quotes', id: '"'.repeat(65), bytes: 266 },
    { name: '64 backslashes: 4 bytes each as stored', id: '\\'.repeat(64), bytes: 262 },
    { name: '65 backslashes', id: '\\'.repeat(65), bytes: 266 },
    { name: '256 DEL: JSON leaves it alone', id: '\x7f'.repeat(256), bytes: 262 },
    { name: '85 U+2028 and 1 ASCII: JSON leaves it alone, 3 bytes', id: `i${'\u2028'.repeat(85)}`, bytes: 262 },
    { name: '128 two-byte characters', id: 'é'.repeat(128), bytes: 262 },
    { name: '85 three-byte characters and 1 ASCII', id: `i${'€'.repeat(85)}`, bytes: 262 },
    { name: '86 three-byte characters', id: '€'.repeat(86), bytes: 264 },
    { name: '64 surrogate pairs: 4 bytes each, not escaped', id: '😀'.repeat(64), bytes: 262 },
    { name: '64 surrogate pairs and 1 ASCII', id: `i${'😀'.repeat(64)}`, bytes: 263 },
    { name: '36 lone high surrogates and 4 ASCII: 7 bytes each as stored (\\ud800)', id: `iiii${'\ud800'.repeat(36)}`, bytes: 262 },
    { name: '36 lone high surrogates and 5 ASCII', id: `iiiii${'\ud800'.repeat(36)}`, bytes: 263 },
    { name: '36 lone low surrogates and 4 ASCII', id: `iiii${'\udc00'.repeat(36)}`, bytes: 262 },
    { name: 'a low surrogate before a high one: two lone ones, not a pair', id: `${'i'.repeat(242)}\udc00\ud800`, bytes: 262 },
    { name: 'the integer 0', id: 0, bytes: 3 },
    { name: 'the largest safe integer', id: 2 ** 53 - 1, bytes: 18 },
    { name: 'the smallest safe integer', id: -(2 ** 53 - 1), bytes: 19 },
  ])('$name: $bytes bytes as stored', ({ id, bytes }) => {
    expect(storedIdBytes(id)).toBe(bytes);
    expect(Math.max(...storedForms(id).map(utf8))).toBe(bytes);
    const admitted = bytes <= MAX_STORED_ID_BYTES;
    const parse = () => parseJsonRpcBody(body(req(id)));
    if (admitted) expect(parse().messages).toEqual([req(id)]);
    else expectHttpError(thrownBy(parse), { status: 400, code: -32600, message: `Invalid Request: ${ID_TOO_LARGE}`, id });
  });

  it('holds for any id: its largest stored form, counted as TextEncoder does; an id admitted is one the old bound (256 bytes sent) admitted', () => {
    const ids = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.maxSafeInteger(), fc.integer());
    fc.assert(
      fc.property(ids, (id) => {
        expect(storedIdBytes(id)).toBe(Math.max(...storedForms(id).map(utf8)));
        if (storedIdBytes(id) <= MAX_STORED_ID_BYTES) expect(utf8(typeof id === 'string' ? id : '')).toBeLessThanOrEqual(256);
      }),
    );
  });
});

describe('parseJsonRpcBody refuses', () => {
  it.each([
    { name: 'an empty body', text: '' },
    { name: 'plain text', text: 'hello' },
    { name: 'a truncated object', text: '{"jsonrpc":"2.0"' },
    { name: 'a trailing comma', text: '{"jsonrpc":"2.0","id":1,"method":"x",}' },
    { name: 'a trailing comma in a batch', text: '[1,]' },
    { name: 'single-quoted strings', text: "{'jsonrpc':'2.0'}" },
    { name: 'two concatenated objects', text: '{}{}' },
  ])('$name as a 400 parse error (-32700)', ({ text }) => {
    expectHttpError(
      thrownBy(() => parseJsonRpcBody(text)),
      { status: 400, code: -32700, message: 'Parse error: the body is not valid JSON' },
    );
  });

  it.each<{ name: string; text: string; problem: string; id?: JsonRpcId | null }>([
    { name: 'null', text: 'null', problem: 'a message must be a JSON object' },
    { name: 'a number', text: '42', problem: 'a message must be a JSON object' },
    { name: 'a string', text: '"x"', problem: 'a message must be a JSON object' },
    { name: 'a boolean', text: 'true', problem: 'a message must be a JSON object' },
    { name: 'an empty batch', text: '[]', problem: 'an empty batch' },
    { name: 'a batch holding a number', text: '[1]', problem: 'a message must be a JSON object' },
    { name: 'a nested batch', text: body([[req(1)]]), problem: 'a message must be a JSON object' },
    { name: 'an empty object', text: '{}', problem: 'jsonrpc must be "2.0"' },
    { name: 'a missing jsonrpc, echoing the id', text: body({ id: 5, method: 'x' }), problem: 'jsonrpc must be "2.0"', id: 5 },
    {
      name: 'jsonrpc "1.0", echoing a string id',
      text: body(req('abc', 'x', { jsonrpc: '1.0' })),
      problem: 'jsonrpc must be "2.0"',
      id: 'abc',
    },
    { name: 'jsonrpc as the number 2.0', text: '{"jsonrpc":2.0,"id":7,"method":"x"}', problem: 'jsonrpc must be "2.0"', id: 7 },
    { name: 'an empty method', text: body(req(3, '')), problem: 'method must be a non-empty string', id: 3 },
    { name: 'a numeric method', text: body(req(3, 5 as never)), problem: 'method must be a non-empty string', id: 3 },
    { name: 'a null method', text: body(req(3, null as never)), problem: 'method must be a non-empty string', id: 3 },
    { name: 'array params', text: body(req(4, 'x', { params: [1, 2] })), problem: 'params must be an object', id: 4 },
    { name: 'null params', text: body(req(4, 'x', { params: null })), problem: 'params must be an object', id: 4 },
    { name: 'string params', text: body(req(4, 'x', { params: 'p' })), problem: 'params must be an object', id: 4 },
    {
      name: 'array params on a notification',
      text: body({ jsonrpc: '2.0', method: 'n', params: [] }),
      problem: 'params must be an object',
    },
    { name: 'a null request id (MCP forbids it)', text: body(req(null)), problem: 'a request id must be a string or an integer' },
    { name: 'a boolean request id', text: body(req(true)), problem: 'a request id must be a string or an integer' },
    { name: 'an object request id', text: body(req({})), problem: 'a request id must be a string or an integer' },
    { name: 'an array request id', text: body(req([1])), problem: 'a request id must be a string or an integer' },
    {
      name: 'a request id over 256 bytes',
      text: body(req('i'.repeat(MAX_REQUEST_ID_BYTES + 1))),
      problem: ID_TOO_LARGE,
      id: 'i'.repeat(MAX_REQUEST_ID_BYTES + 1),
    },
    {
      name: 'a request id of 86 characters but 258 bytes',
      text: body(req('€'.repeat(86))),
      problem: ID_TOO_LARGE,
      id: '€'.repeat(86),
    },
    {
      name: 'an initialize request with an id of 255 bytes sent, 1,791 as stored',
      text: body(req('\u0001'.repeat(255), 'initialize', { params: {} })),
      problem: ID_TOO_LARGE,
      id: '\u0001'.repeat(255),
    },
    {
      name: 'a batch of 101 messages',
      text: body(Array.from({ length: MAX_BATCH_MESSAGES + 1 }, (_, i) => req(i))),
      problem: 'a batch may hold at most 100 messages',
    },
    {
      name: 'a request id that overflows to Infinity',
      text: '{"jsonrpc":"2.0","id":1e400,"method":"x"}',
      problem: 'a request id must be a string or an integer',
    },
    {
      name: 'a request carrying a result',
      text: body(req(6, 'x', { result: {} })),
      problem: 'a message cannot be both a request and a response',
      id: 6,
    },
    {
      name: 'a request carrying an error',
      text: body(req(6, 'x', { error: { code: 1, message: 'm' } })),
      problem: 'a message cannot be both a request and a response',
      id: 6,
    },
    {
      name: 'a notification carrying a result',
      text: body({ jsonrpc: '2.0', method: 'n', result: 1 }),
      problem: 'a message cannot be both a request and a response',
    },
    { name: 'a result without an id', text: body({ jsonrpc: '2.0', result: {} }), problem: 'a result needs an id' },
    {
      name: 'a response with a boolean id',
      text: body({ jsonrpc: '2.0', id: false, result: {} }),
      problem: 'a response id must be a string, an integer or null',
    },
    {
      name: 'a response with an object id',
      text: body({ jsonrpc: '2.0', id: {}, result: {} }),
      problem: 'a response id must be a string, an integer or null',
    },
    {
      name: 'a response with a fractional id',
      text: body({ jsonrpc: '2.0', id: 0.5, result: {} }),
      problem: 'a response id must be a string, an integer or null',
    },
    // The SDK drops what its strict schemas do not match, with no answer: refused here instead.
    { name: 'a fractional request id', text: body(req(1.5)), problem: 'a request id must be a string or an integer' },
    { name: 'a request id past the safe integers', text: body(req(2 ** 53)), problem: 'a request id must be a string or an integer' },
    { name: 'an unknown member on a request', text: body(req(1, 'x', { extra: 1 })), problem: 'unexpected member "extra"', id: 1 },
    {
      name: 'an unknown member on a notification',
      text: body({ jsonrpc: '2.0', method: 'n', id2: 1 }),
      problem: 'unexpected member "id2"',
    },
    {
      name: 'an unknown member on a result',
      text: body({ jsonrpc: '2.0', id: 1, result: {}, extra: 1 }),
      problem: 'unexpected member "extra"',
      id: 1,
    },
    {
      name: 'an unknown member on an error',
      text: body({ jsonrpc: '2.0', id: 1, error: { code: 1, message: 'm' }, extra: 1 }),
      problem: 'unexpected member "extra"',
      id: 1,
    },
    { name: 'a non-object _meta', text: body(req(1, 'x', { params: { _meta: 5 } })), problem: 'params._meta must be an object', id: 1 },
    {
      name: 'a null _meta on a notification',
      text: body({ jsonrpc: '2.0', method: 'n', params: { _meta: null } }),
      problem: 'params._meta must be an object',
    },
    {
      name: 'a fractional progress token',
      text: body(req(1, 'x', { params: { _meta: { progressToken: 1.5 } } })),
      problem: 'a progress token must be a string or an integer',
      id: 1,
    },
    {
      name: 'a null progress token',
      text: body(req(1, 'x', { params: { _meta: { progressToken: null } } })),
      problem: 'a progress token must be a string or an integer',
      id: 1,
    },
    {
      name: 'a related task without a string taskId',
      text: body(req(1, 'x', { params: { _meta: { 'io.modelcontextprotocol/related-task': { taskId: 1 } } } })),
      problem: '_meta["io.modelcontextprotocol/related-task"] must be an object with a string taskId',
      id: 1,
    },
    { name: 'a null result', text: body({ jsonrpc: '2.0', id: 'x', result: null }), problem: 'result must be an object', id: 'x' },
    { name: 'an array result', text: body({ jsonrpc: '2.0', id: 'x', result: [] }), problem: 'result must be an object', id: 'x' },
    {
      name: 'a non-object result._meta',
      text: body({ jsonrpc: '2.0', id: 'x', result: { _meta: 'm' } }),
      problem: 'result._meta must be an object',
      id: 'x',
    },
    {
      name: 'an error with a fractional code',
      text: body({ jsonrpc: '2.0', id: 9, error: { code: 1.5, message: 'm' } }),
      problem: 'error must have an integer code and a string message',
      id: 9,
    },
    {
      name: 'a response with neither result nor error',
      text: body({ jsonrpc: '2.0', id: 8 }),
      problem: 'a response has exactly one of result and error',
      id: 8,
    },
    {
      name: 'a response with both result and error',
      text: body({ jsonrpc: '2.0', id: 8, result: {}, error: { code: 1, message: 'm' } }),
      problem: 'a response has exactly one of result and error',
      id: 8,
    },
    {
      name: 'a response with a null id and no result',
      text: body({ jsonrpc: '2.0', id: null }),
      problem: 'a response has exactly one of result and error',
    },
    {
      name: 'a string error',
      text: body({ jsonrpc: '2.0', id: 9, error: 'boom' }),
      problem: 'error must have an integer code and a string message',
      id: 9,
    },
    {
      name: 'a null error',
      text: body({ jsonrpc: '2.0', id: 9, error: null }),
      problem: 'error must have an integer code and a string message',
      id: 9,
    },
    {
      name: 'an error without a code',
      text: body({ jsonrpc: '2.0', id: 9, error: { message: 'm' } }),
      problem: 'error must have an integer code and a string message',
      id: 9,
    },
    {
      name: 'an error with a string code',
      text: body({ jsonrpc: '2.0', id: 9, error: { code: '1', message: 'm' } }),
      problem: 'error must have an integer code and a string message',
      id: 9,
    },
    {
      name: 'an error without a message',
      text: body({ jsonrpc: '2.0', id: 9, error: { code: 1 } }),
      problem: 'error must have an integer code and a string message',
      id: 9,
    },
    {
      name: 'an error with a numeric message',
      text: body({ jsonrpc: '2.0', id: 9, error: { code: 1, message: 2 } }),
      problem: 'error must have an integer code and a string message',
      id: 9,
    },
    {
      name: 'a batch whose second member is invalid, echoing its id',
      text: body([req(1), req(2, '')]),
      problem: 'method must be a non-empty string',
      id: 2,
    },
    {
      name: 'a batch with two invalid members, reporting the first',
      text: body([req(1, ''), req(2, 'x', { params: [] })]),
      problem: 'method must be a non-empty string',
      id: 1,
    },
    { name: 'a batch repeating a numeric request id', text: body([req(1), req(1, 'other')]), problem: 'a batch repeats a request id' },
    {
      name: 'a batch repeating a string request id',
      text: body([req('a'), { jsonrpc: '2.0', method: 'n' }, req('a')]),
      problem: 'a batch repeats a request id',
    },
  ])('$name as a 400 invalid request (-32600)', ({ text, problem, id = null }) => {
    expectHttpError(
      thrownBy(() => parseJsonRpcBody(text)),
      { status: 400, code: -32600, message: `Invalid Request: ${problem}`, id },
    );
  });
});

describe('message kinds', () => {
  const request: JsonRpcMessage = { jsonrpc: '2.0', id: 1, method: 'tools/call' };
  const initialize: JsonRpcMessage = { jsonrpc: '2.0', id: 0, method: 'initialize', params: {} };
  const notification: JsonRpcMessage = { jsonrpc: '2.0', method: 'notifications/initialized' };
  const initializeNotification: JsonRpcMessage = { jsonrpc: '2.0', method: 'initialize' };
  const response: JsonRpcMessage = { jsonrpc: '2.0', id: 1, result: {} };
  const errorResponse: JsonRpcMessage = { jsonrpc: '2.0', id: null, error: { code: -1, message: 'm' } };

  it.each([
    { name: 'a request', message: request, kinds: [true, false, false, false] },
    { name: 'an initialize request', message: initialize, kinds: [true, false, false, true] },
    { name: 'a notification', message: notification, kinds: [false, true, false, false] },
    { name: 'an initialize notification (not an initialize request)', message: initializeNotification, kinds: [false, true, false, false] },
    { name: 'a result response', message: response, kinds: [false, false, true, false] },
    { name: 'an error response', message: errorResponse, kinds: [false, false, true, false] },
  ])('classifies $name as [request, notification, response, initialize] = $kinds', ({ message, kinds }) => {
    expect([isRequest(message), isNotification(message), isResponse(message), isInitializeRequest(message)]).toEqual(kinds);
  });

  it.each<{ name: string; message: JsonRpcMessage; id: JsonRpcId | undefined }>([
    { name: 'a result', message: response, id: 1 },
    { name: 'an error with a string id', message: { jsonrpc: '2.0', id: 'x', error: { code: -1, message: 'm' } }, id: 'x' },
    { name: 'an error with a null id', message: errorResponse, id: undefined },
    { name: 'an error without an id', message: { jsonrpc: '2.0', error: { code: -1, message: 'm' } }, id: undefined },
    { name: 'a request (it answers nothing)', message: request, id: undefined },
    { name: 'a notification', message: notification, id: undefined },
  ])('answeredId of $name is $id', ({ message, id }) => {
    expect(answeredId(message)).toBe(id);
  });
});

describe('idKey', () => {
  it.each<{ name: string; id: JsonRpcId; key: string }>([
    { name: 'the number 1', id: 1, key: '1' },
    { name: 'the string "1"', id: '1', key: '"1"' },
    { name: 'the number 0', id: 0, key: '0' },
    { name: 'the empty string', id: '', key: '""' },
    { name: 'a string with a quote', id: 'a"b', key: '"a\\"b"' },
    { name: 'a negative number', id: -15, key: '-15' },
  ])('of $name is $key', ({ id, key }) => {
    expect(idKey(id)).toBe(key);
  });

  it.each<{ name: string; a: JsonRpcId; b: JsonRpcId }>([
    { name: '1 and "1"', a: 1, b: '1' },
    { name: '0 and "0"', a: 0, b: '0' },
    { name: '"a" and "\\"a\\""', a: 'a', b: '"a"' },
  ])('keeps $name distinct', ({ a, b }) => {
    expect(idKey(a)).not.toBe(idKey(b));
  });
});

describe('errorAnswer', () => {
  it.each<{ name: string; args: Parameters<typeof errorAnswer>; wire: string }>([
    { name: 'without data', args: [7, -32000, 'm'], wire: '{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"m"}}' },
    {
      name: 'with data',
      args: ['a', -32603, 'm', { reason: 'r' }],
      wire: '{"jsonrpc":"2.0","id":"a","error":{"code":-32603,"message":"m","data":{"reason":"r"}}}',
    },
    { name: 'to a null id', args: [null, -32600, 'm'], wire: '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}' },
  ])('$name serializes as a JSON-RPC error response', ({ args, wire }) => {
    const answer = errorAnswer(...args);
    expect(JSON.stringify(answer)).toBe(wire);
    expect(isResponse(answer)).toBe(true);
  });
});
