// The M family: the 2026-07-28 era, no session — M1 sequential echo calls, M2 concurrent
// clients, M3 a `subscriptions/listen` notification from the call that causes it. Each runs
// only where the peer answers `server/discover` with that revision (else n/a). Its tasks are
// the T family's (t-tasks.mjs, t-task-streams.mjs).
import { modernListen, modernRequest, now } from '../client.mjs';
import { median, percentile } from '../stats.mjs';

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

export const m1 = {
  id: 'M1',
  title: 'sequential 2026-07-28 tools/call echo (no session)',
  metrics: [
    { key: 'p50_ms', label: 'M1 modern echo p50 ms', better: 'lower' },
    { key: 'p99_ms', label: 'M1 modern echo p99 ms', better: 'lower' },
  ],
  async run({ peer, sizes }) {
    if (!(await speaksModern(peer))) return { metrics: { p50_ms: null, p99_ms: null }, status: NOT_MODERN, raw: {} };
    for (let i = 0; i < sizes.m1Warmup; i++) await modernEcho(peer);
    const latencies = [];
    for (let i = 0; i < sizes.m1Calls; i++) latencies.push(await modernEcho(peer));
    return { metrics: { p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99) }, raw: { latencies } };
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
  async run({ peer, sizes }) {
    if (!(await speaksModern(peer))) return { metrics: { p50_ms: null }, status: NOT_MODERN, raw: {} };
    let arrived;
    const listener = await modernListen(peer.url, (event) => {
      if (event.message?.method === 'notifications/tools/list_changed') arrived?.(event.t);
    });
    const latencies = [];
    try {
      for (let i = 0; i < sizes.m3Changes; i++) {
        const notified = new Promise((resolve, reject) => {
          arrived = resolve;
          setTimeout(() => reject(new Error('M3: no notification within 5 s')), 5_000);
        });
        const t0 = now();
        const { message } = await modernRequest(peer.url, 'tools/call', { name: 'changed', arguments: {} });
        if (message?.result === undefined) throw new Error(`M3: ${JSON.stringify(message)}`);
        latencies.push((await notified) - t0);
      }
    } finally {
      listener.close();
    }
    return { metrics: { p50_ms: median(latencies) }, raw: { latencies } };
  },
};
