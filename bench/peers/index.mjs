/**
 * Starts and stops the benchmark peers (see README.md beside this file).
 *
 *   const peer = await startPeer('ours', 8801);   // { name, url, pid, stop(), servingPids() }
 *   await memoryRss(peer);                        // bytes: VmRSS of the serving process(es)
 *   await peer.stop();
 *
 * Each peer runs in its own process group (detached); stop() signals the whole group, so
 * its workerd goes with it. Worker peers run in workerd, by default through workerd-host.mjs
 * (bundled as `wrangler deploy` bundles, served by Miniflare: no dev proxy, no DevTools
 * attached), or with `{ via: 'wrangler-dev' }` under the root's `wrangler dev`. State lives in
 * a fresh dir, <repo>/.cache/bench-state/<name>, cleared at every start; the peer's stdout
 * and stderr go to peer.log in that dir.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync, readdirSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, '../..');
const WRANGLER = join(ROOT, 'node_modules/.bin/wrangler');
const STATE_ROOT = join(ROOT, '.cache/bench-state');
const READY_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 10_000;

/**
 * name → how it runs: a wrangler config (workerd) or a Node script; `vars` over the config's
 * [vars]; `workloads`, the only workloads the peer takes (see takesWorkload). A `helper` is not a peer of its own (not in PEERS): a workload starts it when it
 * needs it (B1: `ours-ttl`, ours with sessions and tasks expiring after 2 s, to count what expiry
 * costs within the run).
 */
const SPECS = {
  ours: { kind: 'wrangler', config: 'bench/peers/ours/wrangler.toml' },
  floor: { kind: 'wrangler', config: 'bench/peers/floor/wrangler.toml' },
  'durable-floor': { kind: 'wrangler', config: 'bench/peers/durable-floor/wrangler.toml' },
  'sdk-floor': { kind: 'wrangler', config: 'bench/peers/sdk-floor/wrangler.toml' },
  sdk: { kind: 'node', script: 'bench/peers/sdk/server.mjs' },
  'sdk-modern': { kind: 'node', script: 'bench/peers/sdk-modern/server.mjs' },
  // The M workloads only: it serves 2026-07-28 and nothing else (`legacy: 'reject'`, as ours'
  // modern endpoint is built); a W workload through the SDK's stateless fallback would set ours'
  // sessions against no sessions at all, and the floors already bound W1.
  'modern-floor': { kind: 'wrangler', config: 'bench/peers/modern-floor/wrangler.toml', workloads: ['M1', 'M2', 'M3'] },
  mcpagent: { kind: 'wrangler', config: 'bench/peers/mcpagent/wrangler.toml' },
  'events-floor': { kind: 'wrangler', config: 'bench/peers/events-floor/wrangler.toml', workloads: ['E1', 'E2'] },
  'ours-ttl': {
    kind: 'wrangler',
    config: 'bench/peers/ours/wrangler.toml',
    vars: { SESSION_TTL_MS: '2000', TASK_TTL_MS: '2000' },
    helper: true,
  },
  // E3: webhooks need an authenticated principal and a receiver origin. The workload passes the
  // rest when it starts this helper (startPeer's `vars`): AUTH_JWKS, the public half of a key it
  // made for the run, and WEBHOOK_DEV_ORIGINS, its receiver's origin on 127.0.0.1. The first
  // retry comes 100–200 ms after a failure (default 5–10 s), so E3 counts a retry in seconds; the
  // rows a retry writes do not depend on when it runs.
  'ours-webhooks': {
    kind: 'wrangler',
    config: 'bench/peers/ours/wrangler.toml',
    vars: {
      AUTH: 'jwt',
      AUTH_ISSUER: 'https://bench-issuer.invalid',
      AUTH_AUDIENCE: 'bench-ours-webhooks',
      WEBHOOK_RETRY_FIRST_MS: '200',
    },
    helper: true,
  },
  // H1: ours as its own instance, started fresh by the workload, with workerd's inspector open (the
  // Worker isolate's heap is read through it: harness/inspector.mjs), the objects it constructs
  // counted live (`BENCH_LIVE_OBJECTS`: weak references, bench/peers/ours/index.ts) so the
  // workload knows when every one was evicted, and room for 1,000 held streams of each kind: an
  // isolate's listens (MAX_LISTEN_STREAMS, default 1,024) raised; the per-principal shares are
  // already off in ours' [vars] (the harness is one address).
  'ours-held': {
    kind: 'wrangler',
    config: 'bench/peers/ours/wrangler.toml',
    vars: { MAX_LISTEN_STREAMS: '8192', BENCH_LIVE_OBJECTS: 'on' },
    inspect: true,
    helper: true,
  },
};

