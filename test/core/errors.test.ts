import { describe, expect, it } from 'vitest';
import { asHttpError, errorBody, errorResponse, httpErrors, McpHttpError } from '../../src/core/errors.ts';
import { JsonRpcCode } from '../../src/core/wire.ts';
import { expectHttpError, type ExpectedHttpError } from './helpers.ts';

describe('JsonRpcCode', () => {
  it.each([
    { name: 'ParseError', code: JsonRpcCode.ParseError, value: -32700 },
    { name: 'InvalidRequest', code: JsonRpcCode.InvalidRequest, value: -32600 },
    { name: 'InternalError', code: JsonRpcCode.InternalError, value: -32603 },
    { name: 'ServerError', code: JsonRpcCode.ServerError, value: -32000 },
    { name: 'SessionNotFound', code: JsonRpcCode.SessionNotFound, value: -32001 },
  ])('$name is $value', ({ code, value }) => {
    expect(code).toBe(value);
  });
});

describe('McpHttpError', () => {
  it('is an Error named McpHttpError carrying its message', () => {
    const error = new McpHttpError(400, -32000, 'nope');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('McpHttpError');
    expect(error.message).toBe('nope');
  });

  it('defaults to no data, a null id and no extra headers', () => {
    expectHttpError(new McpHttpError(418, -32000, 'teapot'), { status: 418, code: -32000, message: 'teapot' });
  });

  it('keeps every constructor argument', () => {
    expectHttpError(new McpHttpError(409, -32000, 'm', { reason: 'cursor_ahead', n: 1 }, 'abc', { 'X-A': 'b' }), {
      status: 409,
      code: -32000,
      message: 'm',
      data: { reason: 'cursor_ahead', n: 1 },
      id: 'abc',
      headers: { 'X-A': 'b' },
    });
  });
});

