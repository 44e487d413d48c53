import { describe, expect, it } from 'vitest';
import { parseHostAllowlist, parseOriginAllowlist } from '../../src/core/allowlist.ts';
import { DEFAULT_ALLOWED_HOSTS, DEFAULT_ALLOWED_ORIGINS } from '../../src/config.ts';
import {
  checkGetAccept,
  checkHostAndOrigin,
  checkJsonContentType,
  checkPostAccept,
  readBoundedText,
  readCursor,
  readDeclaredLength,
  readProtocolVersion,
  readSessionId,
  requireSessionId,
} from '../../src/core/request-checks.ts';
import { HEADERS } from '../../src/core/wire.ts';
import { expectHttpError, rejectionOf, thrownBy } from './helpers.ts';

/** Headers with only the given (non-undefined) entries. */
function headersWith(entries: Record<string, string | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(entries)) if (value !== undefined) headers.set(name, value);
  return headers;
}

const SESSION_ID = `${'aZ09-_'.padEnd(42, 'x')}Q`;

describe('header names', () => {
  it('are the spec spellings', () => {
    expect([HEADERS.sessionId, HEADERS.protocolVersion, HEADERS.lastEventId]).toEqual([
      'Mcp-Session-Id',
      'MCP-Protocol-Version',
      'Last-Event-ID',
    ]);
  });
});

