// Soak: N calls of `countdown` and `tally` through the fault proxy (scripts/faults/fault-proxy.mjs)
// against `wrangler dev` (the fixture server), on loopback, bounded in count and time, seeded;
// then N tasks followed through it (the `tasks` client, below). For each cut profile it counts,
// per session client (the fork-safe transport and the official StreamableHTTPClientTransport):
//   lost                  calls that never got their result
//   duplicate executions  tally increments beyond the calls made (read from the server's counter)
//   gaps, duplicate events  countdown progress steps missing, or delivered twice
// and prints one line per run:
//   soak: <N> calls, <lost> lost, <dup> duplicate executions, <gaps> gaps, <dupev> duplicate events
// Exits 1 if the fork-safe or tasks client's figures are not all zero (the official client's are shown
// for comparison). Options: --calls N (default 200), --concurrency C (20), --sessions S (10),
// --profiles bytes,first,half-open,reset (default all), --clients forksafe,official,tasks,events
// (default all four; `events` below), --seed N, --rate 0.3, --handshakes (fault the `initialize` responses
// too; by default they are spared).
//
// The `tasks` client (scripts/faults/task-soak.mjs): --tasks N (default 1,000) `chatter` tasks of
// --task-steps S (5) steps, --task-interval-ms (100) apart, on the 2026-07-28 endpoint, created
// straight at the server (never faulted) and each followed with `followTask` (dist/client)
// through the fault proxy, --concurrency at a time; every request of a follow is faulted alike
// (it has no session id, so there is no handshake to spare). One line per profile:
//   soak: <N> tasks, <lost> lost, <gaps> gaps, <dupev> duplicate events, <order> out of order, <wrong> wrong events
// with, in brackets, how many tasks/stream requests were resumptions and how many of those
// resumed mid-stream (`after` before the terminal event). Exit 1 unless all five are 0.
// The interval is 100 ms, not less, so that the cuts land mid-stream: the proxy cuts within an
// answer's first 2 KiB, and a chunk it cuts is lost whole (headers too, if it is the first);
// the first chunk is the backlog at the stream's opening, one event at 100 ms apart, but most
// of a 5-step task's 4.7 KB at 5 ms, where nearly every cut would come before the first event.
// (`first` cuts before the first event, so its resumptions all start over: 0 mid-stream.) The
// `tasks/get` answers are JSON, never faulted: every fault lands on a tasks/stream response.
//
// The `events` client (scripts/faults/event-soak.mjs): --events N (default 1,000) notes posted
// straight at the server while --followers F (4) push followers follow them through the proxy.
// One line per profile: soak: <N> events × <F> followers, <lost> lost, <dup> duplicates, <order>
// out of order, <wrong> wrong. Exit 1 unless all four are 0. `--clients events` runs only it.
// `--clients tasks` runs only the tasks client (~35 s a profile for 1,000 tasks on 2 cores);
// the default run, all three clients, takes ~4 minutes (~75 s without the tasks client).
import { parseArgs } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ForkSafeTransport } from '../../dist/client/index.js';
import { withDevServer } from '../support/dev-server.mjs';
import { startFaultProxy } from './fault-proxy.mjs';
import { SOAK_HEARTBEAT_MS, soakEvents } from './event-soak.mjs';
import { soakTasks } from './task-soak.mjs';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '20' },
    sessions: { type: 'string', default: '10' },
    profiles: { type: 'string', default: 'bytes,first,half-open,reset' },
    clients: { type: 'string', default: 'forksafe,official,tasks,events' },
    seed: { type: 'string', default: '1' },
    rate: { type: 'string', default: '0.3' },
    handshakes: { type: 'boolean', default: false },
    tasks: { type: 'string', default: '1000' },
    'task-steps': { type: 'string', default: '5' },
    'task-interval-ms': { type: 'string', default: '100' },
    events: { type: 'string', default: '1000' },
    followers: { type: 'string', default: '4' },
  },
});
const calls = Number(values.calls);
const concurrency = Number(values.concurrency);
const sessionCount = Number(values.sessions);
const seed = Number(values.seed);
const rate = Number(values.rate);
const CALL_TIMEOUT_MS = 10_000;
const port = Number(process.env.SOAK_PORT ?? 8802);

const connect = async (url, kind) => {
  const transport =
    kind === 'forksafe'
      ? new ForkSafeTransport(url, { standaloneStream: false, reconnect: { initialDelayMs: 20, maxDelayMs: 500, maxAttempts: 50 } })
      : new StreamableHTTPClientTransport(new URL(url), {
          reconnectionOptions: {
            initialReconnectionDelay: 20,
            maxReconnectionDelay: 500,
            reconnectionDelayGrowFactor: 1.5,
            maxRetries: 50,
          },
        });
  const client = new Client({ name: `soak-${kind}`, version: '1' });
  client.onerror = () => {};
  await client.connect(transport);
  return { client, transport };
};

