/**
 * The SDK Transport's resumption options: `onresumptiontoken` reports each event id of a call's
 * stream as it arrives, and a request sent with `resumptionToken` continues that stream
 * (`GET` + `Last-Event-ID`) instead of being POSTed, its answer delivered under the id of the
 * request that asked to resume.
 */
import { Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { exports } from 'cloudflare:workers';
import { ForkDetectedError, ForkSafeTransport } from '../../src/client/index.ts';
import { BASE_HEADERS, URL_ } from '../support/mcp-http.ts';
import { connect, countdownFrameEnds, faultyFetch, firstToolCallPosts, liftoff, toolCallStreams, type Logged } from './faults.ts';

const FROM = 5;
/** Into a resume of a countdown's stream: past the restated cursor (~30 bytes) and one progress event (~120), not two. */
const CUT = 200;
const resumes = (log: readonly Logged[]) => log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null);

describe('onresumptiontoken', () => {
  it('reports every event id of the call’s stream once, in order, across cut connections', async () => {
    const ends = await countdownFrameEnds('2025-11-25', FROM);
    const fetch = faultyFetch(toolCallStreams, [{ at: ends[1]! + 5 }, { at: 0, how: 'close' }, { at: ends[2]! - ends[1]! }]);
    const { client, transport } = await connect(fetch, { standaloneStream: false });
    const tokens: string[] = [];
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'countdown', arguments: { from: FROM, interval_ms: 20 } },
      { onprogress: (p) => progress.push(p.progress), onresumptiontoken: (token) => tokens.push(token) },
    );
    expect(result).toEqual(liftoff(FROM));
    expect(progress).toEqual([1, 2, 3, 4, 5]);
    const stream = fetch.log.find((entry) => entry.rpc === 'tools/call')!.streamId;
    // The priming event, each progress event, the result: each id once, though resumes restated the cursor.
    expect(tokens).toEqual(Array.from({ length: FROM + 2 }, (_, seq) => `${transport.epoch}-${stream}-${seq}`));
    expect(resumes(fetch.log).length).toBeGreaterThanOrEqual(2);
    await client.close();
  });

  it('reports the replayed ids of a POST that was re-sent after a cut before its first event', async () => {
    const fetch = faultyFetch(firstToolCallPosts(), [{ at: 0, how: 'drop' }]);
    const { client, transport } = await connect(fetch, { standaloneStream: false });
    const tokens: string[] = [];
    const result = await client.callTool(
      { name: 'tally', arguments: { key: 'token' } },
      { onresumptiontoken: (token) => tokens.push(token) },
    );
    expect(result).toEqual({ content: [{ type: 'text', text: '1' }] });
    const [first] = resumes(fetch.log);
    expect(first!.lastEventId).toMatch(new RegExp(`^${transport.epoch}-\\d+-0$`)); // the duplicate_request_id's cursor
    const stream = first!.lastEventId!.split('-')[1];
    // The replay from the start cursor restates it (not reported again), then the result.
    expect(tokens).toEqual([`${transport.epoch}-${stream}-1`]);
    await client.close();
  });
});

