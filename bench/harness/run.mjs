// The benchmark entry (`npm run bench`):
//   node bench/harness/run.mjs [--quick] [--peers a,b] [--out file] [--rounds n] [--peers-module path]
//                              [--via miniflare|wrangler-dev]   (how Worker peers run; see peers/workerd-host.mjs)
//                              [--workloads W1,W3]              (a subset, for working on one figure)
// Starts each available peer once on its own loopback port, runs every workload against every
// peer round by round (in round r each workload runs for every peer before the next workload —
// W1 for all peers at once, call by call; the peer order rotates by one each round; W6, memory,
// runs in round 1 only, on fresh peers, and so do B1, W7 and T4), prints medians per peer and the
// ratios of `ours` against each other peer, and writes two JSON files: every raw sample to
// raw/<date>.json beside the output (ignored by git), and the summary (report.mjs `toSummary`:
// metadata, medians, ratios, each round's value of each metric, notes, the table) to the output itself —
// bench/results/latest.json for a complete full run, partial.json otherwise; a complete run also
// draws its headline ratios (chart.mjs) to chart.svg beside it. Peers are stopped at the end, on
// error and on SIGINT/SIGTERM.
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { renderChart } from './chart.mjs';
import { freePort } from './ports.mjs';
import { formatTable, ratios, summarize, toJson, toSummary } from './report.mjs';
import { SIZES, WORKLOADS as ALL_WORKLOADS } from './workloads/index.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');
const START_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 15_000;
const STAGGER_MS = 1_500;
const WORKLOAD_TIMEOUT_MS = 300_000;
// Quick: B1's, W7's and T4's idle minutes alone take four of them.
const RUN_DEADLINE_MS = { quick: 9 * 60_000, full: 90 * 60_000 };
const ROUNDS = { quick: 1, full: 5 };

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    peers: { type: 'string' },
    out: { type: 'string' },
    rounds: { type: 'string' },
    'peers-module': { type: 'string' },
    via: { type: 'string', default: 'miniflare' },
    workloads: { type: 'string' },
  },
});
const mode = args.quick ? 'quick' : 'full';
const sizes = SIZES[mode];
const rounds = args.rounds ? Number(args.rounds) : ROUNDS[mode];
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 50) throw new Error(`--rounds must be an integer in 1..50`);
const WORKLOADS = args.workloads === undefined ? ALL_WORKLOADS : ALL_WORKLOADS.filter((w) => args.workloads.split(',').includes(w.id));
if (WORKLOADS.length === 0) throw new Error(`--workloads names none of ${ALL_WORKLOADS.map((w) => w.id).join(', ')}`);
// Only a full run of every peer and workload replaces the committed results; anything else
// (quick, a subset, other rounds) goes to an ignored file unless --out says otherwise.
const complete = !args.quick && args.peers === undefined && args.workloads === undefined && args.rounds === undefined;
const outFile = path.resolve(args.out ?? path.join(HERE, '..', 'results', complete ? 'latest.json' : 'partial.json'));
const peersModule = path.resolve(args['peers-module'] ?? path.join(HERE, '..', 'peers', 'index.mjs'));

const t0 = performance.now();
const log = (...parts) => console.error(`[bench ${((performance.now() - t0) / 1000).toFixed(1)}s]`, ...parts);

/** Rejects after `ms` (the task itself is bounded by its own request timeouts). */
function within(ms, what, promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no end within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function peerNamesOf(PEERS) {
  const list = Array.isArray(PEERS) ? PEERS : Object.keys(PEERS ?? {});
  return list.map((p) => (typeof p === 'string' ? p : p.name));
}

/** Peers started so far, and starts under way (a peer still starting is stopped once up). */
const running = [];
const starting = new Set();
let stopping;
let interrupted = false;

async function startOne(peersApi, name, { vars } = {}) {
  const port = await freePort();
  const start = Promise.resolve()
    .then(() => peersApi.startPeer(name, port, { via: args.via, ...(vars && { vars }) }))
    .then((peer) => {
      running.push(peer);
      return peer;
    });
  const settled = start.catch(() => undefined);
  starting.add(settled);
  settled.finally(() => starting.delete(settled));
  return within(START_TIMEOUT_MS, `start ${name}`, start);
}

/**
 * Starts the peers, staggered by STAGGER_MS (concurrent `wrangler dev` starts race for the same
 * default inspector port); a peer that fails is retried once, alone. Returns them in `names` order.
 */
async function startPeers(peersApi, names, unavailable) {
  const attempts = await Promise.all(
    names.map(async (name, i) => {
      await sleep(i * STAGGER_MS);
      if (interrupted) return { name, error: new Error('interrupted') };
      return startOne(peersApi, name).then(
        (peer) => ({ name, peer }),
        (error) => ({ name, error }),
      );
    }),
  );
  for (const attempt of attempts) {
    if (!attempt.error || interrupted) continue;
    log(`peer ${attempt.name} did not start (${attempt.error.message}); retrying alone`);
    await startOne(peersApi, attempt.name).then(
      (peer) => Object.assign(attempt, { peer, error: undefined }),
      (error) => Object.assign(attempt, { error }),
    );
  }
  for (const { name, peer, error } of attempts) {
    if (peer) log(`started ${name} at ${peer.url} (pid ${peer.pid})`);
    else {
      unavailable[name] = String(error.message ?? error);
      log(`peer ${name} did not start: ${unavailable[name]}`);
    }
  }
  return attempts.filter((a) => a.peer).map((a) => a.peer);
}

function stopAll() {
  stopping ??= (async () => {
    await within(START_TIMEOUT_MS, 'pending starts', Promise.all([...starting])).catch(() => undefined);
    await Promise.allSettled(
      running.map((peer) =>
        within(
          STOP_TIMEOUT_MS,
          `stop ${peer.name}`,
          Promise.resolve().then(() => peer.stop()),
        ).catch((e) => log(String(e.message ?? e))),
      ),
    );
  })();
  return stopping;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    interrupted = true;
    log(`${signal}: stopping peers`);
    await stopAll();
    process.exit(130);
  });
}

