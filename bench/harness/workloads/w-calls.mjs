// The W family's calls (2025-11-25, in a session): W0 a new session and its first echo, W1
// sequential echo calls, W2 concurrent sessions calling echo, W3 one call streaming progress
// notifications. The latency and throughput figures of one call; resumption is
// w-resume.mjs's, sessions held idle w-held-streams.mjs's. W3's run itself (`progressRun`) is
// in shared.mjs, as T3 runs it too; so is `interleaved` (the peers taken step by step).
import { cpuMs } from '../../peers/index.mjs';
import { initialize, now } from '../client.mjs';
import { median, percentile } from '../stats.mjs';
import { CALL_TIMEOUT_MS, expectResult, firstEcho, interleaved, progressRun } from './shared.mjs';
import { roundOrder } from '../round-order.mjs';

export const w0 = {
  id: 'W0',
  title: 'a new session each time: initialize, notifications/initialized, the first echo call',
  metrics: [
    { key: 'echo_p50_ms', label: 'W0 first echo of a new session p50 ms', better: 'lower' },
    { key: 'echo_p99_ms', label: 'W0 first echo of a new session p99 ms', better: 'lower' },
    { key: 'sequence_p50_ms', label: 'W0 initialize → first echo answered p50 ms', better: 'lower' },
    { key: 'sequence_p99_ms', label: 'W0 initialize → first echo answered p99 ms', better: 'lower' },
  ],
  /**
   * What a client that connects, calls once and leaves waits for, peers interleaved sequence by
   * sequence as W1 interleaves calls. The session is ended (DELETE, not timed) before the next.
   */
  async runAcross({ peers, sizes }) {
    const samples = new Map(peers.map((peer) => [peer.name, { echo: [], sequence: [] }]));
    const failed = await interleaved(peers, sizes.w0Warmup, sizes.w0Sessions, async (peer, i) => {
      const { echo, sequence } = await firstEcho(peer.url, `first ${i}`);
      if (i < 0) return;
      samples.get(peer.name).echo.push(echo);
      samples.get(peer.name).sequence.push(sequence);
    });
    return Object.fromEntries(
      peers.map((peer) => {
        const error = failed.get(peer.name);
        if (error !== undefined) return [peer.name, { error }];
        const { echo, sequence } = samples.get(peer.name);
        return [
          peer.name,
          {
            metrics: {
              echo_p50_ms: percentile(echo, 50),
              echo_p99_ms: percentile(echo, 99),
              sequence_p50_ms: percentile(sequence, 50),
              sequence_p99_ms: percentile(sequence, 99),
            },
            raw: { echo_ms: echo, sequence_ms: sequence },
          },
        ];
      }),
    );
  },
};