/**
 * `ours@<dir>`: peer "ours" as built from another checkout of this repository under .cache
 * (e.g. `git worktree add .cache/base HEAD`), to set a change against what it changes.
 */
function checkoutSpec(name) {
  const match = /^ours@(.+)$/.exec(name);
  if (match === null) return undefined;
  const dir = resolve(ROOT, match[1]);
  if (!dir.startsWith(`${join(ROOT, '.cache')}/`)) throw new Error(`a checkout peer must live under ${join(ROOT, '.cache')}: ${dir}`);
  return { kind: 'wrangler', config: join(dir, 'bench/peers/ours/wrangler.toml') };
}

/** The peers that can be started by name (and `ours@<dir>`, see checkoutSpec). */
export const PEERS = Object.freeze(Object.keys(SPECS).filter((name) => !SPECS[name].helper));

/** Instances a workload starts for itself (startPeer takes them by name too; see SPECS). */
export const HELPER_PEERS = Object.freeze(Object.keys(SPECS).filter((name) => SPECS[name].helper));

/**
 * Whether peer `name` takes workload `id`: a peer that serves one family only names its workloads
 * (`workloads` in SPECS: `events-floor` speaks nothing but E1/E2's wire, `modern-floor` nothing
 * but M1–M3's), and the harness runs no other workload against it; every other peer takes them all.
 */
export const takesWorkload = (name, id) => SPECS[name]?.workloads?.includes(id) ?? true;

/** Peers whose event ids accept GET + Last-Event-ID after the call finished. */
export const RESUMABLE_PEERS = Object.freeze(['ours', 'durable-floor', 'sdk-floor', 'sdk']);

/** Peers that answer 2025 requests without a session (the SDK's stateless fallback): no `Mcp-Session-Id`. */
export const SESSIONLESS_PEERS = Object.freeze(['sdk-modern']);

/** How Worker peers are run: see workerd-host.mjs for why `miniflare` is the default. */
export const WORKERD_VIA = Object.freeze(['miniflare', 'wrangler-dev']);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `ours` bundles the bench copy of @modelcontextprotocol/server and zod: warn if they drift from the root's. */
function checkOursVersions() {
  for (const pkg of ['@modelcontextprotocol/server', 'zod']) {
    const version = (base) => {
      try {
        return JSON.parse(readFileSync(join(base, 'node_modules', pkg, 'package.json'), 'utf8')).version;
      } catch {
        return undefined;
      }
    };
    const root = version(ROOT);
    const bench = version(join(ROOT, 'bench'));
    if (bench !== undefined && root !== bench) {
      console.warn(`bench peers: ${pkg} is ${bench} in bench/ but ${root} in the root; peer "ours" bundles the bench copy`);
    }
  }
}

/** Processes of a process group: [{ pid, comm }]. */
function groupMembers(pgid) {
  const members = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' '); // state ppid pgrp ...
      if (Number(fields[2]) === pgid) members.push({ pid: Number(entry), comm });
    } catch {
      // exited while we looked
    }
  }
  return members;
}

