// The W family's sessions that hold a standalone `GET` stream and do nothing: W6 the memory
// each costs (RSS per session, round 1 only, on a fresh peer), W7 what an idle minute leaves
// resident (`ours` only: its count of constructed objects and its `notify` tool) and how long
// an event then takes to arrive. With the helpers only they use: W7's listening session
// and its count of session objects; the peer's counts themselves (`countsOf`, T4's too) are in
// shared.mjs.
import { setTimeout as sleep } from 'node:timers/promises';
import { initialize, modernListen, modernRequest, now } from '../client.mjs';
import { median } from '../stats.mjs';
import { expectResult, withSession, inBatches, countsOf } from './shared.mjs';

const W6_DEADLINE_MS = 180_000;

export const w6 = {
  id: 'W6',
  title: 'memory per idle session holding a GET SSE stream',
  // Only on a fresh peer: a process keeps (and reuses) memory freed by earlier sessions, so a
  // later round measures less than the sessions take. Peers start once, so: round 1, first.
  firstRoundOnly: true,
  metrics: [{ key: 'kb_per_session', label: 'W6 KB per session', better: 'lower' }],
  async run({ peer, sizes, memoryRss }) {
    const sessions = [];
    const streams = [];
    try {
      // One session and stream first, not counted: one-time costs (code loaded and compiled,
      // a Durable Object class set up) would otherwise be split over the sessions measured.
      const warmup = await withSession(peer.url, async (session) => {
        const stream = await session.openStream();
        stream.close();
        return stream;
      }).catch(() => undefined);
      // A definite refusal (e.g. 405: no standalone stream) would only repeat for every session.
      if (warmup && !warmup.ok && warmup.status >= 400 && warmup.status < 500) {
        return {
          metrics: { kb_per_session: null },
          status: `no stream held (GET stream: HTTP ${warmup.status})`,
          raw: { warmup_status: warmup.status },
        };
      }
      await sleep(sizes.w6SettleMs);
      const before = await memoryRss(peer);
      const deadline = now() + W6_DEADLINE_MS;
      let failed = 0;
      let firstError;
      let half;
      for (let opened = 0; opened < sizes.w6Sessions && now() < deadline; opened += sizes.w6Batch) {
        if (half === undefined && opened >= sizes.w6Sessions / 2) half = { held: streams.length, rss: await memoryRss(peer) };
        const heldBefore = streams.length;
        const results = await inBatches(Math.min(sizes.w6Batch, sizes.w6Sessions - opened), sizes.w6Batch, async () => {
          const session = await initialize(peer.url);
          sessions.push(session);
          const stream = await session.openStream();
          if (!stream.ok) throw new Error(`GET stream: HTTP ${stream.status}`);
          streams.push(stream);
        });
        for (const result of results) {
          if (result.status === 'rejected') {
            failed++;
            firstError ??= String(result.reason?.message ?? result.reason);
          }
        }
        if (streams.length === heldBefore) break; // a whole batch refused: the rest would be too
      }
      const held = streams.length;
      if (held === 0)
        return {
          metrics: { kb_per_session: null },
          status: `no stream held (${firstError})`,
          raw: { failed, first_error: firstError ?? null },
        };
      await sleep(sizes.w6SettleMs);
      const after = await memoryRss(peer);
      const raw = {
        sessions_held: held,
        failed,
        rss_before: before,
        rss_after: after,
        // The second half alone: less flattered by memory freed earlier and reused.
        kb_per_session_second_half: half && held > half.held ? (after - half.rss) / 1024 / (held - half.held) : null,
        first_error: firstError ?? null,
      };
      return {
        metrics: { kb_per_session: (after - before) / 1024 / held },
        status: held < sizes.w6Sessions ? `only ${held} of ${sizes.w6Sessions} streams held (${firstError ?? 'deadline'})` : undefined,
        raw,
      };
    } finally {
      for (const stream of streams) stream.close();
      await inBatches(sessions.length, sizes.w6Batch, (i) => sessions[i].close());
    }
  },
};

const W7_WARM_SAMPLES = 10;
const W7_EVENT_TIMEOUT_MS = 15_000;

const instancesOf = async (peer) => (await countsOf(peer))?.constructed;

/**
 * One session holding its standalone stream, and a way to time an event on it: `deliver`
 * POSTs the `notify` tool and resolves with the ms from the POST to the event's arrival.
 */
async function listeningSession(url) {
  const session = await initialize(url);
  const waiting = new Map();
  const stream = await session.openStream({
    onEvent: (event) => {
      const arrived = waiting.get(event.message?.params?.data);
      if (arrived !== undefined) arrived(event.t);
    },
  });
  const deliver = async (text) => {
    let timer;
    const arrival = new Promise((resolve, reject) => {
      waiting.set(text, resolve);
      timer = setTimeout(
        () => reject(new Error(`W7: the event "${text}" did not arrive within ${W7_EVENT_TIMEOUT_MS} ms`)),
        W7_EVENT_TIMEOUT_MS,
      );
    });
    const t0 = now();
    try {
      expectResult(await session.callTool('notify', { text }), 'W7 notify');
      return (await arrival) - t0;
    } finally {
      clearTimeout(timer);
      waiting.delete(text);
    }
  };
  return { session, stream, deliver };
}

