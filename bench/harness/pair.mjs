// Two peers, one figure, interleaved finely: for telling whether a change to one side moved it.
//   node bench/harness/pair.mjs [--a ours] [--b durable-floor] [--calls 1000] [--runs 10] [--replays 30] [--tasks 0] [--sessions 0] [--via miniflare] [--modern]
// A peer may be `ours@<dir>`, a checkout under .cache: `git worktree add .cache/base HEAD`,
// then `--b ours@.cache/base` sets the working tree's change against HEAD.
// Starts both peers, then W1: `--calls` echo calls alternating A, B call by call (after 50
// unrecorded warm-up calls each), p50 of each and A ÷ B, and the CPU its serving processes spent per call; W3: `--runs` progress {n: 5000} calls
// alternating run by run (after one unrecorded run each), median events/s and first-event ms;
// replay: one finished progress {n: 1001} call per peer, resumed `--replays` times at its first
// progress event, alternating (after 5 unrecorded each), median ms to the result (W5's small log);
// T1: `--tasks` tasks of `work` (2026-07-28, the Tasks extension declared) alternating task by
// task (after 10 unrecorded each), created and polled to completed as T1 does, p50 of each (the
// create → completed time, and apart the CreateTaskResult's), and the CPU time the peer's serving
// processes spent per task, all threads (Linux /proc; locally the Worker, its objects and a
// task's round share one workerd, so this is what T1's latency pays, and it moves far less with
// the machine's load). `--calls 0 --runs 0 --replays 0 --tasks 400` runs T1 alone.
// W0: `--sessions` new sessions alternating A, B (after 5 unrecorded each), as W0 runs them:
// `initialize`, `notifications/initialized`, the first echo, then DELETE (not timed); p50 of the
// sequence and of the echo.
// A whole-workload round (run.mjs) lets a noisy minute land on one peer only; this does not.
// `--modern`: M1 in place of all three — `--calls` 2026-07-28 `tools/call` echo requests (no
// session) alternating A, B call by call after 50 unrecorded each, p50 and p99 of each and A ÷ B,
// and the CPU time each peer's serving process used per call over the same calls
// (for `ours` against `modern-floor`, which serves nothing else).
// Same client as run.mjs; prints a summary and never asserts a timing.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { initialize, modernRequest } from './client.mjs';
import { cpuMs, startPeer, threadCpuMs } from '../peers/index.mjs';
import { freePort } from './ports.mjs';
import { median, percentile } from './stats.mjs';
import { createWorkTask, firstEcho, untilCompleted } from './workloads/shared.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({
  options: {
    a: { type: 'string', default: 'ours' },
    b: { type: 'string', default: 'durable-floor' },
    calls: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '10' },
    replays: { type: 'string', default: '30' },
    tasks: { type: 'string', default: '0' },
    sessions: { type: 'string', default: '0' },
    via: { type: 'string', default: 'miniflare' },
    modern: { type: 'boolean', default: false },
  },
});
const calls = Number(args.calls);
const runs = Number(args.runs);
if (!Number.isInteger(calls) || calls === 1 || calls < 0 || calls > 100_000) throw new Error('--calls must be 0 or in 2..100000');
if (!Number.isInteger(runs) || runs < 0 || runs > 100) throw new Error('--runs must be an integer in 0..100');
const tasks = Number(args.tasks);
if (!Number.isInteger(tasks) || tasks < 0 || tasks > 100_000) throw new Error('--tasks must be an integer in 0..100000');
const sessionsW0 = Number(args.sessions);
if (!Number.isInteger(sessionsW0) || sessionsW0 < 0 || sessionsW0 > 10_000) throw new Error('--sessions must be an integer in 0..10000');
const replays = Number(args.replays);
if (!Number.isInteger(replays) || replays < 0 || replays > 1_000) throw new Error('--replays must be an integer in 0..1000');
const REPLAY_N = 1_000;
const W3_N = 5_000;

async function echo(session, text) {
  const call = await session.callTool('echo', { text }, { timeoutMs: 30_000 });
  if (!call.response?.result) throw new Error(`echo: no result (${call.error ?? `ended: ${call.end}, HTTP ${call.status}`})`);
  return call.tResponse - call.tSent;
}

/** One 2026-07-28 echo (M1's call): request sent → result received, ms. */
async function modernEcho(url, text) {
  const t0 = performance.now();
  const { status, message } = await modernRequest(url, 'tools/call', { name: 'echo', arguments: { text } }, { timeoutMs: 30_000 });
  if (status !== 200 || message?.result?.content?.[0]?.text !== text)
    throw new Error(`modern echo: HTTP ${status} ${JSON.stringify(message)}`);
  return performance.now() - t0;
}