/**
 * A workload that takes every peer in one pass (W1: call by call); one sample per peer. `state`
 * is what each peer's workloads keep across rounds, by peer name (W5's logs). It may
 * start a helper instance by name (`startHelper`, B1's `ours-ttl`, E3's `ours-webhooks` with
 * variables of its own, H1's `ours-held`), stopped with the peers, and read a helper's memory
 * (`memoryRss`, H1).
 */
async function runAcross(workload, order, round, samples, deadline, startHelper, memoryRss, state) {
  const buckets = order.map((peer) => ((samples[workload.id] ??= {})[peer.name] ??= []));
  if (performance.now() > deadline) {
    for (const bucket of buckets) bucket.push({ round, error: 'skipped: run deadline passed' });
    return;
  }
  const startedAt = performance.now();
  let results;
  try {
    results = await within(
      workload.timeoutMs ?? WORKLOAD_TIMEOUT_MS,
      `${workload.id} across peers`,
      workload.runAcross({ peers: order, sizes, startHelper, memoryRss, state }),
    );
  } catch (error) {
    results = Object.fromEntries(order.map((peer) => [peer.name, { error }]));
  }
  const duration_ms = performance.now() - startedAt;
  order.forEach((peer, i) => {
    const { error, ...sample } = results[peer.name];
    if (error !== undefined) {
      buckets[i].push({ round, error: String(error.message ?? error), duration_ms });
      log(`round ${round} ${workload.id} ${peer.name}: ERROR ${error.message ?? error}`);
    } else {
      buckets[i].push({ round, ...sample, duration_ms });
      log(`round ${round} ${workload.id} ${peer.name}: ${JSON.stringify(sample.metrics)}`);
    }
  });
}