describe('checkHostAndOrigin', () => {
  const hosts = parseHostAllowlist(DEFAULT_ALLOWED_HOSTS);
  const origins = parseOriginAllowlist(DEFAULT_ALLOWED_ORIGINS);
  const anyHost = parseHostAllowlist('*');
  const anyOrigin = parseOriginAllowlist('*');

  it.each([
    { name: 'localhost without an Origin', host: 'localhost', origin: undefined },
    { name: 'localhost:8787 from http://localhost:6274', host: 'localhost:8787', origin: 'http://localhost:6274' },
    { name: '127.0.0.1:8787 from http://127.0.0.1:8787', host: '127.0.0.1:8787', origin: 'http://127.0.0.1:8787' },
    { name: '[::1]:8787 from http://[::1]:8787', host: '[::1]:8787', origin: 'http://[::1]:8787' },
    { name: '[::1] without a port or Origin', host: '[::1]', origin: undefined },
  ])('lets through $name', ({ host, origin }) => {
    expect(() => checkHostAndOrigin(headersWith({ Host: host, Origin: origin }), hosts, origins)).not.toThrow();
  });

  it.each([
    {
      name: 'an evil Host',
      host: 'evil.example',
      origin: undefined,
      message: 'Forbidden: host "evil.example" is not allowed (add it to ALLOWED_HOSTS)',
    },
    {
      name: 'an evil Host on an allowed port',
      host: 'evil.example:8787',
      origin: undefined,
      message: 'Forbidden: host "evil.example:8787" is not allowed (add it to ALLOWED_HOSTS)',
    },
    {
      name: 'a missing Host with no URL host',
      host: undefined,
      origin: undefined,
      message: 'Forbidden: host null is not allowed (add it to ALLOWED_HOSTS)',
    },
    {
      name: 'an evil Origin',
      host: 'localhost',
      origin: 'http://evil.example',
      message: 'Forbidden: origin "http://evil.example" is not allowed (add it to ALLOWED_ORIGINS)',
    },
    {
      name: 'an https Origin for an http-only entry',
      host: 'localhost',
      origin: 'https://localhost',
      message: 'Forbidden: origin "https://localhost" is not allowed (add it to ALLOWED_ORIGINS)',
    },
    {
      name: 'the opaque Origin "null"',
      host: 'localhost',
      origin: 'null',
      message: 'Forbidden: origin "null" is not allowed (add it to ALLOWED_ORIGINS)',
    },
    {
      name: 'an evil Host and an evil Origin (the Host is checked first)',
      host: 'evil.example',
      origin: 'http://evil.example',
      message: 'Forbidden: host "evil.example" is not allowed (add it to ALLOWED_HOSTS)',
    },
  ])('refuses $name with 403 / -32000', ({ host, origin, message }) => {
    expectHttpError(
      thrownBy(() => checkHostAndOrigin(headersWith({ Host: host, Origin: origin }), hosts, origins)),
      { status: 403, code: -32000, message },
    );
  });

  it('decides a pair it admitted before again, by the lists it is given and the Origin sent', () => {
    const admitted = headersWith({ Host: 'localhost:8787', Origin: 'http://localhost:6274' });
    checkHostAndOrigin(admitted, hosts, origins);
    // The same Host with another Origin, right after: the Origin is still read.
    expectHttpError(
      thrownBy(() => checkHostAndOrigin(headersWith({ Host: 'localhost:8787', Origin: 'http://evil.example' }), hosts, origins)),
      { status: 403, code: -32000, message: 'Forbidden: origin "http://evil.example" is not allowed (add it to ALLOWED_ORIGINS)' },
    );
    checkHostAndOrigin(admitted, hosts, origins);
    // The same pair against lists that do not admit it (another environment): refused.
    expectHttpError(
      thrownBy(() => checkHostAndOrigin(admitted, parseHostAllowlist('example.com'), origins)),
      {
        status: 403,
        code: -32000,
        message: 'Forbidden: host "localhost:8787" is not allowed (add it to ALLOWED_HOSTS)',
      },
    );
  });

  it.each([
    { name: 'a missing Host header falls back to an allowed URL host', host: undefined, urlHost: 'localhost:8787', refused: undefined },
    {
      name: 'a missing Host header falls back to an evil URL host, refused',
      host: undefined,
      urlHost: 'evil.example',
      refused: 'evil.example',
    },
    {
      name: 'a present Host header wins over an allowed URL host, refused',
      host: 'evil.example',
      urlHost: 'localhost',
      refused: 'evil.example',
    },
    { name: 'a present allowed Host header wins over an evil URL host', host: 'localhost', urlHost: 'evil.example', refused: undefined },
  ])('$name', ({ host, urlHost, refused }) => {
    let asked = 0;
    const check = () =>
      checkHostAndOrigin(headersWith({ Host: host }), hosts, origins, () => {
        asked++;
        return urlHost;
      });
    if (refused === undefined) expect(check).not.toThrow();
    else
      expectHttpError(thrownBy(check), {
        status: 403,
        code: -32000,
        message: `Forbidden: host ${JSON.stringify(refused)} is not allowed (add it to ALLOWED_HOSTS)`,
      });
    // The URL is parsed only when there is no Host header to go by.
    expect(asked).toBe(host === undefined ? 1 : 0);
  });

  it.each([
    {
      name: 'a Host at a port its bare entry does not admit',
      hosts: 'localhost',
      origins: 'http://localhost',
      headers: { Host: 'localhost:8787' },
      message:
        'Forbidden: host "localhost:8787" is not allowed (add it to ALLOWED_HOSTS: its name is listed for other ports, and an entry without a port is the default ports only; "localhost:8787" admits this port, "localhost:*" every port)',
    },
    {
      name: 'a Host at another port than its entry’s',
      hosts: 'mcp.example.com:8443',
      origins: '',
      headers: { Host: 'MCP.example.com:9999' },
      message:
        'Forbidden: host "MCP.example.com:9999" is not allowed (add it to ALLOWED_HOSTS: its name is listed for other ports, and an entry without a port is the default ports only; "mcp.example.com:9999" admits this port, "mcp.example.com:*" every port)',
    },
    {
      name: 'an Origin at a port its bare entry does not admit (MCP Inspector’s)',
      hosts: 'localhost',
      origins: 'http://localhost',
      headers: { Host: 'localhost', Origin: 'http://localhost:6274' },
      message:
        'Forbidden: origin "http://localhost:6274" is not allowed (add it to ALLOWED_ORIGINS: its name is listed for other ports, and an entry without a port is the default ports only; "http://localhost:6274" admits this port, "http://localhost:*" every port)',
    },
    {
      name: 'a Host whose name is not listed at all (no port advice)',
      hosts: 'localhost',
      origins: '',
      headers: { Host: 'evil.example:8787' },
      message: 'Forbidden: host "evil.example:8787" is not allowed (add it to ALLOWED_HOSTS)',
    },
  ])('refuses $name, naming the entries that would admit it', ({ hosts: hostList, origins: originList, headers, message }) => {
    expectHttpError(
      thrownBy(() => checkHostAndOrigin(headersWith(headers), parseHostAllowlist(hostList), parseOriginAllowlist(originList))),
      { status: 403, code: -32000, message },
    );
  });

  it('lets any Host and Origin through when both lists are *', () => {
    expect(() =>
      checkHostAndOrigin(headersWith({ Host: 'evil.example', Origin: 'http://evil.example' }), anyHost, anyOrigin),
    ).not.toThrow();
  });

  it('still refuses an evil Origin when only the Host list is *', () => {
    expectHttpError(
      thrownBy(() => checkHostAndOrigin(headersWith({ Host: 'evil.example', Origin: 'http://evil.example' }), anyHost, origins)),
      { status: 403, code: -32000, message: 'Forbidden: origin "http://evil.example" is not allowed (add it to ALLOWED_ORIGINS)' },
    );
  });
});