export const w7 = {
  id: 'W7',
  title: 'idle sessions holding a GET stream: objects resident after a minute, then one event each',
  // A minute of idleness per run: round 1 only, like W6.
  firstRoundOnly: true,
  metrics: [
    { key: 'resident_after_idle', label: 'W7 objects resident after 1 min idle', better: 'lower' },
    { key: 'event_after_idle_p50_ms', label: 'W7 event after idle p50 ms', better: 'lower' },
    { key: 'event_warm_p50_ms', label: 'W7 event warm p50 ms', better: 'lower' },
    { key: 'bus_resident_after_idle', label: 'W7 bus object resident after idle (listeners)', better: 'lower' },
    { key: 'listen_after_idle_ms', label: 'W7 listen notification after idle ms', better: 'lower' },
  ],
  async run({ peer, sizes, memoryRss }) {
    const none = (status) => ({
      metrics: {
        resident_after_idle: null,
        event_after_idle_p50_ms: null,
        event_warm_p50_ms: null,
        bus_resident_after_idle: null,
        listen_after_idle_ms: null,
      },
      status,
      raw: {},
    });
    if ((await instancesOf(peer)) === undefined) return none('no instance count and no notify tool (ours only)');
    const listeners = [];
    const listenStreams = [];
    try {
      // 2026-07-28 listen streams, idle through the same minute: does the bus object sleep too?
      const heard = [];
      for (let i = 0; i < sizes.w7Listeners; i++) {
        listenStreams.push(
          await modernListen(peer.url, (event) => {
            if (event.message?.method === 'notifications/tools/list_changed') heard.push(event.t);
          }),
        );
      }
      const rssBefore = await memoryRss(peer);
      const opened = await inBatches(sizes.w7Sessions, sizes.w7Batch, async () => {
        const listener = await listeningSession(peer.url);
        listeners.push(listener);
        if (!listener.stream.ok) throw new Error(`GET stream: HTTP ${listener.stream.status}`);
      });
      const refused = opened.find((result) => result.status === 'rejected');
      if (refused !== undefined) throw refused.reason;
      const warm = [];
      for (const listener of listeners.slice(0, W7_WARM_SAMPLES)) warm.push(await listener.deliver(`warm-${warm.length}`));
      const beforeIdle = await instancesOf(peer);
      await sleep(sizes.w7IdleMs);
      const rssIdle = await memoryRss(peer);
      const { constructed: afterIdle, busConstructed: busAfterIdle } = await countsOf(peer);
      // One change for every listener: the bus object, if it slept, is constructed anew.
      const t0 = now();
      await modernRequest(peer.url, 'tools/call', { name: 'changed', arguments: {} });
      for (let waited = 0; heard.length < listenStreams.length && waited < 5_000; waited += 10) await sleep(10);
      if (heard.length < listenStreams.length) throw new Error(`W7: ${heard.length} of ${listenStreams.length} listeners heard the change`);
      const listenAfterIdle = Math.max(...heard) - t0;
      const busWoken = (await countsOf(peer)).busConstructed - busAfterIdle;
      // One at a time, as the warm ones: concurrent calls on this 2-core machine would time the
      // queue, not the wake-up.
      const afterIdleEvents = [];
      for (const [i, listener] of listeners.entries()) afterIdleEvents.push(await listener.deliver(`idle-${i}`));
      // An object that hibernated during the minute is constructed again by the event's call.
      const woken = (await instancesOf(peer)) - afterIdle;
      return {
        metrics: {
          resident_after_idle: listeners.length - woken,
          event_after_idle_p50_ms: median(afterIdleEvents),
          event_warm_p50_ms: median(warm),
          bus_resident_after_idle: busWoken > 0 ? 0 : 1,
          listen_after_idle_ms: listenAfterIdle,
        },
        raw: {
          sessions: listeners.length,
          idle_ms: sizes.w7IdleMs,
          constructed_before_idle: beforeIdle,
          constructed_during_idle: afterIdle - beforeIdle,
          woken_by_event: woken,
          event_after_idle_ms: afterIdleEvents,
          event_warm_ms: warm,
          listeners: listenStreams.length,
          bus_constructed_by_the_change: busWoken,
          // Not a metric: a process that served other workloads keeps (and reuses) what they
          // freed, and local workerd keeps an evicted object's memory (bench/README.md, W6).
          rss_before: rssBefore,
          rss_idle: rssIdle,
        },
      };
    } finally {
      for (const listen of listenStreams) listen.close();
      for (const { stream } of listeners) stream.close();
      await inBatches(listeners.length, sizes.w7Batch, (i) => listeners[i].session.close());
    }
  },
};
