/**
 * What the generator makes, the requests: an `Action` is one whole HTTP request — method,
 * path, headers, the session and cursor it names, its body (fuzz-bodies.ts) — and
 * `sequenceArb` makes sequences of them, whose later requests name what earlier ones were given.
 */
import fc from 'fast-check';
import { type Body, postBody } from './fuzz-bodies.ts';
import { LEGACY_VERSIONS, MODERN_VERSION } from './fuzz-types.ts';

/** Which session a request names; real ids are only known when it runs, so it names them by index. */
export type SessionRef =
  | { kind: 'none' }
  | { kind: 'live'; pick: number }
  | { kind: 'witness'; pick: number }
  | { kind: 'deleted'; pick: number }
  | { kind: 'literal'; value: string };

/**
 * Which cursor a GET sends: one the server issued (maybe spoiled), another session's, one of
 * any stream and seq in the session's own epoch (`epoch` 0; 1–3: the epoch after it, 1, 0), or
 * any text. A session's first epoch is random, so only `shaped` reaches streams the fuzz never
 * read an id of.
 */
export type CursorRef =
  | { kind: 'none' }
  | { kind: 'real'; pick: number; mutation: number; foreign: boolean }
  | { kind: 'shaped'; epoch: number; stream: number; seq: number }
  | { kind: 'literal'; value: string };

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
export const SESSION_VERSION = '\u0000session-version';
export const BODY_METHOD = '\u0000body-method';
export const BODY_NAME = '\u0000body-name';
export const BODY_NAME_B64 = '\u0000body-name-base64';

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
      .record({ epoch: fc.nat({ max: 3 }), stream: fc.nat({ max: 12 }), seq: fc.nat({ max: 12 }) })
      .map((r): CursorRef => ({ kind: 'shaped', ...r })),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
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
