/**
 * The object is evicted or aborted (deploy, crash, idle eviction): the session survives,
 * a fresh McpServer serves it as the client negotiated it, and calls that were running are
 * finished with an explicit error instead of being silently continued or lost.
 */
import { abortAllDurableObjects, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { FixtureSession } from '../fixture-server/index.ts';
import { SessionStreams } from '../../src/session/session-streams.ts';
import { messages, openSession, callTool, toolCall } from '../support/mcp-http.ts';
import { SseReader } from '../support/sse-reader.ts';

const logMessages = (events: Parameters<typeof messages>[0]) => messages(events).filter((m: any) => m.method === 'notifications/message');

const originalFinish = SessionStreams.prototype.finish;
const originalCreateServer = Object.getOwnPropertyDescriptor(FixtureSession.prototype, 'createServer')!;
afterEach(() => {
  SessionStreams.prototype.finish = originalFinish;
  Object.defineProperty(FixtureSession.prototype, 'createServer', originalCreateServer);
});

describe('after the object is aborted', () => {
  it('the session is served again, with the same epoch when nothing was running', async () => {
    const session = await openSession();
    await session.call('tools/call', toolCall('tally', { key: 'k' }));
    await abortAllDurableObjects();
    const response = await session.post(callTool('after', 'tally', { key: 'k' }));
    expect(response.headers.get('Mcp-Session-Epoch')).toBe(String(session.epoch));
    expect(messages(await new SseReader(response).all())).toEqual([
      { jsonrpc: '2.0', id: 'after', result: { content: [{ type: 'text', text: '2' }] } },
    ]);
  });

  it('the client’s capabilities are restored: elicitation still works', async () => {
    const session = await openSession('2025-11-25', { elicitation: {} });
    await abortAllDurableObjects();
    const response = await session.post(callTool(1, 'test_elicitation', { message: 'still there?' }));
    const reader = new SseReader(response);
    try {
      const [, ask] = await reader.take(2);
      const request = JSON.parse(ask!.data);
      expect(request).toMatchObject({ method: 'elicitation/create', params: { message: 'still there?' } });
      await session.post({ jsonrpc: '2.0', id: request.id, result: { action: 'decline' } });
      expect(messages(await reader.all()).at(-1)).toMatchObject({
        id: 1,
        result: { content: [{ text: expect.stringContaining('action=decline') }] },
      });
    } finally {
      await reader.cancel();
    }
  });

  it('the logging level the client set is restored', async () => {
    const session = await openSession();
    expect(logMessages(await session.call('tools/call', toolCall('test_tool_with_logging', {})))).toHaveLength(3);
    await session.call('logging/setLevel', { level: 'error' });
    expect(logMessages(await session.call('tools/call', toolCall('test_tool_with_logging', {})))).toHaveLength(0);
    await abortAllDurableObjects();
    expect(logMessages(await session.call('tools/call', toolCall('test_tool_with_logging', {})))).toHaveLength(0);
  });

  it('a logging level the server refused is not replayed: the session is served after a restart', async () => {
    // A server without logging: it answers logging/setLevel with "Method not found".
    Object.defineProperty(FixtureSession.prototype, 'createServer', {
      ...originalCreateServer,
      value(this: FixtureSession, ...args: unknown[]) {
        const server = originalCreateServer.value.apply(this, args);
        server.server.removeRequestHandler('logging/setLevel');
        return server;
      },
    });
    const session = await openSession();
    expect(messages(await session.call('logging/setLevel', { level: 'error' }, 'lvl'))).toEqual([
      { jsonrpc: '2.0', id: 'lvl', error: expect.objectContaining({ code: -32601 }) },
    ]);
    const stub = env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id));
    const stored = await runInDurableObject(
      stub,
      (_instance, state) => state.storage.sql.exec(`SELECT log_level FROM session`).one().log_level,
    );
    expect(stored).toBeNull(); // kept only once the server accepts it
    await abortAllDurableObjects();
    const [answer] = messages(await session.call('tools/call', toolCall('echo', { text: 'still served' })));
    expect(answer).toMatchObject({ result: { content: [{ type: 'text', text: 'still served' }] } });
  });

  it('the protocol version is restored: a 2025-03-26 session still gets no priming event', async () => {
    const session = await openSession('2025-03-26');
    await abortAllDurableObjects();
    const events = await session.call('ping', {}, 'p');
    expect(events.map((e) => e.data === '')).toEqual([false]);
  });

  it('a call that was running is finished with an interrupted error after a gap-free replay, and the epoch advances', async () => {
    const session = await openSession();
    const response = await session.post(callTool('long', 'countdown', { from: 1_000, interval_ms: 20 }, { progressToken: 't' }));
    const stream = response.headers.get('Mcp-Stream-Id');
    const reader = new SseReader(response);
    const seen = await reader.take(4).finally(() => reader.cancel());
    await abortAllDurableObjects();

    const resumed = await session.get(seen[1]!.id);
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('Mcp-Session-Epoch')).toBe(String(session.epoch + 1));
    expect(resumed.headers.get('Mcp-Stream-Resumed')).toBe('true');
    const replay = await new SseReader(resumed).all();
    const ids = replay.map((e) => e.id!);
    // Same stream identity (its opening epoch), contiguous seqs from the cursor on.
    expect(ids.every((id) => id.startsWith(`${session.epoch}-${stream}-`))).toBe(true);
    const seqs = ids.map((id) => Number(id.split('-')[2]));
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    const final = messages(replay).at(-1) as any;
    expect(final).toMatchObject({ id: 'long', error: { code: -32603, data: { reason: 'request_interrupted', epoch: session.epoch + 1 } } });
    // Nothing after the error: no handler re-created with default state continues the stream.
    // Each progress event is the one its seq says (progress n at seq n), so none was skipped or repeated.
    for (const event of replay.filter((e) => e.data.includes('notifications/progress'))) {
      expect(JSON.parse(event.data).params.progress).toBe(Number(event.id!.split('-')[2]));
    }
  });

  it('a revival that fails is rolled back whole: the next one still finishes the call', async () => {
    const session = await openSession();
    const response = await session.post(callTool('cut', 'countdown', { from: 1_000, interval_ms: 20 }, { progressToken: 't' }));
    const reader = new SseReader(response);
    const seen = await reader.take(3).finally(() => reader.cancel());
    await abortAllDurableObjects();

    // The revival's transaction fails after it stored the interrupted error (a full disk).
    let failures = 0;
    SessionStreams.prototype.finish = function (this: SessionStreams, stream: number) {
      if (failures++ === 0) throw new Error('SQLITE_FULL: database or disk is full');
      return originalFinish.call(this, stream);
    };
    expect((await session.get(seen[2]!.id)).status).toBe(500);

    // Nothing of it stayed, in storage or in memory: the next request revives again.
    const resumed = await session.get(seen[2]!.id);
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('Mcp-Session-Epoch')).toBe(String(session.epoch + 1));
    const replay = await new SseReader(resumed).all();
    expect(messages(replay).at(-1)).toMatchObject({
      id: 'cut',
      error: { data: { reason: 'request_interrupted', epoch: session.epoch + 1 } },
    });
  });

  it('streams opened after the restart carry the new epoch', async () => {
    const session = await openSession();
    const response = await session.post(callTool('slow', 'countdown', { from: 100, interval_ms: 50 }));
    await response.body?.cancel();
    await abortAllDurableObjects();
    const events = await session.call('ping', {}, 'next');
    expect(events[0]!.id).toMatch(new RegExp(`^${session.epoch + 1}-\\d+-0$`));
  });

  it('the standalone stream continues across instances', async () => {
    const session = await openSession();
    const response = await session.get();
    const reader = new SseReader(response);
    const [priming] = await reader.take(1).finally(() => reader.cancel());
    await abortAllDurableObjects();
    const resumed = await session.get(priming!.id);
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('Mcp-Stream-Resumed')).toBe('true');
    expect(resumed.headers.get('Mcp-Stream-Id')).toBe(response.headers.get('Mcp-Stream-Id'));
    await resumed.body?.cancel();
  });
});
