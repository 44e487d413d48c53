// The scaled local run behind docs/scale.md: N sessions (default 10,000) against peer `ours`
// (bench/peers/ours, in workerd through workerd-host.mjs, as the bench runs it), each created,
// called once, then holding a GET stream through an idle spell, then resumed, then deleted —
// and what each phase cost the deployment: SQLite rows written and read and Durable Object
// requests (the peer's billing counters, GET /bench/billing, turned on before the first phase),
// bytes on disk (the files under the state directory, and the session databases' own size),
// the workerd process's RSS (peak and at the end), the objects it constructed (GET
// /bench/instances: one evicted during the idle spell is constructed again when the resume
// wakes it), its open file descriptors, and the errors.
//
//   npm run scale-sessions [-- --sessions 10000 --concurrency 48 --idle-ms 90000 --reconnect-every 10
//                              --billing on --min-free-mib 2048 --out file]
//
// Phases, in order, each timed (a duration, never asserted; the machine is shared):
//   create     initialize + notifications/initialized, each session
//   call       one `echo` each
//   hold       a GET stream opened on each and kept (read in the background)
//   idle       nothing for --idle-ms: local workerd evicts idle objects with their relay
//              sockets open (bench/README.md, W7); the resume phase counts how many it did
//   resume     one `notify` each, whose log message must arrive on its held stream, once
//   reconnect  every --reconnect-every-th session: its held stream cut, two `notify` calls made
//              while it is cut, then GET with Last-Event-ID (the resume event's id): the two,
//              in order, numbered on from the cursor, nothing before it again
//   delete     DELETE each; its held stream must end
// Bounded: --concurrency requests in flight, each with a timeout, the held streams a deadline.
// Workerd holds two descriptors per client connection and three per open object, so the run
// refuses an open-file limit below 2 × N + a reserve (naming the largest N that fits), and
// admits each request only while workerd's descriptors leave room (descriptorGate): near the
// limit it waits for evictions instead of failing. It stops itself if the machine's available
// memory falls below --min-free-mib.
//
// The summary (shape: bench/harness/README.md, *scale-sessions*) goes to
// .cache/scale-sessions/latest.json, or to --out: the committed run, the one docs/scale.md
// cites, is written with --out bench/results/scale-sessions.json. The arithmetic is
// scale-figures.mjs's; the client, client.mjs's; starting the peer and reading its RSS,
// ../peers/index.mjs's. State: .cache/scale-sessions/ours (its databases in do/do/peer-*/).
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { cpuMs, memoryRss, ROOT, startPeer } from '../peers/index.mjs';
import { initialize, now } from './client.mjs';
import { freePort } from './ports.mjs';
import { continuation, derive, phaseBilling } from './scale-figures.mjs';
import { B1_SETTLE_MS, billingOf, countsOf, expectResult, setBilling } from './workloads/shared.mjs';

const DEFAULT_SESSIONS = 10_000;
const { values: args } = parseArgs({
  options: {
    sessions: { type: 'string', default: String(DEFAULT_SESSIONS) },
    concurrency: { type: 'string', default: '48' },
    'idle-ms': { type: 'string', default: '90000' },
    'reconnect-every': { type: 'string', default: '10' },
    billing: { type: 'string', default: 'on' },
    'min-free-mib': { type: 'string', default: '2048' },
    out: { type: 'string' },
  },
});

function integer(name, min, max) {
  const value = Number(args[name]);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`--${name} must be an integer in ${min}..${max}; got ${args[name]}`);
  return value;
}
const N = integer('sessions', 1, 100_000);
const WIDTH = integer('concurrency', 1, 256);
const IDLE_MS = integer('idle-ms', 0, 600_000);
const RECONNECT_EVERY = integer('reconnect-every', 1, 100_000);
const MIN_FREE_MIB = integer('min-free-mib', 0, 1 << 20);
if (!['on', 'off'].includes(args.billing)) throw new Error(`--billing must be on or off; got ${args.billing}`);
const COUNTING = args.billing === 'on';
const STATE_DIR = join(ROOT, '.cache/scale-sessions/ours');
/** Where workerd-host.mjs's Miniflare keeps the session objects' databases, under STATE_DIR/do. */
const SESSION_NAMESPACE = 'peer-BenchSession';
/** A run's summary stays under .cache unless told: the committed one is chosen, not the last one made. */
const OUT = args.out ?? join(ROOT, '.cache/scale-sessions/latest.json');

