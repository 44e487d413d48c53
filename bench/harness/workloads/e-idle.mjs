// E4: what idle push streams keep awake (`ours` only: its count of constructed event log
// objects, as W7 counts sessions). `e4Streams` push streams of `demo.note` held through
// `e4IdleMs` with nothing emitted, their heartbeats flowing (the Worker writes them: no object
// is needed for one); then one occurrence, which every stream must receive. The log's object,
// if it hibernated during the minute (its sockets open), is constructed again by that emit:
// resident after idle = 0. Heartbeats per stream over the minute are counted too (the SEP's
// "at least every 30 seconds": 2 a minute at the least).
import { setTimeout as sleep } from 'node:timers/promises';
import { now } from '../client.mjs';
import { countsOf, inBatches } from './shared.mjs';
import { emit, isMethod, isOccurrence, openPush } from './e-events.mjs';

const HEARTBEAT = 'notifications/events/heartbeat';

export const e4 = {
  id: 'E4',
  title: 'idle push streams: event log objects resident after a minute, heartbeats flowing, then one occurrence to each',
  firstRoundOnly: true,
  metrics: [
    { key: 'log_resident_after_idle', label: 'E4 event log objects resident after 1 min idle', better: 'lower' },
    { key: 'heartbeats_min', label: 'E4 heartbeats per stream in the idle minute, least', better: 'higher' },
    { key: 'event_after_idle_ms', label: 'E4 occurrence after idle: emit → last stream ms', better: 'lower' },
  ],
  async run({ peer, sizes }) {
    const none = (status) => ({
      metrics: { log_resident_after_idle: null, heartbeats_min: null, event_after_idle_ms: null },
      status,
      raw: {},
    });
    if ((await countsOf(peer))?.logsConstructed === undefined) return none('no count of event log objects (ours only)');
    const streams = [];
    try {
      const opened = await inBatches(sizes.e4Streams, 10, async () => {
        const stream = await openPush(peer);
        if (stream === undefined) throw new Error('events/stream not served');
        streams.push(stream);
      });
      const refused = opened.find((result) => result.status === 'rejected');
      if (refused !== undefined) throw refused.reason;
      // One occurrence to every stream first: the log exists and each stream is attached.
      await deliverToAll(peer, streams, 'E4 warm');
      const heartbeatsBefore = streams.map((stream) => stream.events.filter((event) => isMethod(event, HEARTBEAT)).length);
      const before = (await countsOf(peer)).logsConstructed;
      await sleep(sizes.e4IdleMs);
      const during = (await countsOf(peer)).logsConstructed - before;
      const heartbeats = streams.map(
        (stream, i) => stream.events.filter((event) => isMethod(event, HEARTBEAT)).length - heartbeatsBefore[i],
      );
      const t0 = now();
      const arrivals = await deliverToAll(peer, streams, 'E4 after idle');
      const woken = (await countsOf(peer)).logsConstructed - before - during;
      return {
        metrics: {
          log_resident_after_idle: woken > 0 ? 0 : 1,
          heartbeats_min: Math.min(...heartbeats),
          event_after_idle_ms: Math.max(...arrivals) - t0,
        },
        raw: { streams: streams.length, idle_ms: sizes.e4IdleMs, constructed_during_idle: during, woken_by_emit: woken, heartbeats },
      };
    } finally {
      for (const stream of streams) stream.close();
    }
  },
};

/** Emits one occurrence and waits until every stream has it: the arrival time on each. */
async function deliverToAll(peer, streams, label) {
  const text = `${label} ${now()}`;
  const arrived = streams.map((stream) =>
    stream.waitFor((event) => isOccurrence(event) && event.message.params?.data?.text === text, 15_000),
  );
  for (const wait of arrived) wait.catch(() => undefined);
  await emit(peer, text);
  return (await Promise.all(arrived)).map((event) => event.t);
}
