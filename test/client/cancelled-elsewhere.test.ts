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
import { connect, faultyFetch } from './faults.ts';

describe('a call cancelled by another client of the session', () => {
  it('fails with a typed error, and the standalone stream still delivers afterwards', async () => {
    let inFlight!: (id: number) => void;
    const posted = new Promise<number>((resolve) => (inFlight = resolve));
    const fetch = faultyFetch(undefined, [], {
      async request(request) {
        const body = request.method === 'POST' ? (JSON.parse(await request.clone().text()) as { id?: number; method?: string }) : {};
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
    expect(outcome).toMatchObject({ requestIds: [id], cursor: expect.stringMatching(/^1-\d+-0$/) });
    // The resume was answered with a new standalone stream; the transport follows it from its start.
    const replacement = fetch.log.find(
      (entry) => entry.method === 'GET' && entry.lastEventId === (outcome as RequestCancelledError).cursor,
    );
    expect(replacement).toMatchObject({ status: 200, streamId: expect.stringMatching(/^\d+$/) });
    await expect
      .poll(() => fetch.log.at(-1), { timeout: 5_000 })
      .toMatchObject({ method: 'GET', lastEventId: `1-${replacement!.streamId}-0`, status: 200, streamId: replacement!.streamId });
    await client.callTool({ name: 'broadcast', arguments: { count: 3, interval_ms: 20 } });
    await expect.poll(() => received, { timeout: 5_000 }).toEqual([1, 2, 3]);
    expect(errors.filter((error) => !(error instanceof RequestCancelledError))).toEqual([]);
    await client.close();
  });
});
