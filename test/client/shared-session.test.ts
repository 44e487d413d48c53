/**
 * Two clients of one session. Every SDK Client numbers its requests from 0, and the session
 * refuses an id it has seen (409 `duplicate_request_id`, naming the stream that answers it),
 * which is how a re-sent POST finds its first attempt's answer. So a second client — here, a
 * process continuing a session with `sessionId` — would be handed the first client's answers
 * as its own, its calls never run. Its transport sends its ids under a prefix of its own
 * (src/client/wire-ids.ts); and a duplicate on a POST's first attempt, which only another
 * request's id can cause, fails typed instead of replaying that request's stream.
 */
import { Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { ForkSafeTransport, HttpStatusError } from '../../src/client/index.ts';
import { URL_ } from '../support/mcp-http.ts';
import { connect, faultyFetch } from './faults.ts';

const tally = (client: Client) => client.callTool({ name: 'tally', arguments: { key: 'shared' } }, { timeout: 8_000 });
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

/** A second Client on the first one's session, as a process continuing it would connect: no initialize. */
async function continueSession(sessionId: string, fetch = faultyFetch()) {
  const transport = new ForkSafeTransport(URL_, { fetch, sessionId, protocolVersion: '2025-11-25', standaloneStream: false });
  const client = new Client({ name: 'second', version: '1.0.0' });
  await client.connect(transport);
  return { client, fetch };
}

describe('a second client of a session', () => {
  it('runs its own calls, though its Client numbers its requests from 0 as the first one did', async () => {
    const first = await connect(faultyFetch(), { standaloneStream: false });
    // The first client's initialize and two calls: ids 0, 1 and 2 of its Client.
    expect(await tally(first.client)).toEqual(text('1'));
    expect(await tally(first.client)).toEqual(text('2'));
    const second = await continueSession(first.transport.sessionId!);
    // Ids 0 and 1 of the second Client: each call runs, once.
    expect(await tally(second.client)).toEqual(text('3'));
    expect(await tally(second.client)).toEqual(text('4'));
    expect(await tally(first.client)).toEqual(text('5'));
    await second.client.close();
    await first.client.close();
  });

  it('a duplicate id on a first POST fails with the 409, never with the other request’s answer', async () => {
    const first = await connect(faultyFetch(), { standaloneStream: false });
    const sessionId = first.transport.sessionId!;
    expect(await tally(first.client)).toEqual(text('1'));
    // A second client's call, and the id it had on the wire.
    let taken: unknown;
    const recording = faultyFetch(undefined, [], {
      async request(request) {
        if (request.method === 'POST') taken ??= (JSON.parse(await request.clone().text()) as { id?: unknown }).id;
        return request;
      },
    });
    const second = await continueSession(sessionId, recording);
    expect(await tally(second.client)).toEqual(text('2'));
    expect(taken).toEqual(expect.any(String));
    // A third client's call goes out under that id, as a client with no prefix of its own might send it.
    const reusing = faultyFetch(undefined, [], {
      async request(request) {
        if (request.method !== 'POST') return request;
        const body = JSON.parse(await request.clone().text()) as { id?: unknown; method?: string };
        return body.method === 'tools/call' ? new Request(request, { body: JSON.stringify({ ...body, id: taken }) }) : request;
      },
    });
    const third = await continueSession(sessionId, reusing);
    const outcome = await tally(third.client).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(HttpStatusError);
    expect(outcome).toMatchObject({ status: 409, error: { data: { reason: 'duplicate_request_id' } } });
    // Nothing was replayed for it, and it ran nothing: the next call is the third.
    expect(reusing.log.filter((entry) => entry.method === 'GET')).toEqual([]);
    expect(await tally(first.client)).toEqual(text('3'));
    for (const { client } of [third, second, first]) await client.close();
  });
});