describe('httpErrors', () => {
  it.each<{ name: string; error: McpHttpError; expected: ExpectedHttpError }>([
    {
      name: 'badRequest without data is a 400 / -32000 with no data',
      error: httpErrors.badRequest('x'),
      expected: { status: 400, code: -32000, message: 'Bad Request: x' },
    },
    {
      name: 'badRequest with data is a 400 / -32000 carrying the data',
      error: httpErrors.badRequest('x', { reason: 'malformed_cursor' }),
      expected: { status: 400, code: -32000, message: 'Bad Request: x', data: { reason: 'malformed_cursor' } },
    },
    {
      name: 'parseError is a 400 / -32700',
      error: httpErrors.parseError('x'),
      expected: { status: 400, code: -32700, message: 'Parse error: x' },
    },
    {
      name: 'invalidRequest without an id is a 400 / -32600 answering id null',
      error: httpErrors.invalidRequest('x'),
      expected: { status: 400, code: -32600, message: 'Invalid Request: x' },
    },
    {
      name: 'invalidRequest with a numeric id echoes it',
      error: httpErrors.invalidRequest('x', 7),
      expected: { status: 400, code: -32600, message: 'Invalid Request: x', id: 7 },
    },
    {
      name: 'invalidRequest with a string id echoes it',
      error: httpErrors.invalidRequest('x', 'seven'),
      expected: { status: 400, code: -32600, message: 'Invalid Request: x', id: 'seven' },
    },
    {
      name: 'invalidParams without an id is a 400 / -32602 answering id null',
      error: httpErrors.invalidParams('x'),
      expected: { status: 400, code: -32602, message: 'Invalid params: x' },
    },
    {
      name: 'invalidParams with an id echoes it',
      error: httpErrors.invalidParams('x', 'init-1'),
      expected: { status: 400, code: -32602, message: 'Invalid params: x', id: 'init-1' },
    },
    {
      name: 'forbidden is a 403 / -32000',
      error: httpErrors.forbidden('x'),
      expected: { status: 403, code: -32000, message: 'Forbidden: x' },
    },
    {
      name: 'sessionNotFound is a 404 / -32001',
      error: httpErrors.sessionNotFound(),
      expected: { status: 404, code: -32001, message: 'Session not found: it ended or never existed; start a new one with initialize' },
    },
    {
      name: 'methodNotAllowed is a 405 / -32000 with an Allow header joined by ", "',
      error: httpErrors.methodNotAllowed(['GET', 'POST', 'DELETE']),
      expected: { status: 405, code: -32000, message: 'Method not allowed', headers: { Allow: 'GET, POST, DELETE' } },
    },
    {
      name: 'methodNotAllowed with no methods sends an empty Allow header',
      error: httpErrors.methodNotAllowed([]),
      expected: { status: 405, code: -32000, message: 'Method not allowed', headers: { Allow: '' } },
    },
    {
      name: 'notAcceptable is a 406 / -32000',
      error: httpErrors.notAcceptable('x'),
      expected: { status: 406, code: -32000, message: 'Not Acceptable: x' },
    },
    {
      name: 'conflict is a 409 / -32000 carrying the reason',
      error: httpErrors.conflict('unknown_stream', 'm'),
      expected: { status: 409, code: -32000, message: 'm', data: { reason: 'unknown_stream' } },
    },
    {
      name: 'conflict merges extra data after the reason and echoes the id',
      error: httpErrors.conflict('duplicate_request_id', 'm', { requestId: 3 }, 3),
      expected: { status: 409, code: -32000, message: 'm', data: { reason: 'duplicate_request_id', requestId: 3 }, id: 3 },
    },
    {
      name: 'gone is a 410 / -32000 carrying the reason',
      error: httpErrors.gone('events_pruned', 'm'),
      expected: { status: 410, code: -32000, message: 'm', data: { reason: 'events_pruned' } },
    },
    {
      name: 'payloadTooLarge is a 413 / -32000 naming the limit',
      error: httpErrors.payloadTooLarge(1024),
      expected: { status: 413, code: -32000, message: 'Payload Too Large: the body exceeds 1024 bytes' },
    },
    {
      name: 'unsupportedMediaType is a 415 / -32000',
      error: httpErrors.unsupportedMediaType('x'),
      expected: { status: 415, code: -32000, message: 'Unsupported Media Type: x' },
    },
    {
      name: 'tokenRevoked is a 401 / -32000 with the reason and the challenge it is given',
      error: httpErrors.tokenRevoked('Bearer error="invalid_token"'),
      expected: {
        status: 401,
        code: -32000,
        message: 'Unauthorized: this token was issued before its principal’s access was revoked; authorize again for a new token',
        data: { reason: 'token_revoked' },
        headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
      },
    },
    {
      name: 'tooManyListens is a 429 / -32000 naming its reason and limit, answering the listen',
      error: httpErrors.tooManyListens(32, 7),
      expected: {
        status: 429,
        code: -32000,
        message: 'you hold the 32 listen streams you may hold at once on this server; close one you no longer read, then listen again',
        data: { reason: 'too_many_listens', limit: 32 },
        id: 7,
      },
    },
    {
      name: 'tooManyStreams is a 429 / -32000 naming its reason and limit (id null: a GET)',
      error: httpErrors.tooManyStreams(100),
      expected: {
        status: 429,
        code: -32000,
        message:
          'you hold the 100 open streams you may hold at once on this server; close one you no longer read (or let a call finish), then retry',
        data: { reason: 'too_many_streams', limit: 100 },
      },
    },
    {
      name: 'internal is a 500 / -32603 with a fixed message',
      error: httpErrors.internal(),
      expected: { status: 500, code: -32603, message: 'Internal error' },
    },
  ])('$name', ({ error, expected }) => {
    expectHttpError(error, expected);
  });
});

describe('asHttpError', () => {
  it('returns an McpHttpError unchanged (the same object)', () => {
    const error = httpErrors.conflict('cursor_ahead', 'm');
    expect(asHttpError(error)).toBe(error);
  });

  const secret = 'secret-detail-from-a-bug';
  it.each([
    { name: 'a plain Error', thrown: new Error(secret) },
    { name: 'a TypeError', thrown: new TypeError(secret) },
    { name: 'a thrown string', thrown: secret },
    { name: 'undefined', thrown: undefined },
    { name: 'null', thrown: null },
    { name: 'an object shaped like an McpHttpError', thrown: { status: 400, code: -32600, message: secret, name: 'McpHttpError' } },
    { name: 'an Error renamed McpHttpError', thrown: Object.assign(new Error(secret), { name: 'McpHttpError', status: 400 }) },
  ])('turns $name into a bare 500 / -32603 that leaks neither message nor stack', ({ thrown }) => {
    const error = asHttpError(thrown);
    expectHttpError(error, { status: 500, code: -32603, message: 'Internal error' });
    expect(errorBody(error)).toBe('{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}');
    expect(errorBody(error)).not.toContain(secret);
    expect(errorBody(error)).not.toContain('stack');
  });
});

