/**
 * The forks this project exists to make impossible, each provoked on purpose.
 * (Eviction mid-call is in eviction.test.ts; final-event cursors and re-sent ids in
 * reconnect.test.ts; deletion and expiry in lifecycle.test.ts and bounds.test.ts.)
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { messages, openSession, callTool, toolCall } from '../support/mcp-http.ts';
import { SseReader, type ReadEvent } from '../support/sse-reader.ts';

const seqOf = (event: ReadEvent) => Number(event.id!.split('-')[2]);

describe('a reconnect without a cursor while a background task emits', () => {
  it('gets a stream flagged new, and nothing emitted after the switch lands on the abandoned stream', async () => {
    const session = await openSession();
    const firstResponse = await session.get();
    const firstStream = Number(firstResponse.headers.get('Mcp-Stream-Id'));
    const first = new SseReader(firstResponse);
    let second: SseReader | undefined;
    try {
      await first.take(1);
      await session.call('tools/call', toolCall('broadcast', { count: 40, interval_ms: 10 }));
      const before = await first.take(5);

      const secondResponse = await session.get(); // no Last-Event-ID
      expect(secondResponse.headers.get('Mcp-Stream-Resumed')).toBe('false');
      const secondStream = Number(secondResponse.headers.get('Mcp-Stream-Id'));
      expect(secondStream).toBeGreaterThan(firstStream);
      second = new SseReader(secondResponse);

      const abandoned = [...before, ...(await first.all(3_000))];
      const fresh = (await second.take(1 + 40 - abandoned.length)).slice(1);

      // Each message went to exactly one stream, in order, none lost, none twice.
      const ns = [...messages(abandoned), ...messages(fresh)].map((m: any) => m.params.data.n);
      expect(ns).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      expect(fresh.every((e) => e.id!.startsWith(`${session.epoch}-${secondStream}-`))).toBe(true);
      expect(fresh.map(seqOf)).toEqual(Array.from({ length: fresh.length }, (_, i) => i + 1));
      // And the log agrees: the superseded stream stopped growing at the switch.
      const lastSeq = await runInDurableObject(
        env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id)),
        (_i, state) => state.storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM events WHERE stream = ?`, firstStream).one().n,
      );
      expect(lastSeq).toBe(abandoned.length);
    } finally {
      await first.cancel();
      await second?.cancel();
    }
  });
});

describe('two resumes racing for one stream', () => {
  it('end with exactly one attached: the other connection ends, and live events reach only the winner', async () => {
    const session = await openSession();
    const response = await session.post(callTool('race', 'countdown', { from: 30, interval_ms: 20 }, { progressToken: 1 }));
    const original = new SseReader(response);
    const seen = await original.take(4);
    await original.cancel();
    const cursor = seen.at(-1)!.id!;

    const [a, b] = await Promise.all([session.get(cursor), session.get(cursor)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const readers = [new SseReader(a), new SseReader(b)];
    try {
      const [eventsA, eventsB] = await Promise.all(readers.map((r) => r.all(5_000)));
      const winner = [eventsA!, eventsB!].find((events) => messages(events).some((m: any) => m.id === 'race'));
      const loser = winner === eventsA ? eventsB! : eventsA!;
      expect(winner).toBeDefined();
      // The loser saw at most what was stored when it was fenced; the winner continued from
      // the cursor without a gap to the final response.
      expect(winner!.slice(1).map(seqOf)).toEqual(Array.from({ length: 31 - 4 + 1 }, (_, i) => i + 4));
      expect(messages(loser).some((m: any) => m.id === 'race')).toBe(false);
      const lastOfLoser = loser.length > 1 ? seqOf(loser.at(-1)!) : 3;
      expect(lastOfLoser).toBeLessThan(31);
    } finally {
      for (const reader of readers) await reader.cancel();
    }
  });
});

describe('a server request on a stream that gets superseded', () => {
  it('is answered normally while its stream is live', async () => {
    const session = await openSession('2025-11-25', { roots: {} });
    const reader = new SseReader(await session.get());
    try {
      await reader.take(1);
      await session.call('tools/call', toolCall('ask_later', { delay_ms: 50 }));
      const [ask] = await reader.take(1);
      const request = JSON.parse(ask!.data);
      expect(request.method).toBe('roots/list');
      await session.post({ jsonrpc: '2.0', id: request.id, result: { roots: [{ uri: 'file:///work', name: 'work' }] } });
      const [log] = await reader.take(1);
      expect(JSON.parse(log!.data)).toMatchObject({ params: { logger: 'ask_later', data: { roots: [{ uri: 'file:///work' }] } } });
    } finally {
      await reader.cancel();
    }
  });

  it('fails back to the waiting task with an error instead of hanging', async () => {
    const session = await openSession('2025-11-25', { roots: {} });
    const first = new SseReader(await session.get());
    let second: SseReader | undefined;
    try {
      await first.take(1);
      await session.call('tools/call', toolCall('ask_later', { delay_ms: 50 }));
      const [ask] = await first.take(1);
      expect(JSON.parse(ask!.data).method).toBe('roots/list');

      second = new SseReader(await session.get()); // supersedes the stream that carried it
      const [, log] = await second.take(2, 3_000);
      expect(JSON.parse(log!.data)).toMatchObject({
        params: { logger: 'ask_later', data: { error: expect.stringContaining('superseded') } },
      });
    } finally {
      await first.cancel();
      await second?.cancel();
    }
  });
});