async function vmRss(pid) {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+([0-9]+) kB$/m.exec(status);
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function commandLine(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

/**
 * Bytes of resident memory (VmRSS) of the process(es) that run the peer's code: for a Worker
 * peer the workerd process running the Worker (under `wrangler dev` there are two workerd
 * processes: this one, on a random loopback port, and a proxy workerd bound to the peer's
 * port, the same for every Worker peer, counted only with `{ includeProxy: true }`; the Node
 * processes of wrangler or Miniflare are never counted); for `sdk` its Node process.
 */
export async function memoryRss(peer, { includeProxy = false } = {}) {
  let total = 0;
  for (const pid of [...peer.servingPids(), ...(includeProxy ? peer.proxyPids() : [])]) total += await vmRss(pid);
  return total;
}

/**
 * CPU time in ms that the processes `pids` have spent on a CPU so far, every thread, from
 * /proc/<pid>/task/<tid>/schedstat (nanoseconds); NaN when one cannot be read, so a figure made
 * from it is left out, never guessed. A difference over many calls gives CPU per call: for a
 * Worker peer the Worker and its objects together (one workerd process runs both, and Miniflare's
 * entry Worker, the same for every Worker peer); for a Node peer, all of it.
 */
export function threadCpuMs(pids) {
  let ns = 0;
  try {
    for (const pid of pids) {
      for (const tid of readdirSync(`/proc/${pid}/task`))
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    }
  } catch {
    return Number.NaN;
  }
  return ns / 1e6;
}

/** `threadCpuMs` of the peer's serving process(es) (see memoryRss), undefined where unreadable. */
export function cpuMs(peer) {
  const ms = threadCpuMs(peer.servingPids());
  return Number.isNaN(ms) ? undefined : ms;
}

async function waitUntilReady(url, exited, logPath) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (exited.value)
      throw new Error(`peer exited (code ${exited.value.code}, signal ${exited.value.signal}) before it was ready; see ${logPath}`);
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: '{}',
        signal: AbortSignal.timeout(5_000),
      });
      await response.body?.cancel();
      if (response.status < 500) return;
      last = `status ${response.status}`;
    } catch (error) {
      last = error?.cause?.code ?? error?.message ?? String(error);
    }
    await sleep(250);
  }
  throw new Error(`peer at ${url} not ready within ${READY_TIMEOUT_MS / 1000} s (last: ${last}); see ${logPath}`);
}

/** A free loopback port, as the OS hands it out (for an inspector). */
function freeLoopbackPort() {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolvePort(port));
    });
  });
}

/** Refuses a port something already listens on: the readiness probe would take it for the peer. */
function assertPortFree(port) {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', (error) => reject(new Error(`port ${port} on 127.0.0.1 is not free (${error.code ?? error.message})`)));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolvePort()));
  });
}

function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false; // the group is gone
  }
}

/**
 * Starts peer `name` on 127.0.0.1:`port` and resolves once `POST /mcp` answers with a status
 * below 500 (90 s at most). Returns { name, url, pid (process group leader), stop(),
 * servingPids(), proxyPids(), workerdPid and config (wrangler peers, else undefined), logPath, stateDir }.
 * `stateDir` (default <repo>/.cache/bench-state/<name>) is removed and re-created first:
 * two peers running at once need different ones. `via` (Worker peers): 'miniflare' (default)
 * or 'wrangler-dev'. `vars` (Worker peers): variables over the spec's, known only when the peer
 * starts (E3's `ours-webhooks`: a key and a receiver's origin made by the run). A spec with
 * `inspect` (H1's `ours-held`) also gets workerd's inspector on a free loopback port:
 * `inspectorPort` in what this returns.
 */
