/**
 * ForkSafeTransport against RESPONSE_MODE = "json": a POST with a request is answered with one
 * JSON body (the response only; progress and other notifications stay in the stored stream).
 * A JSON answer lost or cut on the way is recovered like a cut SSE stream: the POST is re-sent,
 * refused as a duplicate with the start cursor, and the stream replayed (as SSE) from there, so
 * the call runs once. A POST answered 202 while its request still waits (the call was cancelled
 * from elsewhere, or the session ended) is asked again the same way, so the call fails with a
 * typed error instead of waiting for an answer that cannot come.
 */
import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { HttpStatusError, RequestCancelledError, SessionLostError } from '../../src/client/index.ts';
import { BASE_HEADERS, postRaw, URL_ } from '../support/mcp-http.ts';
import {
  connect,
  countdown,
  faultyFetch,
  firstToolCallPosts,
  liftoff,
  sdkIdOf,
  settle,
  tally,
  type Cut,
  type Logged,
  type Tamper,
} from '../client/faults.ts';

/** Records the media type of each answer, by request: `POST tools/call`, `GET resume`. */
function contentTypes(): Tamper & { seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    response(response, request) {
      const what = request.method === 'GET' ? (request.headers.has('Last-Event-ID') ? 'GET resume' : 'GET') : 'POST';
      seen.push(`${what} ${response.status} ${(response.headers.get('Content-Type') ?? '').split(';')[0]}`);
      return response;
    },
  };
}

const resumes = (log: readonly Logged[]) => log.filter((entry) => entry.method === 'GET' && entry.lastEventId !== null);

