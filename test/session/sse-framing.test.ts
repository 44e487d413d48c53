/**
 * What goes on the wire of an SSE stream: exact frames, event ids, the priming rule.
 */
import { describe, expect, it } from 'vitest';
import { initializeRequest, messages, openSession, postRaw, toolCall } from '../support/mcp-http.ts';
import { SseReader, TIMED_OUT } from '../support/sse-reader.ts';

describe('SSE framing', () => {
  it('the initialize reply of a 2025-11-25 session is a priming event, then the result', async () => {
    const response = await postRaw(initializeRequest('2025-11-25'));
    expect(response.headers.get('Content-Type')).toBe('text/event-stream');
    expect(response.headers.get('Cache-Control')).toBe('no-cache, no-transform');
    const epoch = response.headers.get('Mcp-Session-Epoch');
    expect(epoch).toMatch(/^[1-9][0-9]*$/);
    const text = await response.text();
    const frames = text.split('\n\n').filter((f) => f !== '');
    expect(frames).toHaveLength(2);
    expect(`${frames[0]}\n\n`).toBe(`id: ${epoch}-1-0\nretry: 1000\ndata: \n\n`);
    expect(frames[1]).toMatch(new RegExp(`^id: ${epoch}-1-1\ndata: \\{.*"id":0.*\\}$`));
  });

  it.each(['2025-06-18', '2025-03-26'] as const)('a %s session gets no priming event', async (version) => {
    const response = await postRaw(initializeRequest(version), { 'MCP-Protocol-Version': version });
    const epoch = response.headers.get('Mcp-Session-Epoch');
    const text = await response.text();
    expect(text).toMatch(new RegExp(`^id: ${epoch}-1-1\ndata: \\{.*\\}\n\n$`));
  });

  it('priming follows the negotiated version, not the per-request header', async () => {
    const session = await openSession('2025-11-25');
    const response = await session.post({ jsonrpc: '2.0', id: 5, method: 'ping' }, { 'MCP-Protocol-Version': '2025-03-26' });
    const events = await new SseReader(response).all();
    expect(events[0]).toMatchObject({ id: session.eventId(2, 0), data: '', retry: 1000 });
    expect(messages(events)).toEqual([{ jsonrpc: '2.0', id: 5, result: {} }]);
  });

  it('and a 2025-03-26 session gets none even when the request says 2025-11-25', async () => {
    const session = await openSession('2025-03-26');
    const response = await session.post({ jsonrpc: '2.0', id: 5, method: 'ping' }, { 'MCP-Protocol-Version': '2025-11-25' });
    const events = await new SseReader(response).all();
    expect(events.map((e) => e.id)).toEqual([session.eventId(2, 1)]);
  });

  it('a streaming call numbers its events contiguously from 1 and ends with the response', async () => {
    const session = await openSession();
    const events = await session.call('tools/call', toolCall('countdown', { from: 5, interval_ms: 0 }, { progressToken: 'p' }), 42);
    expect(events.map((e) => e.id)).toEqual([0, 1, 2, 3, 4, 5, 6].map((seq) => session.eventId(2, seq)));
    const [p1, p2, p3, p4, p5, result] = messages(events);
    expect([p1, p2, p3, p4, p5].map((m) => (m as any).params)).toEqual(
      [1, 2, 3, 4, 5].map((progress) => ({ progressToken: 'p', progress, total: 5 })),
    );
    expect(result).toEqual({ jsonrpc: '2.0', id: 42, result: { content: [{ type: 'text', text: 'liftoff after 5' }] } });
  });

  it('countdown without a progress token sends only the result', async () => {
    const session = await openSession();
    const events = await session.call('tools/call', toolCall('countdown', { from: 3, interval_ms: 0 }));
    expect(messages(events)).toHaveLength(1);
  });

  it('a standalone GET stream opens with a priming event and stays open', async () => {
    const session = await openSession();
    const response = await session.get();
    expect(response.status).toBe(200);
    expect(response.headers.get('Mcp-Stream-Resumed')).toBe('false');
    const stream = response.headers.get('Mcp-Stream-Id');
    const reader = new SseReader(response);
    try {
      const [priming] = await reader.take(1);
      expect(priming).toMatchObject({ id: session.eventId(stream!, 0), data: '', retry: 1000 });
      expect(await reader.next(300)).toBe(TIMED_OUT);
    } finally {
      await reader.cancel();
    }
  });

  it('messages not tied to a request go to the standalone stream', async () => {
    const session = await openSession();
    const response = await session.get();
    const stream = response.headers.get('Mcp-Stream-Id');
    const reader = new SseReader(response);
    try {
      await reader.take(1);
      const call = messages(await session.call('tools/call', toolCall('broadcast', { count: 2, interval_ms: 0 })));
      expect(call).toHaveLength(1);
      const events = await reader.take(2);
      expect(events.map((e) => e.id)).toEqual([session.eventId(stream!, 1), session.eventId(stream!, 2)]);
      expect(messages(events).map((m: any) => m.params.data)).toEqual([
        { n: 1, of: 2 },
        { n: 2, of: 2 },
      ]);
    } finally {
      await reader.cancel();
    }
  });
});