describe('checkPostAccept', () => {
  it.each([
    { name: 'both types', accept: 'application/json, text/event-stream' },
    { name: 'both types in the other order', accept: 'text/event-stream, application/json' },
    { name: 'both types in mixed case', accept: 'Application/JSON, Text/Event-Stream' },
    { name: 'both types with non-zero weights', accept: 'application/json;q=0.9, text/event-stream;q=0.1' },
    { name: 'both types with parameters', accept: 'application/json; charset=utf-8, text/event-stream' },
    { name: 'both types plus a wildcard', accept: 'application/json, text/event-stream, */*' },
  ])('accepts $name', ({ accept }) => {
    expect(() => checkPostAccept(headersWith({ Accept: accept }))).not.toThrow();
  });

  it.each([
    { name: 'no Accept header', accept: undefined },
    { name: 'an empty Accept header', accept: '' },
    { name: 'only application/json', accept: 'application/json' },
    { name: 'only text/event-stream', accept: 'text/event-stream' },
    { name: 'only */*', accept: '*/*' },
    { name: 'only subtype wildcards', accept: 'application/*, text/*' },
    { name: 'text/event-stream refused with q=0', accept: 'application/json, text/event-stream;q=0' },
    { name: 'application/json refused with q=0', accept: 'application/json;q=0, text/event-stream' },
    { name: 'application/jsonx instead of application/json', accept: 'application/jsonx, text/event-stream' },
    { name: 'the two types without a comma', accept: 'application/json text/event-stream' },
    { name: 'a malformed weight on one type', accept: 'application/json;q=2, text/event-stream' },
  ])('refuses $name with 406 / -32000', ({ accept }) => {
    expectHttpError(
      thrownBy(() => checkPostAccept(headersWith({ Accept: accept }))),
      { status: 406, code: -32000, message: 'Not Acceptable: the client must accept both application/json and text/event-stream' },
    );
  });
});

describe('checkGetAccept', () => {
  it.each([
    { name: 'text/event-stream', accept: 'text/event-stream' },
    { name: 'text/event-stream in upper case with a weight', accept: 'TEXT/EVENT-STREAM;q=0.5' },
    { name: 'text/event-stream among others', accept: 'application/json, text/event-stream' },
  ])('accepts $name', ({ accept }) => {
    expect(() => checkGetAccept(headersWith({ Accept: accept }))).not.toThrow();
  });

  it.each([
    { name: 'no Accept header', accept: undefined },
    { name: 'only application/json', accept: 'application/json' },
    { name: 'only */*', accept: '*/*' },
    { name: 'only text/*', accept: 'text/*' },
    { name: 'text/event-stream with q=0', accept: 'text/event-stream;q=0' },
  ])('refuses $name with 406 / -32000', ({ accept }) => {
    expectHttpError(
      thrownBy(() => checkGetAccept(headersWith({ Accept: accept }))),
      { status: 406, code: -32000, message: 'Not Acceptable: the client must accept text/event-stream' },
    );
  });
});

describe('checkJsonContentType', () => {
  it.each([
    { name: 'application/json', type: 'application/json' },
    { name: 'charset=utf-8', type: 'application/json; charset=utf-8' },
    { name: 'charset=UTF-8', type: 'application/json;charset=UTF-8' },
  ])('accepts $name', ({ type }) => {
    expect(() => checkJsonContentType(headersWith({ 'Content-Type': type }))).not.toThrow();
  });

  it.each([
    { name: 'a missing Content-Type', type: undefined },
    { name: 'another charset', type: 'application/json; charset=iso-8859-1' },
    { name: 'application/jsonx', type: 'application/jsonx' },
    { name: 'text/plain', type: 'text/plain' },
    { name: 'form data', type: 'application/x-www-form-urlencoded' },
  ])('refuses $name with 415 / -32000', ({ type }) => {
    expectHttpError(
      thrownBy(() => checkJsonContentType(headersWith({ 'Content-Type': type }))),
      { status: 415, code: -32000, message: 'Unsupported Media Type: Content-Type must be application/json' },
    );
  });
});