/** M1 interleaved: the whole of a `--modern` run. */
async function pairModern([a, b]) {
  for (let i = 0; i < 50; i++) for (const peer of [a, b]) await modernEcho(peer.url, `warm-up ${i}`);
  const m1 = [[], []];
  const cpuBefore = [a, b].map(cpuMs);
  for (let i = 0; i < calls; i++) {
    for (const k of i % 2 === 0 ? [0, 1] : [1, 0]) m1[k].push(await modernEcho([a, b][k].url, `hello ${i}`));
  }
  const cpu = [a, b].map((peer, k) => (cpuMs(peer) - cpuBefore[k]) / calls);
  const [p50, p99] = [50, 99].map((p) => m1.map((latencies) => percentile(latencies, p)));
  console.log(`pair ${args.a} (A) vs ${args.b} (B), Worker peers via ${args.via}, 2026-07-28`);
  console.log(
    `M1 echo p50 ms, ${calls} calls each, alternating:  A ${p50[0].toFixed(3)}  B ${p50[1].toFixed(3)}  A/B ${(p50[0] / p50[1]).toFixed(3)}`,
  );
  console.log(
    `M1 echo p99 ms:                                    A ${p99[0].toFixed(2)}  B ${p99[1].toFixed(2)}  A/B ${(p99[0] / p99[1]).toFixed(2)}`,
  );
  console.log(
    `M1 CPU ms per call (serving process):              A ${cpu[0].toFixed(3)}  B ${cpu[1].toFixed(3)}  A/B ${(cpu[0] / cpu[1]).toFixed(3)}`,
  );
}

async function progress(url) {
  const session = await initialize(url);
  try {
    const call = await session.callTool('progress', { n: W3_N }, { timeoutMs: 120_000 });
    const token = `bench-${call.requestId}`;
    const events = call.events.filter((e) => e.message?.method === 'notifications/progress' && e.message.params?.progressToken === token);
    if (events.length !== W3_N) throw new Error(`progress: ${events.length} of ${W3_N} events arrived`);
    return { eventsPerS: W3_N / ((events.at(-1).t - call.tSent) / 1000), firstMs: events[0].t - call.tSent };
  } finally {
    await session.close();
  }
}

const p50Of = (samples, key) =>
  percentile(
    samples.map((sample) => sample[key]),
    50,
  );

/** One T1 task: create → completed ms, call → CreateTaskResult ms, and the peer's CPU ms for it (what its deferred work spent within 5 ms after). */
async function task(peer) {
  const pids = peer.servingPids();
  const cpu0 = threadCpuMs(pids);
  const t0 = performance.now();
  const { taskId } = await createWorkTask(peer);
  const created = performance.now() - t0;
  await untilCompleted(peer, taskId);
  const completed = performance.now() - t0;
  await new Promise((resolve) => setTimeout(resolve, 5));
  return { completed, created, cpu: threadCpuMs(pids) - cpu0 };
}

/** A finished call of REPLAY_N progress events and its result; the cursor is at progress #1. */
async function replayLog(url) {
  const session = await initialize(url);
  const call = await session.callTool('progress', { n: REPLAY_N + 1 }, { timeoutMs: 120_000 });
  const first = call.events.find((e) => e.message?.method === 'notifications/progress' && e.message.params?.progress === 1);
  if (!call.response?.result || !first?.id) {
    await session.close();
    return undefined; // this peer cannot resume (no result or no event ids)
  }
  return { session, cursor: first.id, requestId: call.requestId };
}

async function replayMs({ session, cursor, requestId }) {
  const resume = await session.resume(cursor, { timeoutMs: 10_000, until: (e) => e.message?.id === requestId });
  const answer = resume.events.find((e) => e.message?.id === requestId);
  const replayed = resume.events.filter((e) => e.message?.method === 'notifications/progress').length;
  if (!answer || replayed !== REPLAY_N)
    throw new Error(`replay: ${replayed} of ${REPLAY_N} events, result ${answer ? 'arrived' : 'missing'}`);
  return answer.t - resume.tSent;
}

const peers = [];
const stop = () => Promise.all(peers.map((peer) => peer.stop()));
process.once('SIGINT', () => stop().then(() => process.exit(130)));
try {
  for (const [i, name] of [args.a, args.b].entries()) {
    peers.push(
      await startPeer(name, await freePort(), {
        stateDir: path.join(HERE, '../../.cache/bench-state', `pair-${i}-${name.replace(/[^A-Za-z0-9-]/g, '_')}`),
        via: args.via,
      }),
    );
  }
  if (args.modern) await pairModern(peers);
  else await pairLegacy(peers);
} finally {
  await stop();
}

