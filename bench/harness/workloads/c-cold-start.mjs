// The C family: what a cold isolate costs. C1 measures Workers, not the running peers: ours in each
// configuration a user has (cold-start.mjs CONFIGURATIONS: init's AUTH none, jwt and oauth, each
// with tasks and the bus and without, and the demo), each other Worker peer's own Worker
// (`peer.config`: McpAgent's, the floors'), and, as the floor of all, the SDK's `createMcpHandler`
// alone in a Worker (bench/peers/startup-floor). Each is bundled once per run, as `wrangler deploy`
// bundles it. Each round, every Worker in turn (the order reversed every other pass):
// - its startup CPU by `wrangler check startup` and by its threads' CPU (startup-cpu.mjs), each
//   in a fresh workerd, `c1Profiles` and `c1CpuRuns` times;
// - `c1Fresh` fresh processes (workerd-host.mjs on the prebuilt bundle) per first request: spawn →
//   ready, then the first `initialize` (2025-11-25) answered; another's first 2026-07-28
//   `tools/call` of `echo` — for ours's AUTH=none configuration (init's default), each Worker
//   peer, and the floor.
// A peer's figure in a row is its round's median. Ours has a row per configuration; each other
// Worker peer has one Worker, whose figure stands in every configuration's row, so that each
// row's ratio is that configuration against the peer (the acceptance of issue 48: every
// configuration at or below McpAgent's). The floor is no peer: ours's AUTH=none against it is a
// ratio row of its own. A Node peer starts no Worker: n/a.
import { resolve } from 'node:path';
import { bundle, CONFIGURATIONS, FIRST, firstAnswer, HANDLER_CONFIG, REPO, writeConfiguration } from '../cold-start.mjs';
import { median } from '../stats.mjs';
import { deferredModules, EMPTY, profileStartup, threadCpu } from '../startup-cpu.mjs';

const KIB = 1024;
/** The configuration ours's first answers are timed with, and whose ratio to the floor is reported. */
const DEFAULT = 'none';
const FLOOR = 'startup-floor';

/** Each Worker's bundle, made once per run (a promise, so that two rounds never build it twice). */
const bundles = new Map();
const once = (label, make) => {
  if (!bundles.has(label)) bundles.set(label, make());
  return bundles.get(label);
};

/** A label that is a folder name. */
const safe = (name) => name.replace(/[^\w.-]+/g, '_');

/**
 * The Workers a peer stands for: ours (and `ours@<dir>`, from that checkout's sources) one per
 * configuration; a Worker peer its own; a Node peer none. [{ peer, configuration?, built }].
 */
async function workersOf(peer) {
  if (peer.name === 'ours' || peer.name.startsWith('ours@')) {
    // `ours@<dir>`'s config is <dir>/bench/peers/ours/wrangler.toml.
    const source = peer.name === 'ours' ? REPO : resolve(REPO, peer.config, '../../../..');
    const workers = [];
    for (const configuration of CONFIGURATIONS) {
      const label = safe(`${peer.name}-${configuration.name}`);
      const built = await once(label, async () => bundle(label, await writeConfiguration(configuration, { source, label })));
      workers.push({ peer: peer.name, configuration: configuration.name, built });
    }
    return workers;
  }
  if (peer.config === undefined) return [];
  return [{ peer: peer.name, built: await once(safe(peer.name), () => bundle(safe(peer.name), resolve(REPO, peer.config))) }];
}

/**
 * Runs `measure(worker, pass)` for every worker, `passes` times, each pass in the other order than
 * the one before. A measurement that fails is noted (`onError`) and the others go on.
 */
async function interleaved(workers, passes, measure, onError) {
  for (let pass = 0; pass < passes; pass++) {
    for (const worker of pass % 2 === 0 ? workers : [...workers].reverse()) {
      try {
        await measure(worker, pass);
      } catch (error) {
        onError(worker, String(error.message ?? error).slice(0, 200));
      }
    }
  }
}

const FIRST_REQUESTS = [
  ['initialize', 'initialize_ms'],
  ['modernCall', 'modern_call_ms'],
];

/** The per-configuration rows: four per configuration. */
const perConfiguration = CONFIGURATIONS.flatMap(({ name, label }) => [
  { key: `startup_ms_${name}`, label: `C1 startup CPU ms, check startup: ${label}`, better: 'lower' },
  { key: `cpu_ms_${name}`, label: `C1 startup thread CPU ms: ${label}`, better: 'lower' },
  { key: `kib_${name}`, label: `C1 bundle KiB: ${label}`, better: 'lower' },
  { key: `gzip_kib_${name}`, label: `C1 bundle gzip KiB: ${label}`, better: 'lower' },
]);