const REQUEST_TIMEOUT_MS = 60_000;
const EVENT_TIMEOUT_MS = 30_000;
/** How long a held stream may stay open at most: past every phase of a 100,000-session run. */
const HOLD_MAX_MS = 6 * 3_600_000;
/** Sessions live past the run (default TTL 1 h): no idle expiry lands in a phase. Rows do not depend on it. */
const PEER_VARS = { SESSION_TTL_MS: String(6 * 3_600_000) };
const SAMPLE_MS = 2_000;
/**
 * Workerd takes two descriptors per client connection (the socket and a duplicate of it), and
 * three per object it has open (its database, WAL and shared-memory index); objects close
 * theirs when evicted. A run needs 2 × N for the held streams, and room besides: RESERVE_FDS
 * for workerd's own and the pool's connections, the rest for objects woken at once.
 */
const RESERVE_FDS = 600;
/** What one task may add to workerd's descriptors before the next sample sees it: a connection and an object. */
const FDS_PER_TASK = 5;
const FD_SAMPLE_MS = 200;

const sessions = []; // { i, session, stream, heard: [{ id, text }], waiters: Map<text, resolve>, ended }

/**
 * Admission by workerd's descriptors: a task starts only while the last sample, plus what the
 * tasks started since may add, leaves RESERVE_FDS / 2 of the limit free; else it waits for
 * evictions to close databases. Paces a run against the limit instead of failing at it (the
 * time waited is reported per phase); changes no count.
 */
function descriptorGate(pid, limit) {
  let fds = 0;
  let since = 0;
  let waitedMs = 0;
  let peak = 0;
  const timer = setInterval(async () => {
    fds = await fdsOf(pid);
    peak = Math.max(peak, fds);
    since = 0;
  }, FD_SAMPLE_MS);
  return {
    async enter() {
      const t0 = now();
      while (fds + (since + 1) * FDS_PER_TASK > limit - RESERVE_FDS / 2) await sleep(FD_SAMPLE_MS / 2);
      since++;
      waitedMs += now() - t0;
    },
    /** Time tasks spent waiting (summed over concurrent tasks: task-ms) and the highest sample, since the last call. */
    take() {
      const taken = { waited_task_ms: Math.round(waitedMs), fds_peak: peak };
      waitedMs = 0;
      peak = fds;
      return taken;
    },
    stop: () => clearInterval(timer),
  };
}
let gate;

