/**
 * The Events wire (src/core/events-wire.ts): SEP-3415's names and numbers as the text gives them
 * (so a renumbering shows here as one failing row), and the parsing of `events/poll`,
 * `events/stream` and `events/list` params into typed values or a -32602 refusal with a reason.
 */
import { describe, expect, it } from 'vitest';
import {
  clientDeclaresEvents,
  EVENTS_EXTENSION_ID,
  EventsErrorCode,
  EventsMethod,
  EventsNotification,
  eventsError,
  eventsErrorResponse,
  MAX_CURSOR_LENGTH,
  MAX_EVENT_NAME_LENGTH,
  parseListParams,
  parsePollParams,
  parseStreamParams,
  SUBSCRIPTION_ID_META_KEY,
  subscriptionMeta,
} from '../../src/core/events-wire.ts';

describe('the names and numbers of SEP-3415', () => {
  it('extension id and subscription-id meta key', () => {
    expect(EVENTS_EXTENSION_ID).toBe('io.modelcontextprotocol/events');
    expect(SUBSCRIPTION_ID_META_KEY).toBe('io.modelcontextprotocol/subscriptionId');
    expect(subscriptionMeta(7)).toEqual({ _meta: { 'io.modelcontextprotocol/subscriptionId': 7 } });
  });

  it('methods and notifications, all under the reserved prefixes', () => {
    expect(Object.values(EventsMethod)).toEqual(['events/list', 'events/poll', 'events/stream', 'events/subscribe', 'events/unsubscribe']);
    expect(Object.values(EventsNotification)).toEqual([
      'notifications/events/active',
      'notifications/events/event',
      'notifications/events/heartbeat',
      'notifications/events/error',
      'notifications/events/terminated',
      'notifications/events/list_changed',
    ]);
  });

  // SEP-3415 "Error Handling" (the sketch's -32011..-32015 are not these).
  it.each([
    ['InvalidParams', -32602],
    ['NotFound', -32023],
    ['Forbidden', -32024],
    ['ResourceExhausted', -32025],
    ['Unsupported', -32026],
    ['CallbackEndpointError', -32027],
  ] as const)('%s is %i', (name, code) => {
    expect(EventsErrorCode[name]).toBe(code);
  });

  it('an error takes its code from the table and carries its typed data', () => {
    expect(eventsError('NotFound', 'no event type "x"', { kind: 'event' })).toEqual({
      code: -32023,
      message: 'NotFound: no event type "x"',
      data: { kind: 'event' },
    });
    expect(eventsError('Forbidden', '', { reason: 'Access revoked' })).toEqual({
      code: -32024,
      message: 'Forbidden',
      data: { reason: 'Access revoked' },
    });
    expect(eventsErrorResponse(3, eventsError('ResourceExhausted', 'too many streams', { limit: 'streams', max: 8 }))).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32025, message: 'ResourceExhausted: too many streams', data: { limit: 'streams', max: 8 } },
    });
  });
});

const invalid = (reason: string) => ({ invalid: expect.objectContaining({ code: -32602, data: { reason } }) });

