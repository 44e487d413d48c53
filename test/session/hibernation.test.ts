/**
 * Idle sessions hibernate: the Worker holds each client's SSE response and the object holds
 * only hibernatable relay sockets, so an object whose clients merely listen has no request in
 * flight and no timer pending, and the runtime may evict it with its connections open. Waking
 * is not a restart: the connections are rebuilt from their sockets, events reach them, fencing
 * and replay hold, and the epoch does not move. (A real restart mid-call: eviction.test.ts.)
 *
 * `evictDurableObject` evicts as the platform does when an object hibernates: its instance is
 * torn down, its hibernatable sockets stay open. Were a client's response still streaming out
 * of the object, the eviction would cut it: these connections surviving is the evidence that
 * nothing was in flight.
 */
import { abortAllDurableObjects, evictDurableObject, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { parseEventId } from '../../src/core/event-id.ts';
import { messages, openSession, callTool, toolCall, type Session } from '../support/mcp-http.ts';
import { ENDED, SseReader, TIMED_OUT } from '../support/sse-reader.ts';

const stubOf = (session: Session) => env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id));
const instanceOf = (session: Session) => runInDurableObject(stubOf(session), (instance) => instance);
const broadcast = (session: Session, id: string) => session.post(callTool(id, 'broadcast', { count: 1, interval_ms: 0 }));

/** Opens the standalone stream and reads its priming event. */
async function listen(session: Session) {
  const response = await session.get();
  const reader = new SseReader(response);
  const [priming] = await reader.take(1);
  return { response, reader, priming: priming! };
}

describe('an object whose clients only listen', () => {
  it('is evicted with its connection open; woken, it delivers the next event on the same stream and epoch', async () => {
    const session = await openSession();
    const { response, reader, priming } = await listen(session);
    try {
      const before = await instanceOf(session);
      await evictDurableObject(stubOf(session));
      expect(await reader.next(200), 'the connection outlived the instance').toBe(TIMED_OUT);

      const call = await broadcast(session, 'after');
      expect(call.headers.get('Mcp-Session-Epoch'), 'waking is not a restart').toBe(String(session.epoch));
      await call.body?.cancel();
      expect(await instanceOf(session)).not.toBe(before);

      const [event] = await reader.take(1);
      expect(event!.id).toBe(session.eventId(response.headers.get('Mcp-Stream-Id')!, 1));
      expect(priming.id).toBe(session.eventId(response.headers.get('Mcp-Stream-Id')!, 0));
      expect(messages([event!])).toEqual([
        { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'broadcast', data: { n: 1, of: 1 } } },
      ]);
    } finally {
      await reader.cancel();
    }
  });

  it('woken, a newer attachment still fences the hibernated connection, and resumes exactly after the cursor', async () => {
    const session = await openSession();
    const { reader: first } = await listen(session);
    try {
      await (await broadcast(session, 'one')).body?.cancel();
      const [delivered] = await first.take(1);
      await evictDurableObject(stubOf(session));

      const again = await session.get(delivered!.id);
      expect(again.headers.get('Mcp-Stream-Resumed')).toBe('true');
      const second = new SseReader(again);
      try {
        expect(await first.next(2_000), 'the fenced connection ends').toBe(ENDED);
        const [primed] = await second.take(1);
        expect(primed!.id).toBe(delivered!.id);
        await (await broadcast(session, 'two')).body?.cancel();
        const [next] = await second.take(1);
        expect(messages([next!])).toMatchObject([{ params: { data: { n: 1, of: 1 } } }]);
        const cursor = parseEventId(delivered!.id!)!;
        expect(parseEventId(next!.id!)).toEqual({ ...cursor, seq: cursor.seq + 1 });
      } finally {
        await second.cancel();
      }
    } finally {
      await first.cancel();
    }
  });

  it('woken, a finished call still replays from its first event, once', async () => {
    const session = await openSession();
    const { reader } = await listen(session);
    try {
      const done = await session.call('tools/call', toolCall('countdown', { from: 3, interval_ms: 0 }, { progressToken: 'p' }), 'c');
      await evictDurableObject(stubOf(session));
      const replayed = await new SseReader(await session.get(done[0]!.id)).all();
      expect(replayed.map((e) => e.data)).toEqual(done.map((e) => e.data));
      expect(replayed.map((e) => e.id)).toEqual(done.map((e) => e.id));
    } finally {
      await reader.cancel();
    }
  });

  it('its client leaving while it hibernates closes the relay socket', async () => {
    const session = await openSession();
    const { reader } = await listen(session);
    await evictDurableObject(stubOf(session));
    await reader.cancel();
    // The close wakes the object, which drops the connection: nobody is listening any more.
    let listening = true;
    for (let waited = 0; listening && waited < 2_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      listening = await runInDurableObject(stubOf(session), (_instance, state) => state.getWebSockets().length > 0);
    }
    expect(listening).toBe(false);
  });

  it('deleted while it hibernates, its client listening: the relay socket closes and nothing is written after the storage is gone', async () => {
    const session = await openSession();
    const { reader } = await listen(session);
    try {
      await evictDurableObject(stubOf(session));
      await session.delete(); // wakes it: deleteAll, then its connections end
      expect(await reader.next(2_000)).toBe(ENDED);
    } finally {
      await reader.cancel();
    }
    // The Worker's side of the socket closes after the storage is gone, and that close may wake
    // another instance: it must find nothing to rebuild and write nothing (no schema, no alarm).
    await evictDurableObject(stubOf(session));
    let sockets = 1;
    for (let waited = 0; sockets > 0 && waited < 2_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      sockets = await runInDurableObject(stubOf(session), (_instance, state) => state.getWebSockets().length);
    }
    expect(sockets).toBe(0);
    const left = await runInDurableObject(stubOf(session), async (_instance, state) => ({
      tables: state.storage.sql.exec(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).toArray(),
      alarm: await state.storage.getAlarm(),
    }));
    expect(left).toEqual({ tables: [], alarm: null });
  });
});

