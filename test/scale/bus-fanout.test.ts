/**
 * The listen bus at scale, in workerd: 2,000 listen streams over BUS_SHARDS=8, in one isolate
 * (MAX_LISTEN_STREAMS=4096: the SDK's default is 1,024 a handler; vitest.config.ts, project
 * `scale`, run by `npm run bus-scale`, not by npm test), each dealt to a shard, 20 changes, and
 * each stream must hear each change exactly once. Prints the per-shard socket counts.
 */
import { exports } from 'cloudflare:workers';
import { expect, it } from 'vitest';
import { modernRequest } from '../support/modern-http.ts';
import { message, SseReader } from '../support/sse-reader.ts';

const LISTENERS = 2_000;
const PUBLISHES = 20;

async function shardSockets(): Promise<number[]> {
  const response = await exports.default.fetch(new Request('http://localhost/_fixture/bus-sockets'));
  return ((await response.json()) as { sockets: number[] }).sockets;
}

it(`delivers each of ${PUBLISHES} changes to each of ${LISTENERS} listen streams exactly once`, { timeout: 300_000 }, async () => {
  const readers: SseReader[] = [];
  try {
    for (let i = 0; i < LISTENERS; i += 100) {
      const batch = await Promise.all(
        Array.from(
          { length: 100 },
          async () => new SseReader(await modernRequest('subscriptions/listen', { notifications: { toolsListChanged: true } })),
        ),
      );
      for (const reader of batch) await reader.take(1, 30_000); // its acknowledgement
      readers.push(...batch);
    }
    let sockets = await shardSockets();
    for (let attempt = 0; attempt < 600 && sockets.reduce((a, b) => a + b, 0) < LISTENERS; attempt++) {
      await scheduler.wait(100);
      sockets = await shardSockets();
    }
    console.log(`bus: ${LISTENERS} listen streams, sockets per shard ${sockets.join(' ')}`);
    expect(sockets.reduce((a, b) => a + b, 0)).toBe(LISTENERS);
    for (let n = 0; n < PUBLISHES; n++) {
      await (await modernRequest('tools/call', { name: 'test_trigger_tool_change', arguments: {} })).text();
    }
    let exact = 0;
    for (const reader of readers) {
      const heard = (await reader.take(PUBLISHES, 60_000)).map((event) => message(event).method);
      if (heard.every((method) => method === 'notifications/tools/list_changed')) exact++;
    }
    // Anything heard twice has arrived by now.
    let extra = 0;
    for (const reader of readers) if (typeof (await reader.next(5)) !== 'symbol') extra++;
    console.log(`bus: ${PUBLISHES} changes: ${exact} of ${LISTENERS} streams heard each exactly once, ${extra} heard more`);
    expect({ exact, extra }).toEqual({ exact: LISTENERS, extra: 0 });
  } finally {
    await Promise.all(readers.map((reader) => reader.cancel()));
  }
});
