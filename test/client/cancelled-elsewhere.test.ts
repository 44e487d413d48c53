/**
 * A call that another client of the same session cancels: the server ends the call's stream
 * without an answer (a cancelled request gets none). The transport cannot tell that end from a
 * cut, resumes at the stream's final event, and the server answers with a new standalone stream
 * (`Mcp-Stream-Resumed: false`): the call fails with a typed error, and the client keeps
 * listening on the session's standalone stream.
 */
import { describe, expect, it } from 'vitest';
import { RequestCancelledError } from '../../src/client/index.ts';
import { postRaw } from '../support/mcp-http.ts';
import { connect, faultyFetch, sdkIdOf } from './faults.ts';

describe('a call cancelled by another client of the session', () => {
  it('fails with a typed error, and the standalone stream still delivers afterwards', async () => {
    // The call's id as the server sees it: the SDK's, under the transport's prefix (wire-ids.ts).
    let inFlight!: (id: string) => void;
    const posted = new Promise<string>((resolve) => (inFlight = resolve));
    const fetch = faultyFetch(undefined, [], {
      async request(request) {
        const body = request.method === 'POST' ? (JSON.parse(await request.clone().text()) as { id?: string; method?: string }) : {};
        if (body.method === 'tools/call' && (body as { params?: { name?: string } }).params?.name === 'countdown') inFlight(body.id!);
        return request;
      },
    });
    const { client, transport, errors } = await connect(fetch);
    const received: number[] = [];
    client.setNotificationHandler('notifications/message', (notification) => {
      received.push((notification.params.data as { n: number }).n);
    });
    const call = client.callTool({ name: 'countdown', arguments: { from: 1_000, interval_ms: 20 } }).then(
      () => 'answered',
      (error: unknown) => error,
    );
    const id = await posted;
    await new Promise((resolve) => setTimeout(resolve, 60));
    const cancelled = await postRaw(
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } },
      { 'Mcp-Session-Id': transport.sessionId!, 'MCP-Protocol-Version': '2025-11-25' },
    );
    expect(cancelled.status).toBe(202);
    const outcome = await call;
    expect(outcome).toBeInstanceOf(RequestCancelledError);
    // The error names the request as its caller knows it: the SDK's id.
    expect(outcome).toMatchObject({ requestIds: [sdkIdOf(id)], cursor: expect.stringMatching(new RegExp(`^${transport.epoch}-\\d+-0$`)) });
    // The resume was answered with a new standalone stream; the transport follows it from its start.
    const replacement = fetch.log.find(
      (entry) => entry.method === 'GET' && entry.lastEventId === (outcome as RequestCancelledError).cursor,
    );
    expect(replacement).toMatchObject({ status: 200, streamId: expect.stringMatching(/^\d+$/) });
    await expect
      .poll(() => fetch.log.at(-1), { timeout: 5_000 })
      .toMatchObject({
        method: 'GET',
        lastEventId: `${transport.epoch}-${replacement!.streamId}-0`,
        status: 200,
        streamId: replacement!.streamId,
      });
    await client.callTool({ name: 'broadcast', arguments: { count: 3, interval_ms: 20 } });
    await expect.poll(() => received, { timeout: 5_000 }).toEqual([1, 2, 3]);
    expect(errors.filter((error) => !(error instanceof RequestCancelledError))).toEqual([]);
    await client.close();
  });

  it('two calls cancelled together: both fail typed, and the newest standalone stream is the one followed', async () => {
    const inFlight: string[] = [];
    const callStreams = new Set<string>();
    // The answer to the first resume (the earlier new standalone stream) is held until the second
    // has been handed on, so the transport learns of the later stream first.
    let secondHandedOn!: () => void;
    const second = new Promise<void>((resolve) => (secondHandedOn = resolve));
    let resumes = 0;
    const fetch = faultyFetch(undefined, [], {
      async request(request) {
        const body =
          request.method === 'POST' ? (JSON.parse(await request.clone().text()) as { id?: string; params?: { name?: string } }) : {};
        if (body.params?.name === 'countdown') inFlight.push(body.id!);
        return request;
      },
      async response(response, request) {
        const cursor = request.headers.get('Last-Event-ID');
        if (request.method === 'POST' && response.headers.has('Mcp-Stream-Id')) callStreams.add(response.headers.get('Mcp-Stream-Id')!);
        if (request.method !== 'GET' || cursor === null || !callStreams.has(cursor.split('-')[1]!)) return response;
        if (++resumes === 1) await Promise.race([second, new Promise((resolve) => setTimeout(resolve, 5_000))]);
        else setTimeout(secondHandedOn, 50);
        return response;
      },
    });
    const { client, transport } = await connect(fetch);
    const received: number[] = [];
    client.setNotificationHandler('notifications/message', (notification) => {
      received.push((notification.params.data as { n: number }).n);
    });
    const calls = [1, 2].map(() =>
      client.callTool({ name: 'countdown', arguments: { from: 1_000, interval_ms: 20 } }).then(
        () => 'answered',
        (error: unknown) => error,
      ),
    );
    await expect.poll(() => inFlight.length, { timeout: 5_000 }).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const headers = { 'Mcp-Session-Id': transport.sessionId!, 'MCP-Protocol-Version': '2025-11-25' };
    await Promise.all(
      inFlight.map((requestId) => postRaw({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } }, headers)),
    );
    const outcomes = (await Promise.all(calls)) as RequestCancelledError[];
    for (const outcome of outcomes) expect(outcome).toBeInstanceOf(RequestCancelledError);
    // Each resume was answered with a new standalone stream, the later superseding the earlier.
    // Whatever order the answers were handled in, the transport ends up following the later one.
    const opened = outcomes.map((outcome) => fetch.log.find((entry) => entry.method === 'GET' && entry.lastEventId === outcome.cursor)!);
    const latest = Math.max(...opened.map((entry) => Number(entry.streamId)));
    expect(new Set(opened.map((entry) => entry.streamId)).size).toBe(2);
    await expect
      .poll(() => fetch.log.some((entry) => entry.lastEventId === `${transport.epoch}-${latest}-0` && entry.status === 200), {
        timeout: 5_000,
      })
      .toBe(true);
    await client.callTool({ name: 'broadcast', arguments: { count: 3, interval_ms: 20 } });
    await expect.poll(() => received, { timeout: 5_000 }).toEqual([1, 2, 3]);
    await client.close();
  });
});