/** W1, W3 and replay interleaved: a run without `--modern`. */
async function pairLegacy(peers) {
  const [a, b] = peers;
  const w1 = [[], []];
  let w1Cpu;
  if (calls > 0) {
    const sessions = [await initialize(a.url), await initialize(b.url)];
    for (let i = 0; i < 50; i++) for (const session of sessions) await echo(session, `warm-up ${i}`);
    const cpuBefore = peers.map(cpuMs);
    for (let i = 0; i < calls; i++) {
      // Alternate who goes first, so neither side always follows the other.
      const order = i % 2 === 0 ? [0, 1] : [1, 0];
      for (const k of order) w1[k].push(await echo(sessions[k], `hello ${i}`));
    }
    w1Cpu = peers.map((peer, k) => (cpuMs(peer) - cpuBefore[k]) / calls);
    await Promise.all(sessions.map((session) => session.close()));
  }

  const w0 = [[], []];
  if (sessionsW0 > 0) {
    for (let i = -5; i < sessionsW0; i++) {
      for (const k of i % 2 === 0 ? [0, 1] : [1, 0]) {
        const sample = await firstEcho(peers[k].url, `first ${i}`);
        if (i >= 0) w0[k].push(sample);
      }
    }
  }

  const w3 = [[], []];
  if (runs > 0) for (const peer of peers) await progress(peer.url);
  for (let r = 0; r < runs; r++) {
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    for (const k of order) w3[k].push(await progress(peers[k].url));
  }

  const logs = replays > 0 ? [await replayLog(a.url), await replayLog(b.url)] : [];
  const replay = [[], []];
  if (logs.length === 2 && logs.every(Boolean)) {
    for (let r = -5; r < replays; r++) {
      for (const k of r % 2 === 0 ? [0, 1] : [1, 0]) {
        const ms = await replayMs(logs[k]);
        if (r >= 0) replay[k].push(ms);
      }
    }
  }
  await Promise.all(logs.filter(Boolean).map(({ session }) => session.close()));

  const t1 = [[], []];
  for (let i = -10; i < tasks; i++) {
    for (const k of i % 2 === 0 ? [0, 1] : [1, 0]) {
      const sample = await task(peers[k]);
      if (i >= 0) t1[k].push(sample);
    }
  }

  const fmt = (x, digits = 2) => x.toFixed(digits);
  console.log(`pair ${args.a} (A) vs ${args.b} (B), Worker peers via ${args.via}`);
  if (calls > 0) {
    const p50 = w1.map((latencies) => percentile(latencies, 50));
    console.log(`W1 echo p50 ms, ${calls} calls each, alternating:  A ${fmt(p50[0])}  B ${fmt(p50[1])}  A/B ${fmt(p50[0] / p50[1])}`);
    console.log(
      `W1 CPU ms per call (serving processes):          A ${fmt(w1Cpu[0], 3)}  B ${fmt(w1Cpu[1], 3)}  A/B ${fmt(w1Cpu[0] / w1Cpu[1], 3)}`,
    );
  }
  if (sessionsW0 > 0) {
    const [sa, sb] = w0.map((samples) => p50Of(samples, 'sequence'));
    const [ea, eb] = w0.map((samples) => p50Of(samples, 'echo'));
    console.log(`W0 initialize → first echo p50 ms, ${sessionsW0} each: A ${fmt(sa)}  B ${fmt(sb)}  A/B ${fmt(sa / sb)}`);
    console.log(`W0 its first echo p50 ms:                          A ${fmt(ea)}  B ${fmt(eb)}  A/B ${fmt(ea / eb)}`);
  }
  if (runs > 0) {
    const rate = w3.map((samples) => median(samples.map((s) => s.eventsPerS)));
    const first = w3.map((samples) => median(samples.map((s) => s.firstMs)));
    console.log(
      `W3 events/s, median of ${runs} runs each:          A ${fmt(rate[0], 0)}  B ${fmt(rate[1], 0)}  A/B ${fmt(rate[0] / rate[1])}`,
    );
    console.log(`W3 first progress ms, median:                      A ${fmt(first[0], 1)}  B ${fmt(first[1], 1)}`);
  }
  if (replay[0].length > 0) {
    const [ra, rb] = replay.map((samples) => median(samples));
    console.log(`replay ${REPLAY_N} events ms, median of ${replays} each:  A ${fmt(ra)}  B ${fmt(rb)}  A/B ${fmt(ra / rb)}`);
  } else if (replays > 0) {
    console.log(`replay: skipped (a peer cannot resume a finished call)`);
  }
  if (tasks > 0) {
    const line = (label, key) => {
      const [ta, tb] = t1.map((samples) => p50Of(samples, key));
      console.log(`${label} A ${fmt(ta)}  B ${fmt(tb)}  A/B ${fmt(ta / tb)}`);
    };
    line(`T1 create → completed p50 ms, ${tasks} tasks each:`, 'completed');
    line('T1 tools/call → CreateTaskResult p50 ms:         ', 'created');
    const [ca, cb] = t1.map((samples) => samples.reduce((sum, sample) => sum + sample.cpu, 0) / samples.length);
    if (!Number.isNaN(ca + cb))
      console.log(`T1 serving processes' CPU ms per task, mean:      A ${fmt(ca)}  B ${fmt(cb)}  A/B ${fmt(ca / cb, 3)}`);
  }
}