describe('readProtocolVersion', () => {
  it('assumes 2025-03-26 when the header is absent', () => {
    expect(readProtocolVersion(new Headers())).toBe('2025-03-26');
  });

  it.each([
    { name: '2025-11-25', value: '2025-11-25', version: '2025-11-25' },
    { name: '2025-06-18', value: '2025-06-18', version: '2025-06-18' },
    { name: '2025-03-26', value: '2025-03-26', version: '2025-03-26' },
    { name: 'a version with surrounding whitespace', value: '  2025-06-18  ', version: '2025-06-18' },
  ])('reads $name', ({ value, version }) => {
    expect(readProtocolVersion(headersWith({ [HEADERS.protocolVersion]: value }))).toBe(version);
  });

  it('reads the header whatever the case of its name', () => {
    expect(readProtocolVersion(headersWith({ 'mcp-protocol-version': '2025-11-25' }))).toBe('2025-11-25');
  });

  it.each([
    { name: 'the pre-Streamable-HTTP 2024-11-05', value: '2024-11-05' },
    { name: 'the sessionless 2026-07-28', value: '2026-07-28' },
    { name: 'an arbitrary word', value: 'latest' },
    { name: 'an empty value', value: '' },
  ])('refuses $name with 400 / -32000, listing the supported revisions as the 2026-07-28 path does', ({ value }) => {
    expectHttpError(
      thrownBy(() => readProtocolVersion(headersWith({ [HEADERS.protocolVersion]: value }))),
      {
        status: 400,
        code: -32000,
        message: `Bad Request: unsupported protocol version ${JSON.stringify(value)}`,
        data: { supported: ['2025-11-25', '2025-06-18', '2025-03-26'], requested: value },
      },
    );
  });

  it('refuses the header sent twice (values joined by ", ") with 400 / -32000', () => {
    const headers = new Headers();
    headers.append(HEADERS.protocolVersion, '2025-11-25');
    headers.append(HEADERS.protocolVersion, '2025-06-18');
    expectHttpError(
      thrownBy(() => readProtocolVersion(headers)),
      {
        status: 400,
        code: -32000,
        message: 'Bad Request: unsupported protocol version "2025-11-25, 2025-06-18"',
        data: { supported: ['2025-11-25', '2025-06-18', '2025-03-26'], requested: '2025-11-25, 2025-06-18' },
      },
    );
  });
});

describe('readSessionId and requireSessionId', () => {
  it('readSessionId gives undefined when the header is absent', () => {
    expect(readSessionId(new Headers())).toBeUndefined();
  });

  it('requireSessionId refuses an absent header with 400 / -32000', () => {
    expectHttpError(
      thrownBy(() => requireSessionId(new Headers())),
      { status: 400, code: -32000, message: 'Bad Request: Mcp-Session-Id header is required' },
    );
  });

  it.each([
    { name: 'readSessionId', read: readSessionId },
    { name: 'requireSessionId', read: requireSessionId },
  ])('$name returns a well-formed id, whatever the case of the header name', ({ read }) => {
    expect(read(headersWith({ [HEADERS.sessionId]: SESSION_ID }))).toBe(SESSION_ID);
    expect(read(headersWith({ 'mcp-session-id': SESSION_ID }))).toBe(SESSION_ID);
  });

  const malformed = [
    { name: 'an empty id', value: '' },
    { name: 'an id with an inner space', value: `${SESSION_ID.slice(2)} x` },
    { name: 'an id with a control character', value: `${SESSION_ID.slice(1)}\u007f` },
    { name: 'an id of 1,025 characters', value: 'A'.repeat(1025) },
  ];
  it.each(
    malformed.flatMap((row) => [
      { ...row, fn: 'readSessionId', read: readSessionId },
      { ...row, fn: 'requireSessionId', read: requireSessionId },
    ]),
  )('$fn refuses $name with 400 / -32000', ({ value, read }) => {
    expectHttpError(
      thrownBy(() => read(headersWith({ [HEADERS.sessionId]: value }))),
      { status: 400, code: -32000, message: 'Bad Request: malformed Mcp-Session-Id header' },
    );
  });

  // Visible ASCII, but not an id this server issues: another deployment's, or a guess.
  const foreign = [
    { name: 'a 42-character id', value: SESSION_ID.slice(1) },
    { name: 'a 44-character id', value: `${SESSION_ID}x` },
    { name: 'an id with a plus', value: `${SESSION_ID.slice(1)}+` },
    { name: 'an id with a slash', value: `${SESSION_ID.slice(1)}/` },
    { name: 'an id with padding', value: `${SESSION_ID.slice(1)}=` },
    { name: 'an id with a dot', value: `${SESSION_ID.slice(1)}.` },
    { name: 'a UUID', value: '123e4567-e89b-12d3-a456-426614174000' },
    { name: '64 hex characters', value: 'ab'.repeat(32) },
    { name: 'an id of 1,024 characters', value: 'A'.repeat(1024) },
  ];
  it.each(
    foreign.flatMap((row) => [
      { ...row, fn: 'readSessionId', read: readSessionId },
      { ...row, fn: 'requireSessionId', read: requireSessionId },
    ]),
  )('$fn answers $name as an unknown session: 404 / -32001', ({ value, read }) => {
    expectHttpError(
      thrownBy(() => read(headersWith({ [HEADERS.sessionId]: value }))),
      {
        status: 404,
        code: -32001,
        message: 'Session not found: it ended or never existed; start a new one with initialize',
      },
    );
  });
});

