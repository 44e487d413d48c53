/**
 * The listen bus over three shards (BUS_SHARDS=3, vitest.config.ts): listen streams are dealt
 * to the shards in turn, and every publish reaches every shard, so each stream hears each
 * change once, whichever shard holds it.
 */
import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { busShardName } from '../../src/stateless/event-bus.ts';
import { answerOf, modernRequest } from '../support/modern-http.ts';
import { message, SseReader } from '../support/sse-reader.ts';

async function shardSockets(): Promise<number[]> {
  const response = await exports.default.fetch(new Request('http://localhost/_fixture/bus-sockets'));
  return ((await response.json()) as { sockets: number[] }).sockets;
}

describe('bus shards', () => {
  it.each([
    [0, 'bus'],
    [1, 'bus:1'],
    [63, 'bus:63'],
  ])('shard %i is named %s: the first keeps the single bus object’s name', (index, name) => {
    expect(busShardName(index)).toBe(name);
  });

  it.each([-1, 1.5, Number.NaN])('refuse the index %d', (index) => {
    expect(() => busShardName(index)).toThrow(RangeError);
  });

  it('hold the listen streams in turn, and each stream hears each change exactly once', async () => {
    const readers = await Promise.all(
      Array.from(
        { length: 6 },
        async () => new SseReader(await modernRequest('subscriptions/listen', { notifications: { toolsListChanged: true } })),
      ),
    );
    try {
      for (const reader of readers) await reader.take(1); // each acknowledgement
      // Each stream's socket opens a round trip after its acknowledgement.
      let sockets = await shardSockets();
      for (let attempt = 0; attempt < 100 && sockets.reduce((a, b) => a + b, 0) < 6; attempt++) {
        await scheduler.wait(10);
        sockets = await shardSockets();
      }
      expect(sockets).toEqual([2, 2, 2]);
      for (let n = 0; n < 3; n++) await answerOf(await modernRequest('tools/call', { name: 'test_trigger_tool_change', arguments: {} }));
      for (const reader of readers) {
        const heard = (await reader.take(3)).map((event) => message(event).method);
        expect(heard).toEqual(Array(3).fill('notifications/tools/list_changed'));
        expect(await reader.next(200)).toSatisfy((next) => typeof next === 'symbol', 'nothing more: each change once');
      }
    } finally {
      await Promise.all(readers.map((reader) => reader.cancel()));
    }
  });
});
