/**
 * The refusals of `events/poll` and `events/stream`, served (SEP-3415, *Error Handling*; the
 * codes from the one table, `EventsErrorCode` in src/core/events-wire.ts): each a JSON-RPC error
 * for the request's id with its code and typed `data`, and for a stream "the server responds
 * immediately with a JSON-RPC error and no stream is opened". Refused cursors are cursors.test.ts's.
 * Also `events/list` and the extension in `server/discover`.
 */
import { describe, expect, it } from 'vitest';
import { EVENTS_EXTENSION_ID, EventsErrorCode, MAX_EVENT_NAME_LENGTH } from '../../src/core/events-wire.ts';
import { EVENTS, eventsRequest, poll, refusedStream } from '../support/events-http.ts';
import { answerOf, modernRequest } from '../support/modern-http.ts';

interface Row {
  readonly name: string;
  readonly params: Record<string, unknown>;
  readonly code: number;
  readonly data: Record<string, unknown>;
  /** The methods it is a refusal of (both unless said). */
  readonly methods?: readonly ('poll' | 'stream')[];
}

const rows: Row[] = [
  { name: 'an unknown event name: NotFound', params: { name: 'demo.nope' }, code: EventsErrorCode.NotFound, data: { kind: 'event' } },
  {
    name: 'a type not delivered by push, streamed: Unsupported {feature: "deliveryMode", value: "push"}',
    params: { name: 'demo.polled' },
    code: EventsErrorCode.Unsupported,
    data: { feature: 'deliveryMode', value: 'push' },
    methods: ['stream'],
  },
  {
    name: 'arguments failing the inputSchema (contains: 5): -32602 invalid_arguments',
    params: { name: 'demo.note', arguments: { contains: 5 } },
    code: -32602,
    data: { reason: 'invalid_arguments' },
  },
  {
    name: 'arguments not an object: -32602 invalid_arguments',
    params: { name: 'demo.note', arguments: ['contains'] },
    code: -32602,
    data: { reason: 'invalid_arguments' },
  },
  { name: 'no name: -32602 invalid_params', params: { arguments: {} }, code: -32602, data: { reason: 'invalid_params' } },
  { name: 'an empty name: -32602 invalid_params', params: { name: '' }, code: -32602, data: { reason: 'invalid_params' } },
  {
    name: `a name over ${MAX_EVENT_NAME_LENGTH} characters: -32602 invalid_params`,
    params: { name: 'n'.repeat(MAX_EVENT_NAME_LENGTH + 1) },
    code: -32602,
    data: { reason: 'invalid_params' },
  },
  {
    name: 'a negative maxAgeMs: -32602 invalid_params',
    params: { name: 'demo.note', maxAgeMs: -1 },
    code: -32602,
    data: { reason: 'invalid_params' },
  },
  {
    name: 'a maxAgeMs not a number: -32602 invalid_params',
    params: { name: 'demo.note', maxAgeMs: '1000' },
    code: -32602,
    data: { reason: 'invalid_params' },
  },
  {
    name: 'maxEvents 0: -32602 invalid_params',
    params: { name: 'demo.note', maxEvents: 0 },
    code: -32602,
    data: { reason: 'invalid_params' },
    methods: ['poll'],
  },
  {
    name: 'maxEvents not an integer: -32602 invalid_params',
    params: { name: 'demo.note', maxEvents: 1.5 },
    code: -32602,
    data: { reason: 'invalid_params' },
    methods: ['poll'],
  },
];

const of = (method: 'poll' | 'stream') => rows.filter((row) => (row.methods ?? ['poll', 'stream']).includes(method));

describe('events/poll refusals', () => {
  it.each(of('poll'))('$name', async ({ params, code, data }) => {
    const answer = await poll(params);
    expect(answer.result).toBeUndefined();
    expect(answer.error).toEqual({ code, message: expect.any(String), data });
  });
});

describe('events/stream refusals: "responds immediately with a JSON-RPC error and no stream is opened"', () => {
  it.each(of('stream'))('$name', async ({ params, code, data }) => {
    expect(await refusedStream(params)).toEqual({ code, message: expect.any(String), data });
  });
});

describe('error messages', () => {
  it("start with the error's name, as the SEP's examples do (docs/events.md choice 12)", async () => {
    expect((await poll({ name: 'demo.nope' })).error.message).toMatch(/^NotFound: /);
    expect((await refusedStream({ name: 'demo.polled' })).message).toMatch(/^Unsupported: /);
    expect((await poll({ name: 'demo.note', arguments: { contains: 5 } })).error.message).toMatch(/^InvalidParams: .*contains/);
  });
});

describe('events/list and the extension', () => {
  it('server/discover lists io.modelcontextprotocol/events under capabilities.extensions', async () => {
    const discover = await answerOf(await modernRequest('server/discover', {}, EVENTS));
    expect(discover.result.capabilities.extensions[EVENTS_EXTENSION_ID]).toEqual({});
  });

  it('events/list: a complete result, each type with its delivery modes and both schemas as JSON Schema', async () => {
    const list = await answerOf(await eventsRequest('events/list', {}));
    expect(list.result.resultType).toBe('complete');
    expect(list.result.nextCursor).toBeUndefined();
    const note = list.result.events.find((e: { name: string }) => e.name === 'demo.note');
    expect(note).toMatchObject({
      name: 'demo.note',
      description: expect.any(String),
      delivery: ['poll', 'push', 'webhook'],
      inputSchema: { type: 'object', properties: { contains: { type: 'string' } } },
      payloadSchema: { type: 'object', properties: { text: { type: 'string' }, n: { type: 'integer' } }, required: ['text', 'n'] },
    });
    expect(list.result.events.find((e: { name: string }) => e.name === 'demo.polled').delivery).toEqual(['poll']);
  });

  it('events/list with a cursor it did not give: -32602 malformed_cursor', async () => {
    const list = await answerOf(await eventsRequest('events/list', { cursor: 'not-a-page' }));
    expect(list.error).toMatchObject({ code: -32602, data: { reason: 'malformed_cursor' } });
  });
});