async function main() {
  let peersApi;
  try {
    peersApi = await import(pathToFileURL(peersModule).href);
  } catch (error) {
    throw new Error(`cannot load the peers module ${peersModule}: ${error.message}`);
  }
  const available = peerNamesOf(peersApi.PEERS);
  const wanted = args.peers
    ? args.peers
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : available;
  // `ours@<dir>`: the project as built from another checkout (bench/peers/index.mjs).
  const unknown = wanted.filter((name) => !available.includes(name) && !/^ours@.+/.test(name));
  if (unknown.length) throw new Error(`unknown peer(s) ${unknown.join(', ')}; available: ${available.join(', ')}`);

  log(`mode ${mode}, ${rounds} round(s), peers ${wanted.join(', ')}`);
  const unavailable = {};
  const peers = await startPeers(peersApi, wanted, unavailable);
  if (peers.length === 0) throw new Error('no peer started');
  for (const peer of peers) {
    if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(peer.url)) throw new Error(`peer ${peer.name} is not on 127.0.0.1: ${peer.url}`);
  }

  const peerNames = peers.map((p) => p.name);
  // `vars`: variables known only to the workload (E3: its key's public half, its receiver's origin).
  const startHelper = async (name, { vars } = {}) => {
    const helper = await startOne(peersApi, name, { vars });
    log(`started helper ${name} at ${helper.url} (pid ${helper.pid})`);
    return helper;
  };
  const state = Object.fromEntries(peerNames.map((name) => [name, {}]));
  const samples = {};
  const deadline = performance.now() + RUN_DEADLINE_MS[mode];
  const benchStart = performance.now();
  for (let round = 1; round <= rounds; round++) {
    const order = peers.map((_, i) => peers[(i + round - 1) % peers.length]);
    for (const workload of WORKLOADS) {
      // A peer that serves one family only (peers/index.mjs `takesWorkload`: events-floor, E1/E2) is left out of the rest.
      const takers = order.filter((peer) => peersApi.takesWorkload?.(peer.name, workload.id) ?? true);
      if (workload.runAcross !== undefined) {
        if (interrupted) return;
        if ((workload.firstRoundOnly && round > 1) || takers.length === 0) continue;
        await runAcross(workload, takers, round, samples, deadline, startHelper, peersApi.memoryRss, state);
        continue;
      }
      for (const peer of takers) {
        if (interrupted) return;
        if (workload.firstRoundOnly && round > 1) continue;
        const bucket = ((samples[workload.id] ??= {})[peer.name] ??= []);
        if (performance.now() > deadline) {
          bucket.push({ round, error: 'skipped: run deadline passed' });
          continue;
        }
        const startedAt = performance.now();
        try {
          const sample = await within(
            workload.timeoutMs ?? WORKLOAD_TIMEOUT_MS,
            `${workload.id} ${peer.name}`,
            workload.run({ peer, sizes, state: state[peer.name], memoryRss: peersApi.memoryRss }),
          );
          bucket.push({ round, ...sample, duration_ms: performance.now() - startedAt });
          log(`round ${round} ${workload.id} ${peer.name}: ${JSON.stringify(sample.metrics)}${sample.status ? ` (${sample.status})` : ''}`);
        } catch (error) {
          bucket.push({ round, error: String(error.message ?? error), duration_ms: performance.now() - startedAt });
          log(`round ${round} ${workload.id} ${peer.name}: ERROR ${error.message ?? error}`);
        }
      }
    }
  }
  const benchMs = performance.now() - benchStart;
  const w5 = WORKLOADS.find((w) => w.id === 'W5');
  for (const peer of peers) if (w5) await w5.cleanup({ state: state[peer.name] }).catch(() => undefined);

  const rows = summarize(
    [...WORKLOADS].sort((a, b) => a.id.localeCompare(b.id)),
    peerNames,
    samples,
  );
  const ratioList = ratios(rows, peerNames);
  const table = formatTable(rows, peerNames, ratioList);
  console.log(`\nMCP benchmark, ${mode} mode, ${rounds} round(s), Worker peers via ${args.via}, medians per peer (ratios: ours ÷ peer)\n`);
  console.log(table);
  if (Object.keys(unavailable).length)
    console.log(
      `\nnot run: ${Object.entries(unavailable)
        .map(([n, e]) => `${n} (${e})`)
        .join('; ')}`,
    );

  const result = {
    date: new Date().toISOString(),
    mode,
    rounds,
    workerd_via: args.via,
    sizes,
    node: process.version,
    machine: {
      platform: os.platform(),
      release: os.release(),
      arch: os.arch(),
      cpus: os.cpus().length,
      cpu_model: os.cpus()[0]?.model ?? null,
      total_memory_bytes: os.totalmem(),
      loadavg_at_end: os.loadavg(),
    },
    workloads: WORKLOADS.map(({ id, title, metrics, firstRoundOnly }) => ({
      id,
      title,
      metrics,
      first_round_only: Boolean(firstRoundOnly),
    })),
    peers: peers.map((p) => ({ name: p.name, url: p.url, pid: p.pid })),
    unavailable,
    duration_ms: { benchmark: benchMs, total: performance.now() - t0 },
    medians: Object.fromEntries(
      rows.map((row) => [`${row.workload}.${row.key}`, Object.fromEntries(peerNames.map((p) => [p, row.perPeer[p].median ?? null]))]),
    ),
    ratios_ours_over_peer: ratioList,
    samples,
    table,
  };
  // The raw samples beside the output, in raw/ (ignored by git); the summary in the output.
  const rawFile = path.join(path.dirname(outFile), 'raw', `${result.date.replace(/[:.]/g, '-')}.json`);
  await mkdir(path.dirname(rawFile), { recursive: true });
  await writeFile(rawFile, `${JSON.stringify(result, null, 2)}\n`);
  const fromRepo = path.relative(REPO, rawFile);
  const summary = toSummary(result, { rawFile: fromRepo.startsWith('..') ? rawFile : fromRepo });
  await writeFile(outFile, `${toJson(summary)}\n`);
  // The committed chart is redrawn only with the committed results: a subset's chart would be
  // mostly empty rows, and `node bench/harness/chart.mjs bench/results/partial.json` draws one.
  let chartFile;
  if (complete) {
    chartFile = path.join(path.dirname(outFile), 'chart.svg');
    const fromRepoOut = path.relative(REPO, outFile);
    await writeFile(chartFile, renderChart(summary, { source: fromRepoOut.startsWith('..') ? path.basename(outFile) : fromRepoOut }));
  }
  log(
    `wrote ${path.relative(process.cwd(), outFile)} (summary)${chartFile ? `, ${path.relative(process.cwd(), chartFile)} (chart)` : ''} and ${path.relative(process.cwd(), rawFile)} (raw samples); benchmark ${(benchMs / 1000).toFixed(1)} s, total ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}

let exitCode = 0;
try {
  await main();
} catch (error) {
  console.error(`bench failed: ${error.stack ?? error}`);
  exitCode = 1;
} finally {
  await stopAll();
}
// Open sockets to stopped peers must not keep the process alive.
process.exit(exitCode);