/** Runs task(i) for i in [0, count), at most `width` at once (each admitted by the gate); failures counted, the first few kept. */
async function pool(count, width, task, label) {
  let next = 0;
  let ok = 0;
  const errors = [];
  const step = Math.max(1, Math.ceil(count / 10));
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      try {
        await gate?.enter();
        await task(i);
        ok++;
      } catch (error) {
        errors.push(String(error?.message ?? error).slice(0, 300));
      }
      const done = ok + errors.length;
      if (done % step === 0) console.log(`  ${label} ${done}/${count}${errors.length ? ` (${errors.length} failed)` : ''}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, worker));
  return { ok, failed: errors.length, first_errors: [...new Set(errors)].slice(0, 5) };
}

/** The open-file limit (soft) of a process, from /proc. */
async function openFileLimit(pid = 'self') {
  const limits = await readFile(`/proc/${pid}/limits`, 'utf8');
  const match = /^Max open files\s+(\S+)/m.exec(limits);
  return match?.[1] === 'unlimited' ? Infinity : Number(match?.[1]);
}

const fdsOf = async (pid) => (await readdir(`/proc/${pid}/fd`).catch(() => [])).length;

async function availableMib() {
  const match = /^MemAvailable:\s+([0-9]+) kB$/m.exec(await readFile('/proc/meminfo', 'utf8'));
  return Number(match?.[1] ?? 0) / 1024;
}

/**
 * Bytes on disk under the peer's Durable Object state: files, apparent bytes, allocated bytes, by
 * kind; and the session objects' databases as SQLite sees them (`logical_bytes`: page_count ×
 * page_size, the size of the database itself). An object's database lives in its WAL while
 * workerd has it open (a small database is checkpointed only when closed), so the files' sizes
 * say what the disk holds, not what is stored: an open one is read through SQLite (read-only,
 * beside workerd's connection, as WAL allows), a closed one is its file.
 */
async function diskOf() {
  const totals = { files: 0, bytes: 0, allocated_bytes: 0, by_kind: {}, session_databases: 0, session_logical_bytes: 0 };
  let entries;
  try {
    entries = await readdir(join(STATE_DIR, 'do'), { recursive: true, withFileTypes: true });
  } catch {
    return totals;
  }
  const names = new Set(entries.map((entry) => join(entry.parentPath, entry.name)));
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const info = await stat(path).catch(() => undefined);
    if (info === undefined) continue;
    const kind = /\.sqlite(-wal|-shm)?$/.exec(entry.name)?.[0] ?? 'other';
    totals.files++;
    totals.bytes += info.size;
    totals.allocated_bytes += info.blocks * 512;
    const of = (totals.by_kind[kind] ??= { files: 0, bytes: 0 });
    of.files++;
    of.bytes += info.size;
    if (kind === '.sqlite' && entry.parentPath.endsWith(SESSION_NAMESPACE)) {
      totals.session_databases++;
      totals.session_logical_bytes += names.has(`${path}-wal`) ? (databaseBytes(path) ?? info.size) : info.size;
    }
  }
  return totals;
}

/** page_count × page_size of an open database, read through its WAL; undefined if it went away meanwhile. */
function databaseBytes(path) {
  let db;
  try {
    db = new DatabaseSync(path, { readOnly: true });
    return db.prepare('PRAGMA page_count').get().page_count * db.prepare('PRAGMA page_size').get().page_size;
  } catch {
    return undefined;
  } finally {
    db?.close();
  }
}

const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const openStreams = () => sessions.filter((s) => s.stream?.ok && s.ended === undefined).length;

/** What the peer and the machine look like now. */
async function readings(peer) {
  return {
    rss_bytes: await memoryRss(peer),
    disk: await diskOf(),
    fds: await fdsOf(peer.workerdPid),
    instances: (await countsOf(peer))?.constructed ?? null,
    streams_open: openStreams(),
    client_rss_bytes: process.memoryUsage().rss,
    available_mib: Math.round(await availableMib()),
  };
}

/** Samples the peer's RSS while a phase runs: its peak; throws (at the phase's end) if memory ran low. */
function sampler(peer) {
  let peak = 0;
  let low;
  const stopped = new AbortController();
  const done = (async () => {
    while (!stopped.signal.aborted) {
      peak = Math.max(peak, await memoryRss(peer));
      const free = await availableMib();
      if (free < MIN_FREE_MIB) {
        low = free;
        await peer.stop(); // every request in flight fails now, and the phase ends
        return;
      }
      await sleep(SAMPLE_MS, undefined, { signal: stopped.signal }).catch(() => undefined);
    }
  })();
  return async () => {
    stopped.abort();
    await done;
    if (low !== undefined)
      throw new Error(`the machine had ${Math.round(low)} MiB available (below --min-free-mib ${MIN_FREE_MIB}): run stopped`);
    return peak;
  };
}

const phases = {};

/** Runs one phase: its duration, what it billed, the readings after it settled. */
async function phase(peer, name, run) {
  console.log(`${name}: ...`);
  const before = COUNTING ? await billingOf(peer) : undefined;
  const instancesBefore = (await countsOf(peer))?.constructed ?? null;
  gate?.take();
  const stop = sampler(peer);
  const t0 = now();
  let outcome;
  let duration;
  let peak;
  try {
    outcome = await run();
    duration = now() - t0;
  } finally {
    peak = await stop();
  }
  await sleep(B1_SETTLE_MS);
  const after = COUNTING ? await billingOf(peer) : undefined;
  const read = await readings(peer);
  const record = {
    duration_ms: Math.round(duration),
    ...outcome,
    billing: phaseBilling(before, after),
    rss_peak_bytes: Math.max(peak, read.rss_bytes),
    constructed: read.instances === null || instancesBefore === null ? null : read.instances - instancesBefore,
    ...read,
    admission: gate?.take(),
  };
  phases[name] = record;
  const billed = record.billing;
  console.log(
    `${name}: ${(duration / 1000).toFixed(1)} s, ${outcome.ok ?? '-'} ok, ${outcome.failed ?? 0} failed` +
      (billed ? `, rows written ${billed.rows_written} read ${billed.rows_read}, DO requests ${billed.do_requests}` : '') +
      `, RSS ${mib(read.rss_bytes)} (peak ${mib(record.rss_peak_bytes)}), disk ${mib(read.disk.bytes)} in ${read.disk.files} files (sessions' databases ${mib(read.disk.session_logical_bytes)}), ` +
      `constructed ${record.constructed}, streams open ${read.streams_open}, fds ${read.fds} (peak ${record.admission?.fds_peak}, admission waited ${record.admission?.waited_task_ms} task-ms)`,
  );
  if (outcome.first_errors?.length) console.log(`  first errors: ${outcome.first_errors.join(' | ')}`);
  return record;
}

/** A phase of one HTTP request per session of `sessions`: `task(session)` for each, WIDTH at a time. */
function eachSession(peer, name, sessions, task) {
  return phase(peer, name, async () => ({
    http_requests: sessions.length,
    ...(await pool(sessions.length, WIDTH, (k) => task(sessions[k]), name)),
  }));
}

/** Resolves with the event carrying log text `text` on session `s`'s held stream (EVENT_TIMEOUT_MS at most). */
function heardOn(s, text) {
  const seen = s.heard.find((event) => event.text === text);
  if (seen !== undefined) return Promise.resolve(seen);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      s.waiters.delete(text);
      reject(new Error(`"${text}" did not arrive on the held stream within ${EVENT_TIMEOUT_MS} ms`));
    }, EVENT_TIMEOUT_MS);
    s.waiters.set(text, (event) => {
      clearTimeout(timer);
      resolve(event);
    });
  });
}