describe('readCursor', () => {
  it('gives undefined when Last-Event-ID is absent', () => {
    expect(readCursor(new Headers())).toBeUndefined();
  });

  it.each([
    { name: 'a canonical id', value: '1-2-3', cursor: { epoch: 1, stream: 2, seq: 3 } },
    { name: 'the priming event id', value: '0-0-0', cursor: { epoch: 0, stream: 0, seq: 0 } },
    { name: 'an id with surrounding whitespace', value: ' 4-5-6 ', cursor: { epoch: 4, stream: 5, seq: 6 } },
  ])('reads $name', ({ value, cursor }) => {
    expect(readCursor(headersWith({ [HEADERS.lastEventId]: value }))).toEqual(cursor);
  });

  it.each([
    { name: 'an empty value', value: '' },
    { name: 'a word', value: 'abc' },
    { name: 'two parts', value: '1-2' },
    { name: 'four parts', value: '1-2-3-4' },
    { name: 'a leading zero', value: '01-2-3' },
    { name: 'a sign', value: '-1-2-3' },
    { name: 'an unsafe integer', value: '99999999999999999-0-0' },
    { name: 'an id of another server (a UUID)', value: '123e4567-e89b-12d3-a456-426614174000' },
  ])('refuses $name with 400 / -32000 and reason malformed_cursor', ({ value }) => {
    expectHttpError(
      thrownBy(() => readCursor(headersWith({ [HEADERS.lastEventId]: value }))),
      {
        status: 400,
        code: -32000,
        message: 'Bad Request: Last-Event-ID is not an event id of this server',
        data: { reason: 'malformed_cursor' },
      },
    );
  });
});

describe('readDeclaredLength', () => {
  it.each([
    { name: 'absent', contentLength: undefined, limit: 10, expected: undefined },
    { name: 'zero', contentLength: '0', limit: 10, expected: 0 },
    { name: 'at the limit', contentLength: '10', limit: 10, expected: 10 },
  ])('returns the declared length when $name', ({ contentLength, limit, expected }) => {
    expect(readDeclaredLength(headersWith({ 'Content-Length': contentLength }), limit)).toBe(expected);
  });

  it.each([
    { name: 'one byte over the limit', contentLength: '11', limit: 10 },
    { name: 'far over the limit', contentLength: '99999999999', limit: 10 },
  ])('refuses a declared length $name with 413', ({ contentLength, limit }) => {
    expectHttpError(
      thrownBy(() => readDeclaredLength(headersWith({ 'Content-Length': contentLength }), limit)),
      {
        status: 413,
        code: -32000,
        message: `Payload Too Large: the body exceeds ${limit} bytes`,
      },
    );
  });
});