export const w1 = {
  id: 'W1',
  title: `sequential tools/call echo in one session`,
  metrics: [
    { key: 'p50_ms', label: 'W1 echo p50 ms', better: 'lower' },
    { key: 'p99_ms', label: 'W1 echo p99 ms', better: 'lower' },
    { key: 'cpu_ms_per_call', label: 'W1 server CPU per echo call ms (the serving process, all threads)', better: 'lower' },
  ],
  /**
   * Every peer in one pass, call by call: one session each, and call i goes to every peer
   * (starting with a different one each time) before call i + 1 goes to any. Each peer's calls stay sequential, and a noisy stretch of
   * the machine lands on all of them alike; run one peer after another, the rounds of one run
   * put ours at 0.91–1.27× the durable floor. Returns a sample or an { error } per peer.
   */
  async runAcross({ peers, sizes }) {
    const open = [];
    const failed = new Map();
    const cpuAtStart = new Map();
    let cpuAtEnd = new Map();
    for (const peer of peers) {
      try {
        open.push({ peer, session: await initialize(peer.url), latencies: [] });
      } catch (error) {
        failed.set(peer.name, error);
      }
    }
    try {
      for (let i = -sizes.w1Warmup; i < sizes.w1Calls; i++) {
        // Each call's order drawn afresh, so that no peer always follows the same one (round-order.mjs).
        for (const k of roundOrder(i, open.length)) {
          const { peer, session, latencies } = open[k];
          if (failed.has(peer.name)) continue;
          try {
            // The CPU clock starts with each peer's first recorded call: the warm-up stays out.
            if (i === 0) cpuAtStart.set(peer.name, await cpuMs(peer));
            const text = i < 0 ? `warmup ${-i}` : `hello ${i}`;
            const call = expectResult(await session.callTool('echo', { text }, { timeoutMs: CALL_TIMEOUT_MS }), 'W1 echo');
            if (i >= 0) latencies.push(call.tResponse - call.tSent);
          } catch (error) {
            failed.set(peer.name, error);
          }
        }
      }
    } finally {
      cpuAtEnd = new Map(await Promise.all(open.map(async ({ peer }) => [peer.name, await cpuMs(peer)])));
      await Promise.allSettled(open.map(({ session }) => session.close()));
    }
    return Object.fromEntries(
      peers.map((peer) => {
        const error = failed.get(peer.name);
        if (error !== undefined) return [peer.name, { error }];
        const { latencies } = open.find((entry) => entry.peer === peer);
        const start = cpuAtStart.get(peer.name);
        const end = cpuAtEnd.get(peer.name);
        // A process that serves others too (none here) or could not be read gives no figure.
        const cpu = start !== undefined && end !== undefined && latencies.length > 0 ? (end - start) / latencies.length : undefined;
        return [
          peer.name,
          {
            metrics: { p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99), cpu_ms_per_call: cpu },
            raw: { latencies_ms: latencies, cpu_ms: { start, end } },
          },
        ];
      }),
    );
  },
};

export const w2 = {
  id: 'W2',
  title: 'concurrent sessions, each calling echo sequentially',
  metrics: [{ key: 'calls_per_s', label: 'W2 echo calls/s', better: 'higher' }],
  async run({ peer, sizes }) {
    const sessions = await Promise.all(Array.from({ length: sizes.w2Sessions }, () => initialize(peer.url)));
    try {
      const start = now();
      const perSession = await Promise.all(
        sessions.map(async (session, s) => {
          for (let i = 0; i < sizes.w2Calls; i++) {
            expectResult(await session.callTool('echo', { text: `s${s} c${i}` }, { timeoutMs: CALL_TIMEOUT_MS }), 'W2 echo');
          }
          return now() - start;
        }),
      );
      const wallMs = Math.max(...perSession);
      const calls = sizes.w2Sessions * sizes.w2Calls;
      return { metrics: { calls_per_s: calls / (wallMs / 1000) }, raw: { calls, wall_ms: wallMs, per_session_ms: perSession } };
    } finally {
      await Promise.all(sessions.map((session) => session.close()));
    }
  },
};

export const w3 = {
  id: 'W3',
  title: 'one call streaming progress notifications',
  metrics: [
    { key: 'events_per_s', label: 'W3 progress events/s', better: 'higher' },
    { key: 'first_event_ms', label: 'W3 first progress ms', better: 'lower' },
  ],
  /**
   * `w3Runs` runs per peer and round, peers interleaved run by run (each run's order drawn afresh: round-order.mjs),
   * each sample the median of its peer's runs. One run per peer and round, one peer after
   * another, gave the durable floor 33k–78k events/s within one full run, and ours 0.61–1.79×
   * of it round by round.
   */
  async runAcross({ peers, sizes }) {
    const runs = new Map(peers.map((peer) => [peer.name, []]));
    const failed = await interleaved(peers, 0, sizes.w3Runs, async (peer) => {
      runs.get(peer.name).push(await progressRun(peer.url, sizes));
    });
    return Object.fromEntries(
      peers.map((peer) => {
        const error = failed.get(peer.name);
        if (error !== undefined) return [peer.name, { error }];
        const samples = runs.get(peer.name);
        return [
          peer.name,
          {
            metrics: { events_per_s: median(samples.map((r) => r.eventsPerS)), first_event_ms: median(samples.map((r) => r.firstMs)) },
            raw: { runs: samples },
          },
        ];
      }),
    );
  },
};