describe('parsePollParams', () => {
  it.each<{ name: string; params: unknown; parsed: unknown }>([
    {
      name: 'the SEP example',
      params: { name: 'email.received', arguments: { from: '*@example.com' }, cursor: null, maxAgeMs: 300000, maxEvents: 50 },
      parsed: { name: 'email.received', arguments: { from: '*@example.com' }, cursor: null, maxAgeMs: 300000, maxEvents: 50 },
    },
    // "An absent cursor field MUST be treated identically to an explicit cursor: null."
    {
      name: 'cursor absent = null',
      params: { name: 'a' },
      parsed: { name: 'a', arguments: {}, cursor: null, maxAgeMs: undefined, maxEvents: undefined },
    },
    { name: 'a cursor string', params: { name: 'a', cursor: 'abc.def' }, parsed: expect.objectContaining({ cursor: 'abc.def' }) },
    { name: 'maxAgeMs 0', params: { name: 'a', maxAgeMs: 0 }, parsed: expect.objectContaining({ maxAgeMs: 0 }) },
    { name: 'unknown members ignored', params: { name: 'a', future: 1, _meta: {} }, parsed: expect.objectContaining({ name: 'a' }) },
    { name: 'not an object', params: [], parsed: invalid('invalid_params') },
    { name: 'no params', params: undefined, parsed: invalid('invalid_params') },
    { name: 'no name', params: { cursor: null }, parsed: invalid('invalid_params') },
    { name: 'empty name', params: { name: '' }, parsed: invalid('invalid_params') },
    { name: 'a name too long', params: { name: 'n'.repeat(MAX_EVENT_NAME_LENGTH + 1) }, parsed: invalid('invalid_params') },
    { name: 'arguments an array', params: { name: 'a', arguments: [] }, parsed: invalid('invalid_arguments') },
    { name: 'arguments null', params: { name: 'a', arguments: null }, parsed: invalid('invalid_arguments') },
    { name: 'cursor a number', params: { name: 'a', cursor: 5 }, parsed: invalid('malformed_cursor') },
    { name: 'cursor empty', params: { name: 'a', cursor: '' }, parsed: invalid('malformed_cursor') },
    { name: 'cursor too long', params: { name: 'a', cursor: 'c'.repeat(MAX_CURSOR_LENGTH + 1) }, parsed: invalid('malformed_cursor') },
    { name: 'maxAgeMs negative', params: { name: 'a', maxAgeMs: -1 }, parsed: invalid('invalid_params') },
    { name: 'maxAgeMs fractional', params: { name: 'a', maxAgeMs: 1.5 }, parsed: invalid('invalid_params') },
    { name: 'maxAgeMs a string', params: { name: 'a', maxAgeMs: '300000' }, parsed: invalid('invalid_params') },
    { name: 'maxEvents 0', params: { name: 'a', maxEvents: 0 }, parsed: invalid('invalid_params') },
    { name: 'maxEvents negative', params: { name: 'a', maxEvents: -3 }, parsed: invalid('invalid_params') },
    { name: 'maxEvents fractional', params: { name: 'a', maxEvents: 2.5 }, parsed: invalid('invalid_params') },
  ])('$name', ({ params, parsed }) => {
    expect(parsePollParams(params)).toEqual(parsed);
  });
});

describe('parseStreamParams', () => {
  it.each<{ name: string; params: unknown; parsed: unknown }>([
    {
      name: 'the SEP example',
      params: { name: 'email.received', arguments: { redact_pii: true }, cursor: null, maxAgeMs: 300000 },
      parsed: { name: 'email.received', arguments: { redact_pii: true }, cursor: null, maxAgeMs: 300000 },
    },
    {
      name: 'reconnect with the last cursor',
      params: { name: 'a', cursor: 'x.y' },
      parsed: { name: 'a', arguments: {}, cursor: 'x.y', maxAgeMs: undefined },
    },
    // maxEvents is poll's: ignored on a stream like any member the text does not define for it.
    {
      name: 'maxEvents ignored',
      params: { name: 'a', maxEvents: 0 },
      parsed: { name: 'a', arguments: {}, cursor: null, maxAgeMs: undefined },
    },
    { name: 'no name', params: {}, parsed: invalid('invalid_params') },
    { name: 'cursor an object', params: { name: 'a', cursor: {} }, parsed: invalid('malformed_cursor') },
    { name: 'arguments a string', params: { name: 'a', arguments: 'x' }, parsed: invalid('invalid_arguments') },
  ])('$name', ({ params, parsed }) => {
    expect(parseStreamParams(params)).toEqual(parsed);
  });
});

describe('parseListParams', () => {
  it.each<{ name: string; params: unknown; parsed: unknown }>([
    { name: 'no params', params: undefined, parsed: { cursor: undefined } },
    { name: 'empty params', params: {}, parsed: { cursor: undefined } },
    { name: 'a page cursor', params: { cursor: 'p2' }, parsed: { cursor: 'p2' } },
    { name: 'params an array', params: [1], parsed: invalid('invalid_params') },
    { name: 'cursor null', params: { cursor: null }, parsed: invalid('malformed_cursor') },
    { name: 'cursor empty', params: { cursor: '' }, parsed: invalid('malformed_cursor') },
  ])('$name', ({ params, parsed }) => {
    expect(parseListParams(params)).toEqual(parsed);
  });
});

describe('clientDeclaresEvents', () => {
  const declared = (extensions: unknown) => ({ _meta: { 'io.modelcontextprotocol/clientCapabilities': { extensions } } });
  it.each<{ name: string; params: unknown; declares: boolean }>([
    { name: 'declared with an empty settings object', params: declared({ 'io.modelcontextprotocol/events': {} }), declares: true },
    { name: 'other extensions only', params: declared({ 'io.modelcontextprotocol/tasks': {} }), declares: false },
    { name: 'settings not an object', params: declared({ 'io.modelcontextprotocol/events': true }), declares: false },
    { name: 'no capabilities', params: { _meta: {} }, declares: false },
    { name: 'no params', params: undefined, declares: false },
  ])('$name', ({ params, declares }) => {
    expect(clientDeclaresEvents(params)).toBe(declares);
  });
});