const withTimeout = (promise) =>
  Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), CALL_TIMEOUT_MS))]);

/** The session's counter, read with one more tally call, straight to the server (no faults). */
async function readTally(direct, sessionId, key) {
  const response = await fetch(direct, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'Mcp-Session-Id': sessionId,
      'MCP-Protocol-Version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: `read-${key}`, method: 'tools/call', params: { name: 'tally', arguments: { key } } }),
    signal: AbortSignal.timeout(10_000),
  });
  const last = [...(await response.text()).matchAll(/^data: (\{.*\})$/gm)].at(-1)?.[1];
  return Number(JSON.parse(last).result.content[0].text);
}

async function soak(direct, profile, kind) {
  const proxy = await startFaultProxy({ target: direct, profile, rate, seed, handshakes: values.handshakes });
  const figures = { lost: 0, duplicateExecutions: 0, gaps: 0, duplicateEvents: 0 };
  try {
    const sessions = [];
    for (let i = 0; i < sessionCount; i++) {
      const opened = await connect(proxy.url, kind).catch(() => undefined);
      sessions.push({ client: opened?.client, transport: opened?.transport, tallies: 0, key: `k${i}` });
    }
    let issued = 0;
    const worker = async () => {
      while (issued < calls) {
        const n = issued++;
        const session = sessions[n % sessions.length];
        if (session.client === undefined) {
          figures.lost++;
          continue;
        }
        try {
          if (n % 2 === 0) {
            session.tallies++;
            await withTimeout(session.client.callTool({ name: 'tally', arguments: { key: session.key } }));
          } else {
            const steps = [];
            const result = await withTimeout(
              session.client.callTool(
                { name: 'countdown', arguments: { from: 5, interval_ms: 5 } },
                { onprogress: ({ progress }) => steps.push(progress), timeout: CALL_TIMEOUT_MS },
              ),
            );
            if (result?.content?.[0]?.text !== 'liftoff after 5') figures.lost++;
            const seen = new Set(steps);
            figures.duplicateEvents += steps.length - seen.size;
            for (let step = 1; step <= 5; step++) if (!seen.has(step)) figures.gaps++;
          }
        } catch {
          figures.lost++;
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    // Each session's counter, read once more without faults: executions = value - 1.
    proxy.closeAll();
    for (const session of sessions) {
      if (session.client === undefined) continue;
      const sessionId = session.transport.sessionId;
      await session.client.close().catch(() => {});
      if (sessionId === undefined) continue;
      const value = await readTally(direct, sessionId, session.key);
      figures.duplicateExecutions += Math.max(0, value - 1 - session.tallies);
    }
  } finally {
    await proxy.close();
  }
  console.log(
    `soak: ${calls} calls, ${figures.lost} lost, ${figures.duplicateExecutions} duplicate executions, ${figures.gaps} gaps, ${figures.duplicateEvents} duplicate events (${kind}, ${profile}, ${proxy.stats.faulted} of ${proxy.stats.responses} responses faulted, seed ${seed})`,
  );
  return figures;
}

let failed = false;
// A client that lets a rejection go unhandled has lost track of something: counted, not fatal.
let unhandled = 0;
process.on('unhandledRejection', (reason) => {
  unhandled++;
  if (unhandled <= 3) console.error(`unhandled rejection: ${String(reason)}`);
});
await withDevServer(
  port,
  async (direct) => {
    for (const profile of values.profiles.split(',')) {
      for (const kind of values.clients.split(',')) {
        const figures =
          kind === 'events'
            ? await soakEvents(direct, profile, { events: Number(values.events), followers: Number(values.followers), rate, seed })
            : kind === 'tasks'
              ? await soakTasks(direct, profile, {
                  tasks: Number(values.tasks),
                  concurrency,
                  steps: Number(values['task-steps']),
                  intervalMs: Number(values['task-interval-ms']),
                  rate,
                  seed,
                })
              : await soak(direct, profile, kind);
        if ((kind === 'forksafe' || kind === 'tasks' || kind === 'events') && Object.values(figures).some((value) => value !== 0))
          failed = true;
      }
    }
    // One loopback address plays every client, and a half-open connection holds its stream until
    // the Worker notices: no share of an isolate's streams per address (MAX_STREAMS_PER_PRINCIPAL).
  },
  // Every follower is one address too: no share of event streams either. Heartbeats every second,
  // so a follower finds a half-open stream silent in 2 s (event-soak.mjs).
  {
    args: [
      '--var',
      'MAX_STREAMS_PER_PRINCIPAL:0',
      '--var',
      'MAX_EVENT_STREAMS_PER_PRINCIPAL:0',
      '--var',
      `EVENTS_HEARTBEAT_MS:${SOAK_HEARTBEAT_MS}`,
    ],
  },
);
if (unhandled > 0) console.log(`${unhandled} unhandled rejections`);
process.exit(failed ? 1 : 0);