export async function startPeer(name, port, { stateDir = join(STATE_ROOT, name), via = 'miniflare', vars: extraVars = {} } = {}) {
  if (!WORKERD_VIA.includes(via)) throw new Error(`via must be one of ${WORKERD_VIA.join(', ')}; got ${JSON.stringify(via)}`);
  const named = SPECS[name] ?? checkoutSpec(name);
  if (named === undefined) throw new Error(`unknown peer ${JSON.stringify(name)}; known: ${PEERS.join(', ')}`);
  const spec = Object.keys(extraVars).length === 0 ? named : { ...named, vars: { ...named.vars, ...extraVars } };
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`bad port ${port}`);
  await assertPortFree(port);
  stateDir = resolve(stateDir);
  if (!stateDir.startsWith(`${join(ROOT, '.cache')}/`)) throw new Error(`stateDir must be under ${join(ROOT, '.cache')}: ${stateDir}`);
  await rm(stateDir, { recursive: true, force: true });
  await mkdir(stateDir, { recursive: true });
  await mkdir(join(ROOT, '.cache/xdg'), { recursive: true });
  const logPath = join(stateDir, 'peer.log');
  const log = createWriteStream(logPath);
  await new Promise((r) => log.once('open', r));

  // An inspector only where the spec asks for one (H1's helper), never on a peer that is timed.
  let inspectorPort;
  if (spec.inspect) {
    if (spec.kind !== 'wrangler' || via !== 'miniflare')
      throw new Error(`peer ${name} reads its isolate through workerd's inspector: run it with --via miniflare`);
    inspectorPort = await freeLoopbackPort();
  }
  const env = {
    ...process.env,
    ...(inspectorPort !== undefined && { BENCH_INSPECTOR_PORT: String(inspectorPort) }),
    WRANGLER_SEND_METRICS: 'false',
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    WRANGLER_HIDE_BANNER: 'true',
    XDG_CONFIG_HOME: join(ROOT, '.cache/xdg'),
    ...(spec.vars && { BENCH_PEER_VARS: JSON.stringify(spec.vars) }),
  };
  let command;
  let args;
  if (spec.kind === 'wrangler') {
    if (name.startsWith('ours')) checkOursVersions();
    if (via === 'wrangler-dev') {
      command = WRANGLER;
      args = [
        'dev',
        '-c',
        spec.config,
        '--ip',
        '127.0.0.1',
        '--port',
        String(port),
        '--persist-to',
        stateDir,
        '--show-interactive-dev-session=false',
        ...Object.entries(spec.vars ?? {}).flatMap(([key, value]) => ['--var', `${key}:${value}`]),
      ];
    } else {
      command = process.execPath;
      args = [join(HERE, 'workerd-host.mjs'), spec.config, String(port), stateDir];
    }
  } else {
    command = process.execPath;
    args = [spec.script, String(port)];
  }
  const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', log, log] });
  const exited = { value: undefined };
  const exit = new Promise((r) => child.once('exit', (code, signal) => r((exited.value = { code, signal }))));
  const pid = child.pid;
  const url = `http://127.0.0.1:${port}/mcp`;

  let stopping;
  const stop = () =>
    (stopping ??= (async () => {
      if (!killGroup(pid, 'SIGTERM')) return;
      const deadline = Date.now() + STOP_TIMEOUT_MS;
      while (Date.now() < deadline && groupMembers(pid).length > 0) await sleep(100);
      if (groupMembers(pid).length > 0) killGroup(pid, 'SIGKILL');
      await Promise.race([exit, sleep(2_000)]);
      log.end();
    })());

  try {
    await waitUntilReady(url, exited, logPath);
  } catch (error) {
    await stop();
    throw error;
  }

  // Under `wrangler dev` a proxy workerd listens on the peer's own port, the Worker's workerd
  // on a random one; under Miniflare the Worker's workerd is the only one.
  const isProxy = (member) => via === 'wrangler-dev' && commandLine(member.pid).includes(`--socket-addr=entry=127.0.0.1:${port}`);
  const workerds = () => groupMembers(pid).filter((m) => m.comm === 'workerd');
  /** PIDs of the process(es) running the peer's code (see memoryRss). */
  const servingPids = () => {
    if (spec.kind === 'node')
      return groupMembers(pid)
        .filter((m) => m.pid === pid)
        .map((m) => m.pid);
    return workerds()
      .filter((m) => !isProxy(m))
      .map((m) => m.pid);
  };
  /** PIDs of wrangler's proxy workerd in front of the Worker (none for `sdk`). */
  const proxyPids = () =>
    workerds()
      .filter(isProxy)
      .map((m) => m.pid);
  const workerd = spec.kind === 'wrangler' ? servingPids() : [];
  return {
    name,
    url,
    pid,
    /** The workerd process running a wrangler peer's Worker, as found when it became ready. */
    workerdPid: workerd[0],
    /** workerd's inspector on 127.0.0.1 (a spec with `inspect`: H1's `ours-held`), else undefined. */
    inspectorPort,
    /** A Worker peer's wrangler.toml (relative to the repository, or absolute), undefined for a Node peer: C1 bundles it. */
    config: spec.kind === 'wrangler' ? spec.config : undefined,
    logPath,
    stateDir,
    servingPids,
    proxyPids,
    stop,
  };
}