describe('a request sent with a resumptionToken', () => {
  /** A call whose client went away after `seen` tokens; the call goes on in the session. */
  async function abandonedCall(seen: number) {
    const fetch = faultyFetch();
    const { client, transport } = await connect(fetch, { standaloneStream: false });
    const tokens: string[] = [];
    const call = client
      .callTool(
        { name: 'countdown', arguments: { from: FROM, interval_ms: 100 } },
        // A progress token, so the stream has an event per step.
        { onprogress: () => undefined, onresumptiontoken: (token) => tokens.push(token) },
      )
      .catch((error: unknown) => error);
    await expect.poll(() => tokens.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(seen);
    const sessionId = transport.sessionId!;
    // The process "dies": the connection is dropped, no DELETE, no notifications/cancelled.
    await client.close();
    await call;
    expect(fetch.log.filter((entry) => entry.rpc === 'tools/call')).toHaveLength(1);
    return { sessionId, token: tokens.at(-1)! };
  }

  it('resumes the call’s stream with GET + Last-Event-ID, without POSTing it again, and resolves with its result', async () => {
    const { sessionId, token } = await abandonedCall(3);
    const [epoch, stream, seq] = token.split('-').map(Number) as [number, number, number];
    expect(seq).toBeLessThan(FROM + 1); // the call had not finished: its result is still to come

    const fetch = faultyFetch();
    const transport = new ForkSafeTransport(URL_, {
      fetch,
      sessionId,
      protocolVersion: '2025-11-25',
      standaloneStream: false,
      reconnect: { maxDelayMs: 5 },
    });
    const client = new Client({ name: 'fork-safe-resume', version: '1.0.0' });
    await client.connect(transport); // a session it was given: no initialize
    const later: string[] = [];
    const result = await client.callTool(
      { name: 'countdown', arguments: { from: FROM, interval_ms: 60 } },
      // A bounded wait: an answer delivered under another id would never settle the call.
      { resumptionToken: token, onresumptiontoken: (next) => later.push(next), timeout: 8_000 },
    );
    expect(result).toEqual(liftoff(FROM));
    expect(fetch.log.filter((entry) => entry.method === 'POST')).toEqual([]);
    expect(resumes(fetch.log).map((entry) => [entry.lastEventId, entry.status, entry.streamId])).toEqual([[token, 200, String(stream)]]);
    // The tokens go on from the one it resumed from, to the result's.
    expect(later).toEqual(Array.from({ length: FROM + 1 - seq }, (_, i) => `${epoch}-${stream}-${seq + i + 1}`));
    expect(transport.mode).toBe('fork-safe');
    await client.close();
  });

  it('a token at the stream’s final event (its answer had come) fails with ForkDetectedError, not as a cancellation', async () => {
    const { sessionId, token } = await abandonedCall(1);
    const [epoch, stream] = token.split('-').map(Number) as [number, number, number];
    const final = `${epoch}-${stream}-${FROM + 1}`; // priming, FROM progress events, the result
    // Until the call has finished on the server, the final event is beyond the stream (409 cursor_ahead).
    const finished = async () => {
      const headers = { ...BASE_HEADERS, Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId, 'Last-Event-ID': final };
      const response = await exports.default.fetch(new Request(URL_, { headers: { ...headers, 'MCP-Protocol-Version': '2025-11-25' } }));
      await response.body?.cancel();
      return response.status;
    };
    await expect.poll(finished, { timeout: 8_000, interval: 100 }).toBe(200);
    const transport = new ForkSafeTransport(URL_, {
      fetch: faultyFetch(),
      sessionId,
      protocolVersion: '2025-11-25',
      standaloneStream: false,
    });
    const client = new Client({ name: 'fork-safe-resume', version: '1.0.0' });
    await client.connect(transport);
    const outcome = await client
      .callTool({ name: 'countdown', arguments: { from: FROM, interval_ms: 60 } }, { resumptionToken: final, timeout: 8_000 })
      .catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(ForkDetectedError);
    expect(outcome).toMatchObject({ reason: 'not_resumed', cursor: final });
    await client.close();
  });

  it('resumes from the newest event id when the resumed stream is cut in turn', async () => {
    const { sessionId, token } = await abandonedCall(2);
    const [epoch, stream, seq] = token.split('-').map(Number) as [number, number, number];
    // The resume is cut after the restated cursor and the next event, then once before any event.
    const fetch = faultyFetch((request) => request.method === 'GET', [{ at: CUT }, { at: 0, how: 'close' }]);
    const transport = new ForkSafeTransport(URL_, { fetch, sessionId, protocolVersion: '2025-11-25', standaloneStream: false });
    const client = new Client({ name: 'fork-safe-resume', version: '1.0.0' });
    await client.connect(transport);
    const later: string[] = [];
    const result = await client.callTool(
      { name: 'countdown', arguments: { from: FROM, interval_ms: 60 } },
      // A bounded wait: an answer delivered under another id would never settle the call.
      { resumptionToken: token, onresumptiontoken: (next) => later.push(next), timeout: 8_000 },
    );
    expect(result).toEqual(liftoff(FROM));
    expect(later).toEqual(Array.from({ length: FROM + 1 - seq }, (_, i) => `${epoch}-${stream}-${seq + i + 1}`));
    const next = `${epoch}-${stream}-${seq + 1}`;
    expect(resumes(fetch.log).map((entry) => entry.lastEventId)).toEqual([token, next, next]);
    expect(fetch.log.filter((entry) => entry.method === 'POST')).toEqual([]);
    await client.close();
  });
});
