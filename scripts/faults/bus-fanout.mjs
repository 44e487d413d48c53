// The listen bus at scale, on loopback: against `wrangler dev` (the fixture server) with
// BUS_SHARDS shards, it opens L `subscriptions/listen` streams (tool list changes), waits until
// every stream's socket is held by a shard, makes P tool list changes, and counts what each
// stream heard. Prints
//   bus: <L> listeners over <S> shards (sockets per shard …), <P> publishes: <E> listeners heard each exactly once, <M> missed, <D> duplicates
// and exits 1 unless every listener heard every publish exactly once. Bounded in count and time;
// the server is always stopped. Options: --listeners 2000, --publishes 20, --shards 8. Local
// wrangler dev runs one isolate, so it is given MAX_LISTEN_STREAMS 4096 (the SDK's default
// allows 1,024 listen streams a handler; the 1,025th is refused), and no share of them per client
// address (MAX_LISTENS_PER_PRINCIPAL 0): every stream comes from one.
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { withDevServer } from '../support/dev-server.mjs';
import { postModern } from './task-follow-raw.mjs';

const { values } = parseArgs({
  options: {
    listeners: { type: 'string', default: '2000' },
    publishes: { type: 'string', default: '20' },
    shards: { type: 'string', default: '8' },
  },
});
const listeners = Number(values.listeners);
const publishes = Number(values.publishes);
const shards = Number(values.shards);
const port = Number(process.env.BUS_FANOUT_PORT ?? 8803);
const WAIT_MS = 120_000;
const ACK_MS = 30_000;

/** A listen stream: counts the list changes it hears after its acknowledgement. */
async function listen(url) {
  const controller = new AbortController();
  // Open until the script closes it: no timeout of its own.
  const response = await postModern(
    url,
    'subscriptions/listen',
    { notifications: { toolsListChanged: true } },
    { signal: controller.signal },
  );
  const state = { acknowledged: false, heard: 0, close: () => controller.abort() };
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let ack;
  const acked = new Promise((resolve) => (ack = resolve));
  (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame.split('\n').find((line) => line.startsWith('data: '));
          if (data === undefined) continue;
          const method = JSON.parse(data.slice(6)).method;
          if (method === 'notifications/subscriptions/acknowledged') {
            state.acknowledged = true;
            ack();
          } else if (method === 'notifications/tools/list_changed') state.heard++;
        }
      }
    } catch {
      // closed by the script
    }
  })();
  controller.signal.addEventListener('abort', () => void reader.cancel().catch(() => {}));
  // Bounded: a stream not acknowledged within the wait is counted, not waited for.
  await Promise.race([acked, sleep(ACK_MS)]);
  return state;
}

async function shardSockets(base) {
  const response = await fetch(`${base}/_fixture/bus-sockets`);
  return (await response.json()).sockets;
}

const result = await withDevServer(
  port,
  async (url) => {
    const base = new URL(url).origin;
    const started = Date.now();
    const streams = [];
    // Opened in batches, so the server is never asked for thousands at once.
    for (let i = 0; i < listeners && Date.now() - started < WAIT_MS; i += 100) {
      streams.push(...(await Promise.all(Array.from({ length: Math.min(100, listeners - i) }, () => listen(url)))));
      const sockets = await shardSockets(base);
      console.error(
        `  ${streams.length} opened, ${streams.filter((s) => s.acknowledged).length} acknowledged, sockets ${sockets.join(' ')}`,
      );
    }
    let sockets = await shardSockets(base);
    while (sockets.reduce((a, b) => a + b, 0) < listeners && Date.now() - started < WAIT_MS) {
      await sleep(200);
      sockets = await shardSockets(base);
    }
    for (let n = 0; n < publishes; n++) {
      const answer = await postModern(
        url,
        'tools/call',
        { name: 'test_trigger_tool_change', arguments: {} },
        { name: 'test_trigger_tool_change' },
      );
      await answer.text();
    }
    const deadline = Date.now() + 30_000;
    while (streams.some((stream) => stream.heard < publishes) && Date.now() < deadline) await sleep(200);
    await sleep(500); // anything heard twice arrives by now
    for (const stream of streams) stream.close();
    return { sockets, streams, seconds: (Date.now() - started) / 1000 };
  },
  // One loopback address opens every stream: no share of the isolate's listens per address.
  { args: ['--var', `BUS_SHARDS:${shards}`, '--var', 'MAX_LISTEN_STREAMS:4096', '--var', 'MAX_LISTENS_PER_PRINCIPAL:0'] },
);

const unacknowledged = result.streams.filter((stream) => !stream.acknowledged).length;
const exact = result.streams.filter((stream) => stream.heard === publishes).length;
const missed = result.streams.filter((stream) => stream.heard < publishes).length;
const duplicates = result.streams.filter((stream) => stream.heard > publishes).length;
console.log(
  `bus: ${listeners} listeners over ${shards} shards (sockets per shard ${result.sockets.join(' ')}), ${publishes} publishes: ` +
    `${exact} listeners heard each exactly once, ${missed} missed, ${duplicates} duplicates, ${unacknowledged} never acknowledged (${result.seconds.toFixed(1)} s)`,
);
process.exit(exact === listeners && result.streams.length === listeners ? 0 : 1);