describe('a real restart, unlike a hibernation', () => {
  it('ends the connection of a client still listening to a running call; its resume gets the interruption and the next epoch', async () => {
    const session = await openSession();
    const response = await session.post(callTool('long', 'countdown', { from: 1_000, interval_ms: 20 }, { progressToken: 't' }));
    const reader = new SseReader(response);
    const seen = await reader.take(4);
    await abortAllDurableObjects();
    // The restart closed the relay socket: the Worker ends the response, and the client resumes.
    expect(await reader.next(2_000)).toBe(ENDED);
    const resumed = await session.get(seen.at(-1)!.id);
    expect(resumed.headers.get('Mcp-Session-Epoch')).toBe(String(session.epoch + 1));
    const rest = messages(await new SseReader(resumed).all());
    expect(rest.at(-1)).toMatchObject({ id: 'long', error: { data: { reason: 'request_interrupted', epoch: session.epoch + 1 } } });
  });
});

describe('what an idle object keeps', () => {
  const realSetTimeout = globalThis.setTimeout;
  const realSetInterval = globalThis.setInterval;
  const realClearTimeout = globalThis.clearTimeout;
  const realClearInterval = globalThis.clearInterval;
  afterEach(() => {
    globalThis.setTimeout = realSetTimeout;
    globalThis.setInterval = realSetInterval;
    globalThis.clearTimeout = realClearTimeout;
    globalThis.clearInterval = realClearInterval;
  });

  /**
   * Records the timers the session object's code creates (by the stack of the call), and which
   * of them are still pending. The Worker shares this isolate in tests: its timers (heartbeats)
   * are told apart by where they are created.
   */
  function recordObjectTimers() {
    const pending = new Map<unknown, string>();
    const created: string[] = [];
    const fromObject = () => (new Error().stack ?? '').split('\n').some((line) => line.includes('/src/session/'));
    globalThis.setTimeout = ((callback: () => void, ms?: number) => {
      if (!fromObject()) return realSetTimeout(callback, ms);
      const handle = realSetTimeout(() => {
        pending.delete(handle);
        callback();
      }, ms);
      pending.set(handle, `setTimeout(${ms})`);
      created.push(`setTimeout(${ms})`);
      return handle;
    }) as typeof setTimeout;
    globalThis.setInterval = ((callback: () => void, ms?: number) => {
      const handle = realSetInterval(callback, ms);
      if (fromObject()) {
        pending.set(handle, `setInterval(${ms})`);
        created.push(`setInterval(${ms})`);
      }
      return handle;
    }) as typeof setInterval;
    globalThis.clearTimeout = ((handle: number) => {
      pending.delete(handle);
      realClearTimeout(handle);
    }) as typeof clearTimeout;
    globalThis.clearInterval = ((handle: number) => {
      pending.delete(handle);
      realClearInterval(handle);
    }) as typeof clearInterval;
    return { pending, created };
  }

  it('no timer is pending once its clients only listen, whatever ran before', async () => {
    const session = await openSession();
    const { pending, created } = recordObjectTimers();
    const { reader } = await listen(session);
    try {
      // Work that used the object's clocks: a streaming call and a broadcast on the listened stream.
      await session.call('tools/call', toolCall('countdown', { from: 20, interval_ms: 1 }, { progressToken: 'p' }));
      await (await broadcast(session, 'b')).body?.cancel();
      await reader.take(1);
      expect(created.length, 'the object did use timers while it worked').toBeGreaterThan(0);
      await new Promise((resolve) => realSetTimeout(resolve, 50));
      expect([...pending.values()]).toEqual([]);
    } finally {
      await reader.cancel();
    }
  });
});