const logText = (event) => (event.message?.method === 'notifications/message' ? event.message.params?.data : undefined);

async function notify(s, text) {
  expectResult(await s.session.callTool('notify', { text }, { timeoutMs: REQUEST_TIMEOUT_MS }), `notify ${text}`);
}

const live = () => sessions.filter((s) => s.session !== undefined);

async function main() {
  const fdLimit = await openFileLimit();
  if (fdLimit < 2 * N + RESERVE_FDS) {
    throw new Error(
      `this process, and so workerd, may open ${fdLimit} files; workerd holds two per held stream, so ${N} need ${2 * N + RESERVE_FDS}: ` +
        `raise the limit (\`ulimit -n ${2 * N + RESERVE_FDS}\`, within \`ulimit -Hn\`) or run at most ${Math.floor((fdLimit - RESERVE_FDS) / 2)} (--sessions)`,
    );
  }
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
  const workerd = JSON.parse(await readFile(join(ROOT, 'node_modules/workerd/package.json'), 'utf8')).version;
  const started = new Date();
  const t0 = now();

  const peer = await startPeer('ours', await freePort(), { stateDir: STATE_DIR, vars: PEER_VARS });
  const stopOnSignal = () => void peer.stop().finally(() => process.exit(130));
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  let summary;
  try {
    console.log(`scale-sessions: ${N} sessions, ${WIDTH} in flight, idle ${IDLE_MS} ms, peer ${peer.url} (workerd ${peer.workerdPid})`);
    const workerdFds = await openFileLimit(peer.workerdPid);
    if (workerdFds < 2 * N + RESERVE_FDS)
      throw new Error(`workerd may open ${workerdFds} files, fewer than ${2 * N + RESERVE_FDS}: raise \`ulimit -n\``);
    gate = descriptorGate(peer.workerdPid, workerdFds);

    // One session through every step first, not counted: code loaded and compiled, the class set up.
    const warm = await initialize(peer.url);
    expectResult(await warm.callTool('echo', { text: 'warm' }), 'warm-up echo');
    (await warm.openStream()).close();
    await warm.close();
    await sleep(1_000);
    if (COUNTING) await setBilling(peer, true);
    const baseline = await readings(peer);

    const create = await phase(peer, 'create', async () => ({
      http_requests: 2 * N,
      ...(await pool(
        N,
        WIDTH,
        async (i) => {
          sessions[i] = { i, session: undefined, stream: undefined, heard: [], waiters: new Map(), ended: undefined };
          sessions[i].session = await initialize(peer.url, { timeoutMs: REQUEST_TIMEOUT_MS, name: `scale-${i}` });
        },
        'create',
      )),
    }));
    const created = live();

    await eachSession(peer, 'call', created, async (s) => {
      const call = expectResult(await s.session.callTool('echo', { text: `c${s.i}` }, { timeoutMs: REQUEST_TIMEOUT_MS }), 'echo');
      if (call.response.result.content?.[0]?.text !== `c${s.i}`) throw new Error(`echo answered ${JSON.stringify(call.response.result)}`);
    });

    await eachSession(peer, 'hold', created, async (s) => {
      s.stream = await s.session.openStream({
        timeoutMs: REQUEST_TIMEOUT_MS,
        maxMs: HOLD_MAX_MS,
        onEvent: (event) => {
          if (event.message === undefined) return; // the priming event
          const text = logText(event);
          const heard = { id: event.id, text };
          s.heard.push(heard);
          s.waiters.get(text)?.(heard);
        },
      });
      if (!s.stream.ok) throw new Error(`GET stream: HTTP ${s.stream.status}`);
      void s.stream.done.then((end) => (s.ended = end));
    });
    const held = created.filter((s) => s.stream?.ok);

    const idle = await phase(peer, 'idle', async () => {
      const timeline = [];
      // What a held stream costs the Worker while nothing happens (its heartbeats): workerd's CPU
      // over the idle spell, every thread, which also holds whatever else the process does then.
      const cpuAtStart = await cpuMs(peer);
      for (let waited = 0; waited < IDLE_MS; waited += Math.min(10_000, IDLE_MS - waited)) {
        await sleep(Math.min(10_000, IDLE_MS - waited));
        timeline.push({
          at_ms: waited + Math.min(10_000, IDLE_MS - waited),
          rss_bytes: await memoryRss(peer),
          instances: (await countsOf(peer))?.constructed ?? null,
          // Three per open database: how many objects are still open.
          fds: await fdsOf(peer.workerdPid),
        });
      }
      const cpuAtEnd = await cpuMs(peer);
      const cpu = cpuAtStart !== undefined && cpuAtEnd !== undefined ? cpuAtEnd - cpuAtStart : null;
      return { http_requests: 0, idle_ms: IDLE_MS, timeline, cpu_ms: cpu };
    });

    const resume = await phase(peer, 'resume', async () => {
      let extra = 0;
      const result = await pool(
        held.length,
        WIDTH,
        async (k) => {
          const s = held[k];
          const arrival = heardOn(s, `r${s.i}`);
          await notify(s, `r${s.i}`);
          await arrival;
          // Exactly the one event since the stream opened: nothing lost, nothing twice.
          if (s.heard.length !== 1) {
            extra++;
            throw new Error(`held stream of session ${s.i} carried ${JSON.stringify(s.heard.map((e) => e.text))}`);
          }
        },
        'resume',
      );
      return { http_requests: held.length, sessions_with_other_events: extra, ...result };
    });

    const subset = held.filter((s) => s.i % RECONNECT_EVERY === 0 && s.heard.length === 1);
    const verdicts = { lost: 0, duplicated: 0, not_contiguous: 0, out_of_order: 0 };
    await phase(peer, 'reconnect', async () => ({
      http_requests: 3 * subset.length,
      sessions: subset.length,
      ...(await pool(
        subset.length,
        WIDTH,
        async (k) => {
          const s = subset[k];
          const cursor = s.heard[0].id;
          s.stream.close();
          await s.stream.done;
          const gap = [`g${s.i}a`, `g${s.i}b`];
          for (const text of gap) await notify(s, text);
          const resumed = await s.session.resume(cursor, { timeoutMs: REQUEST_TIMEOUT_MS, until: (event) => logText(event) === gap[1] });
          if (!resumed.ok) throw new Error(`GET with Last-Event-ID: HTTP ${resumed.status} ${resumed.body ?? ''}`);
          const events = resumed.events
            .filter((event) => event.message !== undefined)
            .map((event) => ({ id: event.id, text: logText(event) }));
          const verdict = continuation({ cursor, events, expected: gap, before: [`r${s.i}`] });
          verdicts.lost += verdict.lost;
          verdicts.duplicated += verdict.duplicated;
          verdicts.not_contiguous += verdict.contiguous ? 0 : 1;
          verdicts.out_of_order += verdict.in_order ? 0 : 1;
          if (!verdict.ok) throw new Error(`session ${s.i} resumed after ${cursor}: ${JSON.stringify(events)}`);
        },
        'reconnect',
      )),
      ...verdicts,
    }));

    await phase(peer, 'delete', async () => {
      const result = await pool(
        created.length,
        WIDTH,
        async (k) => {
          const status = await created[k].session.close({ timeoutMs: REQUEST_TIMEOUT_MS });
          if (status < 200 || status > 299) throw new Error(`DELETE: HTTP ${status}`);
        },
        'delete',
      );
      // Each held stream ends with its session: wait for that (bounded).
      const deadline = now() + EVENT_TIMEOUT_MS;
      while (openStreams() > 0 && now() < deadline) await sleep(250);
      return { http_requests: created.length, ...result };
    });
    // A deleted session is gone: a few are asked again, outside the phase's counts.
    const probes = await Promise.all(
      created.slice(0, 10).map(async (s) => (await s.session.callTool('echo', { text: 'gone' }, { timeoutMs: REQUEST_TIMEOUT_MS })).status),
    );
    phases.delete.after_delete_echo_status = [...new Set(probes)];

    // Workerd checkpoints and closes each database when it stops: the state at rest.
    await peer.stop();
    const atRest = await diskOf();
    console.log(`stopped: disk ${mib(atRest.bytes)} in ${atRest.files} files (${atRest.session_databases} session databases)`);

    summary = {
      run: 'scale-sessions',
      date: started.toISOString(),
      commit,
      dirty,
      command: `npm run scale-sessions -- ${process.argv.slice(2).join(' ')}`.trim(),
      node: process.version,
      workerd,
      machine: {
        cpus: os.cpus().length,
        memory_gib: Math.round(os.totalmem() / 2 ** 30),
        fd_limit: fdLimit,
        load_average_at_end: os.loadavg(),
      },
      settings: {
        sessions: N,
        concurrency: WIDTH,
        idle_ms: IDLE_MS,
        reconnect_every: RECONNECT_EVERY,
        billing: COUNTING,
        peer: 'ours',
        peer_vars: PEER_VARS,
      },
      duration_ms: Math.round(now() - t0),
      baseline,
      phases,
      disk_after_stop: atRest,
      derived: derive({
        phases,
        sessions: created.length,
        baseline,
        evicted: resume.constructed,
        reconnected: subset.length,
      }),
      sessions_created: created.length,
      streams_held: held.length,
      failed: Object.values(phases).reduce((total, p) => total + (p.failed ?? 0), 0),
    };
    summary.derived.evicted_sessions_of_created = `${resume.constructed} of ${created.length}`;
    summary.derived.creation_failed = N - create.ok;
    // CPU ms per held stream per idle hour: an upper bound of its heartbeats' cost (HEARTBEAT_MS).
    summary.derived.cpu_ms_per_held_stream_hour =
      idle.cpu_ms === null || held.length === 0 || IDLE_MS === 0 ? null : idle.cpu_ms / held.length / (IDLE_MS / 3_600_000);
  } finally {
    gate?.stop();
    await peer.stop();
    for (const s of sessions) s?.stream?.close();
  }
  await mkdir(dirname(OUT), { recursive: true });
  await writeFile(OUT, `${JSON.stringify(summary, null, 2)}\n`);
  console.log(JSON.stringify(summary.derived, null, 2));
  console.log(`summary: ${OUT}`);
  if (summary.failed > 0) process.exitCode = 1;
}

await main();