export const c1 = {
  id: 'C1',
  title:
    'cold start: startup CPU (wrangler check startup, thread CPU) and bundle size per configuration; a fresh process to its first answers',
  // The first round bundles every Worker (~4 s each), then measures them all.
  timeoutMs: 900_000,
  metrics: [
    ...perConfiguration,
    { key: 'startup_over_floor', label: `C1 ${CONFIGURATIONS[0].label} ÷ createMcpHandler alone, check startup`, better: 'lower' },
    { key: 'cpu_over_floor', label: `C1 ${CONFIGURATIONS[0].label} ÷ createMcpHandler alone, thread CPU`, better: 'lower' },
    { key: 'ready_ms', label: 'C1 fresh process: spawn → ready ms', better: 'lower' },
    { key: 'initialize_ms', label: 'C1 fresh process: first initialize answered ms', better: 'lower' },
    { key: 'modern_call_ms', label: 'C1 fresh process: first 2026-07-28 echo answered ms', better: 'lower' },
  ],
  async runAcross({ peers, sizes }) {
    const floor = { peer: FLOOR, built: await once(FLOOR, () => bundle(FLOOR, HANDLER_CONFIG)) };
    const perPeer = new Map();
    for (const peer of peers) perPeer.set(peer.name, await workersOf(peer));
    const workers = [...[...perPeer.values()].flat(), floor];
    const figures = new Map(workers.map((worker) => [worker, { startup: [], cpu: [], ready: [], first: {}, notes: [] }]));

    const note = (what) => (worker, message) => figures.get(worker)?.notes.push(`${what}: ${message}`);
    await interleaved(
      workers,
      sizes.c1Profiles,
      async (worker, pass) => {
        figures.get(worker).startup.push((await profileStartup(worker.built, pass)).activeMs);
      },
      note('check startup'),
    );
    const baseline = [];
    await interleaved(
      [{ built: EMPTY }, ...workers],
      sizes.c1CpuRuns,
      async (worker) => {
        const ms = await threadCpu(worker.built);
        if (worker.built === EMPTY) baseline.push(ms);
        else figures.get(worker).cpu.push(ms);
      },
      note('thread CPU'),
    );
    // A fresh process per first request, for ours's default configuration, each peer's Worker and the floor.
    const timed = workers.filter((worker) => worker.configuration === undefined || worker.configuration === DEFAULT);
    for (const [ask, key] of FIRST_REQUESTS) {
      await interleaved(
        timed,
        sizes.c1Fresh,
        async (worker) => {
          const own = figures.get(worker);
          own.first[key] ??= [];
          if (own.notes.some((line) => line.startsWith(`${ask}:`))) return; // refused once: refused again
          const { readyMs, firstMs } = await firstAnswer(worker.built, FIRST[ask]);
          own.ready.push(readyMs);
          own.first[key].push(firstMs);
        },
        note(ask),
      );
    }

    const empty = median(baseline) ?? 0;
    const summary = (worker) => {
      const own = figures.get(worker);
      const cpu = median(own.cpu);
      return {
        startup_ms: median(own.startup) ?? null,
        cpu_ms: cpu === undefined ? null : cpu - empty,
        kib: worker.built.rawBytes / KIB,
        gzip_kib: worker.built.gzipBytes / KIB,
        ready_ms: median(own.ready) ?? null,
        initialize_ms: median(own.first.initialize_ms ?? []) ?? null,
        modern_call_ms: median(own.first.modern_call_ms ?? []) ?? null,
      };
    };
    const floorFigures = summary(floor);
    const results = {};
    for (const peer of peers) {
      const own = perPeer.get(peer.name);
      if (own.length === 0) {
        results[peer.name] = {
          metrics: Object.fromEntries(c1.metrics.map(({ key }) => [key, null])),
          status: 'a Node process: no Worker to start',
          raw: {},
        };
        continue;
      }
      const metrics = {};
      const raw = { workers: {}, floor: { ...floorFigures, runs: figures.get(floor) }, empty_import_cpu_ms: baseline };
      for (const { name } of CONFIGURATIONS) {
        // Ours: the configuration's Worker; another Worker peer: its one Worker, in every configuration's row.
        const worker = own.find((w) => w.configuration === name) ?? own.find((w) => w.configuration === undefined);
        if (worker === undefined) continue;
        const figure = summary(worker);
        metrics[`startup_ms_${name}`] = figure.startup_ms;
        metrics[`cpu_ms_${name}`] = figure.cpu_ms;
        metrics[`kib_${name}`] = figure.kib;
        metrics[`gzip_kib_${name}`] = figure.gzip_kib;
      }
      const first = own.find((w) => w.configuration === undefined || w.configuration === DEFAULT);
      const firstFigures = summary(first);
      Object.assign(metrics, {
        ready_ms: firstFigures.ready_ms,
        initialize_ms: firstFigures.initialize_ms,
        modern_call_ms: firstFigures.modern_call_ms,
        startup_over_floor: first.configuration === DEFAULT ? ratio(firstFigures.startup_ms, floorFigures.startup_ms) : null,
        cpu_over_floor: first.configuration === DEFAULT ? ratio(firstFigures.cpu_ms, floorFigures.cpu_ms) : null,
      });
      for (const worker of own) {
        raw.workers[worker.configuration ?? worker.peer] = {
          ...summary(worker),
          runs: figures.get(worker),
          ...(await deferredModules(worker.built)),
        };
      }
      const notes = own.flatMap((worker) => figures.get(worker).notes);
      results[peer.name] = { metrics, raw, ...(notes.length > 0 && { status: [...new Set(notes)].join('; ') }) };
    }
    return results;
  },
};

const ratio = (a, b) => (a === null || b === null || b === 0 ? null : a / b);
