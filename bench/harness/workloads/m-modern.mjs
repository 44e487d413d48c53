// The M family: the 2026-07-28 era, no session — M1 sequential echo calls, M2 concurrent
// clients, M3 a `subscriptions/listen` notification from the call that causes it. Each runs
// only where the peer answers `server/discover` with that revision (else n/a). M1 and M3 take
// every such peer in one pass, call by call and change by change (acrossModern), as W1 does; M2,
// a throughput, runs one peer at a time. Its tasks are the T family's (t-tasks.mjs,
// t-task-streams.mjs).
import { modernListen, modernRequest, now } from '../client.mjs';
import { median, percentile } from '../stats.mjs';
import { roundOrder } from '../round-order.mjs';

/** Whether the peer serves 2026-07-28 (a `server/discover` answered with that revision). */
async function speaksModern(peer) {
  try {
    const { message } = await modernRequest(peer.url, 'server/discover');
    return message?.result?.supportedVersions?.includes('2026-07-28') === true;
  } catch {
    return false;
  }
}

async function modernEcho(peer) {
  const t0 = now();
  const { status, message } = await modernRequest(peer.url, 'tools/call', { name: 'echo', arguments: { text: 'hi' } });
  if (status !== 200 || message?.result?.content?.[0]?.text !== 'hi') throw new Error(`M echo: HTTP ${status} ${JSON.stringify(message)}`);
  return now() - t0;
}

const NOT_MODERN = 'does not serve 2026-07-28';

/**
 * Runs `step(entry, i)` for i in [-warmup, count) over the modern peers, call by call as W1 does
 * (call i goes to every peer, the first one moving on with each call, before call i + 1 goes to
 * any): a noisy stretch of this shared machine lands on all of them alike. `entry` is what
 * `setUp(peer)` made, with `peer` and `latencies` added (the same object: a listener set up there
 * reaches what a step puts on it); a step's number is recorded for i ≥ 0. A peer that does
 * not serve 2026-07-28 is answered n/a; one that fails is left out from then on with its error.
 */
async function acrossModern(peers, { warmup, count, setUp = async () => ({}), step, tearDown = async () => undefined, metrics }) {
  const results = {};
  const open = [];
  for (const peer of peers) {
    try {
      if (!(await speaksModern(peer))) results[peer.name] = { metrics: metrics(null), status: NOT_MODERN, raw: {} };
      else open.push(Object.assign(await setUp(peer), { peer, latencies: [] }));
    } catch (error) {
      results[peer.name] = { error };
    }
  }
  try {
    for (let i = -warmup; i < count; i++) {
      for (const k of roundOrder(i, open.length)) {
        const entry = open[k];
        if (results[entry.peer.name] !== undefined) continue;
        try {
          const ms = await step(entry, i);
          if (i >= 0) entry.latencies.push(ms);
        } catch (error) {
          results[entry.peer.name] = { error };
        }
      }
    }
  } finally {
    await Promise.allSettled(open.map((entry) => tearDown(entry)));
  }
  for (const { peer, latencies } of open) {
    results[peer.name] ??= { metrics: metrics(latencies), raw: { latencies_ms: latencies } };
  }
  return results;
}

export const m1 = {
  id: 'M1',
  title: 'sequential 2026-07-28 tools/call echo (no session)',
  metrics: [
    { key: 'p50_ms', label: 'M1 modern echo p50 ms', better: 'lower' },
    { key: 'p99_ms', label: 'M1 modern echo p99 ms', better: 'lower' },
  ],
  /**
   * Every modern peer in one pass, call by call (acrossModern): run one peer after another, five
   * rounds of `ours`, `modern-floor` and `sdk-modern` put ours at 1.17× the modern floor where
   * the same calls interleaved (pair.mjs --modern) gave 0.99–1.09×.
   */
  runAcross({ peers, sizes }) {
    return acrossModern(peers, {
      warmup: sizes.m1Warmup,
      count: sizes.m1Calls,
      step: ({ peer }) => modernEcho(peer),
      metrics: (latencies) =>
        latencies === null ? { p50_ms: null, p99_ms: null } : { p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99) },
    });
  },
};

export const m2 = {
  id: 'M2',
  title: '2026-07-28 echo calls, concurrent clients (each sequential)',
  metrics: [{ key: 'calls_per_s', label: 'M2 modern echo calls/s', better: 'higher' }],
  async run({ peer, sizes }) {
    if (!(await speaksModern(peer))) return { metrics: { calls_per_s: null }, status: NOT_MODERN, raw: {} };
    const t0 = now();
    await Promise.all(
      Array.from({ length: sizes.m2Clients }, async () => {
        for (let i = 0; i < sizes.m2Calls; i++) await modernEcho(peer);
      }),
    );
    const seconds = (now() - t0) / 1000;
    return { metrics: { calls_per_s: (sizes.m2Clients * sizes.m2Calls) / seconds }, raw: { seconds } };
  },
};

export const m3 = {
  id: 'M3',
  title: 'a subscriptions/listen notification, from the call that causes it to the listener',
  metrics: [{ key: 'p50_ms', label: 'M3 listen notification p50 ms', better: 'lower' }],
  /** Every modern peer in one pass, change by change (acrossModern), each with its own listen stream held throughout. */
  runAcross({ peers, sizes }) {
    return acrossModern(peers, {
      warmup: 0,
      count: sizes.m3Changes,
      async setUp(peer) {
        const entry = { arrived: undefined };
        entry.listener = await modernListen(peer.url, (event) => {
          if (event.message?.method === 'notifications/tools/list_changed') entry.arrived?.(event.t);
        });
        return entry;
      },
      async step(entry) {
        let timer;
        const notified = new Promise((resolve, reject) => {
          entry.arrived = resolve;
          timer = setTimeout(() => reject(new Error('M3: no notification within 5 s')), 5_000);
        });
        try {
          const t0 = now();
          const { message } = await modernRequest(entry.peer.url, 'tools/call', { name: 'changed', arguments: {} });
          if (message?.result === undefined) throw new Error(`M3: ${JSON.stringify(message)}`);
          return (await notified) - t0;
        } finally {
          clearTimeout(timer);
          entry.arrived = undefined;
        }
      },
      tearDown: async (entry) => entry.listener?.close(),
      metrics: (latencies) => ({ p50_ms: latencies === null ? null : median(latencies) }),
    });
  },
};