describe('ForkSafeTransport in JSON response mode', () => {
  it('gets a tool call’s result from the JSON answer: no resume, no progress (a JSON answer carries responses only)', async () => {
    const types = contentTypes();
    const fetch = faultyFetch(undefined, [], types);
    const { client, transport, errors } = await connect(fetch, { standaloneStream: false });
    expect(transport.mode).toBe('fork-safe'); // the JSON initialize answer has Mcp-Session-Epoch too
    expect(transport.epoch).toBeGreaterThanOrEqual(1_000_000_000); // its first, drawn at random (core/event-id.ts)
    expect(await countdown(client, 3, 0)).toEqual({ progress: [], result: liftoff(3) });
    expect(await tally(client, 'json')).toBe('1');
    expect(types.seen).toEqual([
      'POST 200 application/json', // initialize
      'POST 202 ', // notifications/initialized
      'POST 200 application/json',
      'POST 200 application/json',
    ]);
    expect(resumes(fetch.log)).toEqual([]);
    expect(errors).toEqual([]);
    await client.close();
  });

  it.each<{ name: string; cut: Cut }>([
    { name: 'lost with no answer at all', cut: { at: 0, how: 'drop' } },
    { name: 'reset before its first byte', cut: { at: 0 } },
    { name: 'reset mid-way into its body', cut: { at: 20 } },
    { name: 'ended mid-way into its body', cut: { at: 20, how: 'close' } },
    // {"result":{"content":[{"type":"text","text":"1"}]},"jsonrpc":"2.0","id":1} is 74 bytes.
    { name: 'ended one byte short', cut: { at: 73, how: 'close' } },
    // With no close or reset: taken as dead after idleTimeoutMs (300 ms here).
    { name: 'silent mid-way into its body', cut: { at: 20, how: 'stall' } },
  ])('a tally whose JSON answer is $name runs once: its stream replayed from its start', async ({ cut }) => {
    const types = contentTypes();
    const fetch = faultyFetch(firstToolCallPosts(), [cut], types);
    const { client, errors, transport } = await connect(fetch, { standaloneStream: false, idleTimeoutMs: 300 });
    expect(await tally(client, 'once')).toBe('1');
    // Its headers named the stream: resumed from its start. No answer at all: re-sent, refused as
    // a duplicate naming that start.
    const dropped = cut.how === 'drop';
    expect(fetch.log.filter((entry) => entry.rpc === 'tools/call').map((entry) => entry.status)).toEqual(dropped ? [200, 409] : [200]);
    const [resume, ...more] = resumes(fetch.log);
    expect(more).toEqual([]);
    const stream = fetch.log.find((entry) => entry.rpc === 'tools/call')!.streamId;
    expect(resume).toMatchObject({ lastEventId: `${transport.epoch}-${stream}-0`, streamId: stream });
    const posts = dropped ? ['POST 200 application/json', 'POST 409 application/json'] : ['POST 200 application/json'];
    expect(types.seen.slice(2)).toEqual([...posts, 'GET resume 200 text/event-stream']);
    expect(await tally(client, 'once')).toBe('2');
    expect(errors).toEqual([]);
    await client.close();
  });

  it('a countdown whose JSON answer is cut gets its progress after all: the replay is the stored stream', async () => {
    const fetch = faultyFetch(firstToolCallPosts(), [{ at: 30 }]);
    const { client } = await connect(fetch, { standaloneStream: false });
    expect(await countdown(client, 4, 10)).toEqual({ progress: [1, 2, 3, 4], result: liftoff(4) });
    expect(resumes(fetch.log)).toHaveLength(1);
    await client.close();
  });

  it('a notification is POSTed and accepted (202) with nothing to read', async () => {
    const types = contentTypes();
    const fetch = faultyFetch(undefined, [], types);
    const { client, transport, errors } = await connect(fetch, { standaloneStream: false });
    await transport.send({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
    expect(fetch.log.at(-1)).toMatchObject({ method: 'POST', rpc: 'notifications/roots/list_changed', status: 202 });
    expect(types.seen.at(-1)).toBe('POST 202 ');
    expect(await tally(client, 'after')).toBe('1');
    expect(errors).toEqual([]);
    await client.close();
  });

  it('a call cancelled by its caller ends quietly: nothing is resumed or re-sent', async () => {
    const types = contentTypes();
    let posted!: () => void;
    const sent = new Promise<void>((resolve) => (posted = resolve));
    const fetch = faultyFetch(undefined, [], {
      ...types,
      request(request) {
        if (request.method === 'POST')
          void request
            .clone()
            .text()
            .then((body) => body.includes('"countdown"') && posted());
        return request;
      },
    });
    const { client, errors } = await connect(fetch, { standaloneStream: false });
    const abort = new AbortController();
    const call = client
      .callTool({ name: 'countdown', arguments: { from: 1_000, interval_ms: 20 } }, { signal: abort.signal })
      .catch((error: unknown) => error);
    await sent;
    await new Promise((resolve) => setTimeout(resolve, 100)); // the countdown is running
    abort.abort(new Error('not wanted any more'));
    expect(await call).toMatchObject({ message: expect.stringContaining('not wanted any more') });
    await expect.poll(() => fetch.log.find((entry) => entry.rpc === 'notifications/cancelled')?.status).toBe(202);
    // Its POST was left (aborted) or answered 202; either way it is neither re-sent nor resumed.
    expect(fetch.log.filter((entry) => entry.rpc === 'tools/call' && entry.status !== 202)).toEqual([]);
    expect(resumes(fetch.log)).toEqual([]);
    expect(await tally(client, 'after-cancel')).toBe('1');
    expect(errors).toEqual([]);
    await client.close();
  });

  describe('a POST answered 202 while its request still waits (nothing is owed on it any more)', () => {
    /** Starts a countdown, then once its POST is in, lets `meanwhile` act on the session from outside. */
    /** `requestId`: the call's id on the wire (the SDK's, after the transport's prefix). */
    async function waitingCall(meanwhile: (sessionId: string, requestId: string) => Promise<Response>, response?: Tamper['response']) {
      let inFlight!: (id: string) => void;
      const posted = new Promise<string>((resolve) => (inFlight = resolve));
      const fetch = faultyFetch(undefined, [], {
        async request(request) {
          const body = request.method === 'POST' ? (JSON.parse(await request.clone().text()) as { id?: string; method?: string }) : {};
          if (body.method === 'tools/call') inFlight(body.id!);
          return request;
        },
        ...(response && { response }),
      });
      const { client, transport, errors } = await connect(fetch, { standaloneStream: false });
      const call = settle(client.callTool({ name: 'countdown', arguments: { from: 1_000, interval_ms: 20 } }));
      const id = await posted;
      await new Promise((resolve) => setTimeout(resolve, 50)); // the countdown is running
      expect((await meanwhile(transport.sessionId!, id)).status).toBeLessThan(300);
      return { client, fetch, errors, id, epoch: transport.epoch, outcome: await call };
    }

    it('the session was deleted meanwhile: the call fails with SessionLostError instead of waiting forever', async () => {
      const { client, fetch, errors, id, outcome } = await waitingCall((sessionId) =>
        exports.default.fetch(new Request(URL_, { method: 'DELETE', headers: { ...BASE_HEADERS, 'Mcp-Session-Id': sessionId } })),
      );
      expect(outcome).not.toBe('hung');
      expect((outcome as { error?: unknown }).error).toBeInstanceOf(SessionLostError);
      expect((outcome as { error?: unknown }).error).toMatchObject({ requestIds: [sdkIdOf(id)] });
      expect(errors.filter((error) => error instanceof SessionLostError)).toHaveLength(1);
      expect(fetch.log.filter((entry) => entry.rpc === 'tools/call').map((entry) => entry.status)).toEqual([202, 404]);
      await client.close();
    });

    it('where the server does not keep the contract (plain mode), the call fails with HttpStatusError 202, not asked again', async () => {
      // A server without the contract's headers: no Mcp-Session-Epoch.
      const plain = (response: Response) => {
        const headers = new Headers(response.headers);
        headers.delete('Mcp-Session-Epoch');
        return new Response(response.body, { status: response.status, headers });
      };
      const { client, fetch, outcome } = await waitingCall(
        (sessionId, requestId) =>
          postRaw(
            { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } },
            { 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' },
          ),
        plain,
      );
      expect(outcome).not.toBe('hung');
      expect((outcome as { error?: unknown }).error).toBeInstanceOf(HttpStatusError);
      expect((outcome as { error?: unknown }).error).toMatchObject({ status: 202 });
      expect(fetch.log.filter((entry) => entry.rpc === 'tools/call').map((entry) => entry.status)).toEqual([202]);
      await client.close();
    });

    it('another client of the session cancelled it: the call fails with a typed error, and is not run again', async () => {
      const { client, fetch, epoch, outcome } = await waitingCall((sessionId, requestId) =>
        postRaw(
          { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } },
          { 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' },
        ),
      );
      expect(outcome).not.toBe('hung');
      expect((outcome as { error?: unknown }).error).toBeInstanceOf(RequestCancelledError);
      // Asked again, the server refused the re-sent id (it never runs twice) and named the stream's start.
      expect(fetch.log.filter((entry) => entry.rpc === 'tools/call').map((entry) => entry.status)).toEqual([202, 409]);
      expect(resumes(fetch.log).map((entry) => entry.lastEventId)).toEqual([expect.stringMatching(new RegExp(`^${epoch}-\\d+-0$`))]);
      expect(await tally(client, 'still-usable')).toBe('1');
      await client.close();
    });
  });
});
