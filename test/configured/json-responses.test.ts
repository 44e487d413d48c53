/**
 * RESPONSE_MODE = "json" (with HEARTBEAT_MS = 50 and MAX_CONNECTION_AGE_MS = 400): a POST carrying requests is answered with one JSON body; the
 * events are still stored, so a re-sent id is recognised. GET streams stay SSE, with
 * heartbeats (HEARTBEAT_MS = 50 in this project).
 */
import { describe, expect, it } from 'vitest';
import { errorOf, initializeRequest, openSession, postRaw, callTool } from '../support/mcp-http.ts';
import { SseReader } from '../support/sse-reader.ts';

describe('JSON response mode', () => {
  it('initialize is answered with a JSON body and a session id', async () => {
    const response = await postRaw(initializeRequest());
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toMatch(/^application\/json/);
    expect(response.headers.get('Mcp-Session-Id')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-11-25' } });
  });

  it('initialize answers carry the stream headers too', async () => {
    const response = await postRaw(initializeRequest());
    expect(response.headers.get('Mcp-Stream-Id')).toBe('1');
    expect(response.headers.get('Mcp-Stream-Resumed')).toBe('false');
    await response.body?.cancel();
  });

  it('a tool that closes its SSE stream (SEP-1699) still gets its JSON answer: there is no stream to close', async () => {
    const session = await openSession();
    const response = await session.post(callTool(3, 'test_reconnection', {}));
    expect(await response.json()).toMatchObject({ id: 3, result: { content: [{ text: 'Reconnection test completed successfully' }] } });
  });

  it('a cancelled call is answered 202 with no body, never an invented one', async () => {
    const session = await openSession();
    const pending = session.post(callTool(4, 'countdown', { from: 100, interval_ms: 20 }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await session.post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 4 } });
    const response = await pending;
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
  });

  it('a 2025-03-26 batch that cancels its own request is answered 202 with no body, not left waiting', async () => {
    const session = await openSession('2025-03-26');
    const response = await session.post([
      { jsonrpc: '2.0', id: 'c1', method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c1' } },
    ]);
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
  });

  it('a tool call is answered with its result as JSON', async () => {
    const session = await openSession();
    const response = await session.post(callTool(1, 'countdown', { from: 3, interval_ms: 0 }, { progressToken: 1 }));
    expect(response.headers.get('Content-Type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'liftoff after 3' }] } });
  });

  it('a 2025-03-26 batch is answered with an array of responses', async () => {
    const session = await openSession('2025-03-26');
    const response = await session.post([
      { jsonrpc: '2.0', id: 'a', method: 'ping' },
      { jsonrpc: '2.0', id: 'b', method: 'ping' },
    ]);
    const body = (await response.json()) as { id: string }[];
    expect(body.map((m) => m.id).sort()).toEqual(['a', 'b']);
  });

  it('a re-sent request id is still refused: the log recorded it', async () => {
    const session = await openSession();
    await (await session.post(callTool(7, 'tally', { key: 'j' }))).json();
    expect(await errorOf(await session.post(callTool(7, 'tally', { key: 'j' })))).toMatchObject({
      status: 409,
      reason: 'duplicate_request_id',
    });
  });

  it('a tool that asks the client something fails at once instead of leaving the POST unanswered', async () => {
    const session = await openSession('2025-11-25', { elicitation: {} });
    const response = await session.post(callTool(9, 'test_elicitation', { message: 'who?' }));
    expect(await response.json()).toMatchObject({
      id: 9,
      result: { isError: true, content: [{ text: expect.stringContaining('JSON response mode') }] },
    });
  });

  it('an open SSE connection carries comment heartbeats', async () => {
    const session = await openSession();
    const reader = new SseReader(await session.get());
    try {
      await reader.take(1);
      expect(await reader.next(300)).toBeTypeOf('symbol'); // no events, only comments
      expect(reader.raw).toMatch(/(^|\n): keepalive\n\n/);
    } finally {
      await reader.cancel();
    }
  });
});