describe('readBoundedText', () => {
  const encoder = new TextEncoder();

  /** A request whose body is streamed in the given chunks, with an optional Content-Length. */
  function streamed(chunks: readonly Uint8Array[], contentLength?: string) {
    let pulled = 0;
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = chunks[pulled++];
        if (chunk === undefined) controller.close();
        else controller.enqueue(chunk);
      },
      cancel() {
        cancelled = true;
      },
    });
    const request = new Request('http://localhost/mcp', {
      method: 'POST',
      body,
      headers: headersWith({ 'Content-Length': contentLength }),
    });
    return { request, pulled: () => pulled, cancelled: () => cancelled };
  }

  it.each([
    { name: 'a body under the limit', text: '{"a":1}', limit: 100 },
    { name: 'a body of exactly the limit', text: 'hello', limit: 5 },
    { name: 'multi-byte text of exactly the limit in bytes', text: 'é€', limit: 5 },
    { name: 'an empty body', text: '', limit: 0 },
  ])('reads $name', async ({ text, limit }) => {
    const request = new Request('http://localhost/mcp', { method: 'POST', body: text });
    expect(await readBoundedText(request, limit)).toBe(text);
  });

  it('reads a request without a body as the empty string', async () => {
    expect(await readBoundedText(new Request('http://localhost/mcp'), 10)).toBe('');
  });

  it('reads a body split into many chunks, including a character split across chunks', async () => {
    const euro = encoder.encode('€');
    const { request } = streamed([encoder.encode('["'), euro.subarray(0, 1), euro.subarray(1), encoder.encode('"]')]);
    expect(await readBoundedText(request, 7)).toBe('["€"]');
  });

  it('strips a leading UTF-8 byte order mark', async () => {
    const request = new Request('http://localhost/mcp', { method: 'POST', body: new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]) });
    expect(await readBoundedText(request, 5)).toBe('{}');
  });

  it('ignores a non-numeric Content-Length and reads the body', async () => {
    const { request } = streamed([encoder.encode('abc')], 'abc');
    expect(await readBoundedText(request, 3)).toBe('abc');
  });

  it.each([
    { name: 'one byte over the limit', contentLength: '6', limit: 5 },
    { name: 'far over the limit', contentLength: '4194305', limit: 4194304 },
  ])('refuses a declared Content-Length $name with 413 without reading the body', async ({ contentLength, limit }) => {
    const { request } = streamed([encoder.encode('x')], contentLength);
    expectHttpError(await rejectionOf(() => readBoundedText(request, limit)), {
      status: 413,
      code: -32000,
      message: `Payload Too Large: the body exceeds ${limit} bytes`,
    });
    expect(request.bodyUsed).toBe(false);
    expect(request.body?.locked).toBe(false);
  });

  it('accepts a declared Content-Length of exactly the limit', async () => {
    const { request } = streamed([encoder.encode('hello')], '5');
    expect(await readBoundedText(request, 5)).toBe('hello');
  });

  it.each([
    { name: 'no Content-Length', contentLength: undefined },
    { name: 'a Content-Length that understates the body', contentLength: '3' },
  ])('refuses a streamed body over the limit with $name with 413 and cancels the stream', async ({ contentLength }) => {
    const chunk = encoder.encode('abcd');
    const { request, pulled, cancelled } = streamed([chunk, chunk, chunk, chunk, chunk, chunk], contentLength);
    expectHttpError(await rejectionOf(() => readBoundedText(request, 5)), {
      status: 413,
      code: -32000,
      message: 'Payload Too Large: the body exceeds 5 bytes',
    });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(cancelled()).toBe(true);
    expect(pulled()).toBeLessThan(6);
  });

  it('refuses a one-byte-too-long body sent as a string with 413', async () => {
    const request = new Request('http://localhost/mcp', { method: 'POST', body: 'hello!' });
    expectHttpError(await rejectionOf(() => readBoundedText(request, 5)), {
      status: 413,
      code: -32000,
      message: 'Payload Too Large: the body exceeds 5 bytes',
    });
  });

  it('counts the limit in bytes, not characters', async () => {
    const request = new Request('http://localhost/mcp', { method: 'POST', body: 'é' });
    expectHttpError(await rejectionOf(() => readBoundedText(request, 1)), {
      status: 413,
      code: -32000,
      message: 'Payload Too Large: the body exceeds 1 bytes',
    });
  });

  it.each([
    { name: 'a lone 0xFF byte', bytes: [0xff] },
    { name: 'a truncated three-byte sequence', bytes: [0x22, 0xe2, 0x82] },
    { name: 'an overlong encoding of "/"', bytes: [0xc0, 0xaf] },
    { name: 'an encoded UTF-16 surrogate', bytes: [0xed, 0xa0, 0x80] },
    { name: 'a stray continuation byte', bytes: [0x7b, 0x80, 0x7d] },
    { name: 'Latin-1 text', bytes: [0x22, 0xe9, 0x22] },
  ])('refuses $name as a 400 parse error (-32700)', async ({ bytes }) => {
    const request = new Request('http://localhost/mcp', { method: 'POST', body: new Uint8Array(bytes) });
    expectHttpError(await rejectionOf(() => readBoundedText(request, 100)), {
      status: 400,
      code: -32700,
      message: 'Parse error: the body is not valid UTF-8',
    });
  });
});