describe('errorBody', () => {
  it.each([
    {
      name: 'omits the data member when there is no data',
      error: httpErrors.forbidden('x'),
      body: '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Forbidden: x"}}',
    },
    {
      name: 'includes the data member with the reason',
      error: httpErrors.gone('events_pruned', 'gone'),
      body: '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"gone","data":{"reason":"events_pruned"}}}',
    },
    {
      name: 'echoes a numeric id',
      error: httpErrors.invalidRequest('x', 5),
      body: '{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid Request: x"}}',
    },
    {
      name: 'echoes a string id',
      error: httpErrors.invalidRequest('x', '5'),
      body: '{"jsonrpc":"2.0","id":"5","error":{"code":-32600,"message":"Invalid Request: x"}}',
    },
    {
      name: 'never serialises the extra response headers',
      error: httpErrors.methodNotAllowed(['GET']),
      body: '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Method not allowed"}}',
    },
  ])('$name', ({ error, body }) => {
    expect(errorBody(error)).toBe(body);
  });
});

describe('errorResponse', () => {
  it('sends the status, a JSON Content-Type and exactly the error body', async () => {
    const response = errorResponse(httpErrors.conflict('stream_superseded', 'superseded'));
    expect(response.status).toBe(409);
    expect([...response.headers]).toEqual([['content-type', 'application/json']]);
    expect(await response.text()).toBe(
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"superseded","data":{"reason":"stream_superseded"}}}',
    );
  });

  it.each<{ name: string; error: McpHttpError; headers: HeadersInit; expected: [string, string][] }>([
    {
      name: 'keeps caller headers alongside the JSON Content-Type',
      error: httpErrors.sessionNotFound(),
      headers: { 'Mcp-Epoch': '3' },
      expected: [
        ['content-type', 'application/json'],
        ['mcp-epoch', '3'],
      ],
    },
    {
      name: 'overrides a caller Content-Type with application/json',
      error: httpErrors.sessionNotFound(),
      headers: { 'Content-Type': 'text/plain' },
      expected: [['content-type', 'application/json']],
    },
    {
      name: 'adds the error headers (Allow on a 405)',
      error: httpErrors.methodNotAllowed(['GET', 'POST']),
      headers: {},
      expected: [
        ['allow', 'GET, POST'],
        ['content-type', 'application/json'],
      ],
    },
    {
      name: 'lets the error headers win over caller headers of the same name',
      error: httpErrors.methodNotAllowed(['GET']),
      headers: new Headers({ Allow: 'PUT' }),
      expected: [
        ['allow', 'GET'],
        ['content-type', 'application/json'],
      ],
    },
    {
      name: 'accepts caller headers as an array of pairs',
      error: httpErrors.internal(),
      headers: [['X-Trace', 'abc']],
      expected: [
        ['content-type', 'application/json'],
        ['x-trace', 'abc'],
      ],
    },
  ])('$name', ({ error, headers, expected }) => {
    const response = errorResponse(error, headers);
    expect(response.status).toBe(error.status);
    expect([...response.headers]).toEqual(expected);
  });

  it.each([
    { name: '400 parse error', error: httpErrors.parseError('p'), status: 400, code: -32700 },
    { name: '404 session not found', error: httpErrors.sessionNotFound(), status: 404, code: -32001 },
    { name: '413 payload too large', error: httpErrors.payloadTooLarge(1), status: 413, code: -32000 },
    { name: '500 from an unknown throw', error: asHttpError(new Error('boom')), status: 500, code: -32603 },
  ])('carries the $name status and its JSON-RPC code on the wire', async ({ error, status, code }) => {
    const response = errorResponse(error);
    expect(response.status).toBe(status);
    const body = (await response.json()) as { jsonrpc: string; id: unknown; error: { code: number } };
    expect(body.jsonrpc).toBe('2.0');
    expect(body.id).toBeNull();
    expect(body.error.code).toBe(code);
  });

  it('does not mutate the caller headers object', () => {
    const headers = new Headers({ 'Content-Type': 'text/plain' });
    errorResponse(httpErrors.methodNotAllowed(['GET']), headers);
    expect([...headers]).toEqual([['content-type', 'text/plain']]);
  });
});
