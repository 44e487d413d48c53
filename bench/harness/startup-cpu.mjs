// How much CPU a Worker's startup takes, and what of its bundle it leaves unevaluated (C1,
// workloads/c-cold-start.mjs; the Workers and their bundles are cold-start.mjs's). Each figure
// comes from a fresh workerd.
//
// - `wrangler check startup --worker <upload>` (`profileStartup`): wrangler loads the upload
//   behind an entry that imports the main module inside a request, with V8's sampling profiler
//   on, and writes the profile; the figure is the profile's sampled time less idle (wrangler's
//   "Active", garbage collection included), read from the profile. Samples are wall-clock: on a
//   busy machine a thread that waits for a core is sampled as busy. (`check startup` without
//   `--worker` builds the config in the current folder, not `-c`'s, in wrangler 4.164: every
//   upload is built by cold-start.mjs first.)
// - Thread CPU (`threadCpu`): the same entry, without the profiler, in Miniflare: the CPU time
//   workerd's threads spent (/proc/<pid>/task/*/schedstat, ns on a core) over the request that
//   imports the main module; the workload subtracts the same request importing an empty module
//   (EMPTY). Time spent waiting for a core is not counted, so it holds on a loaded machine where
//   the profile's figure does not.
// - What is left unevaluated (`deferredModules`): esbuild (wrangler's bundler, no splitting)
//   wraps a module reached by a dynamic `import()` in `__esm` and calls its `init_*` only where
//   it is needed; those no `init_*()` call at the top level reaches are evaluated only by that
//   `import()`. Their code is still in the bundle, and parsed at startup.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';
import { threadCpuMs } from '../peers/index.mjs';
import { QUIET, REPO } from './cold-start.mjs';

const run = promisify(execFile);
const WRANGLER = join(REPO, 'node_modules/wrangler/bin/wrangler.js');

/** Startup CPU by `wrangler check startup --worker`, in ms: { activeMs, gcMs, samples } (see the header). `built`: cold-start.mjs `bundle`. */
export async function profileStartup(built, index = 0) {
  const outfile = join(dirname(built.upload), `startup-${index}.cpuprofile`);
  // From the bundle's folder: no wrangler.toml there for wrangler to read.
  await run(process.execPath, [WRANGLER, 'check', 'startup', '--worker', built.upload, '--outfile', outfile], {
    cwd: dirname(built.upload),
    env: { ...process.env, ...QUIET },
  });
  return summarizeProfile(JSON.parse(await readFile(outfile, 'utf8')));
}

/** wrangler's own summary of a startup profile (`summarizeStartupProfile`), in ms. */
export function summarizeProfile(profile) {
  const names = new Map(profile.nodes.map((node) => [node.id, node.callFrame.functionName]));
  let sampled = 0;
  let idle = 0;
  let gc = 0;
  profile.timeDeltas.forEach((delta, i) => {
    sampled += delta;
    const name = names.get(profile.samples[i]);
    if (name === '(idle)') idle += delta;
    else if (name === '(garbage collector)') gc += delta;
  });
  return { activeMs: (sampled - idle) / 1000, gcMs: gc / 1000, samples: profile.samples.length };
}

/** An empty Worker: the thread-CPU figure's baseline (what the importing request costs by itself). */
export const EMPTY = Object.freeze({
  name: 'empty',
  main: 'index.js',
  source: 'export default {};\n',
  compatibility: { date: '2026-11-17', flags: [] },
});

/**
 * CPU ms workerd's threads spend on the request that imports `built`'s main module, in a fresh
 * workerd under Miniflare (wrangler's startup entry, without the profiler). Bindings are left out:
 * a module's top level cannot reach them.
 */
export async function threadCpu(built) {
  const modules = built.source !== undefined ? [{ path: built.main, contents: built.source }] : await moduleFiles(built.dir);
  const entry = `export default { async fetch() { await import(${JSON.stringify(`./${built.main}`)}); return new Response('ok'); } };`;
  const before = new Set(workerdChildren());
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      name: 'c1-startup',
      compatibilityDate: built.compatibility.date,
      compatibilityFlags: built.compatibility.flags,
      modulesRoot: '/',
      modules: [
        { type: 'ESModule', path: '/c1-startup-entry.mjs', contents: entry },
        ...modules.map(({ path, contents }) => ({ type: 'ESModule', path: `/${path}`, contents })),
      ],
      cf: false,
      handleStructuredLogs: () => {},
    }),
  );
  try {
    await mf.ready;
    const [pid] = workerdChildren().filter((child) => !before.has(child));
    if (pid === undefined) throw new Error('C1: no workerd process of its own under Miniflare');
    const started = threadCpuMs([pid]);
    const response = await mf.dispatchFetch('http://c1.invalid/');
    const body = await response.text();
    if (body !== 'ok') throw new Error(`C1: ${built.name}'s main module did not load: ${body.slice(0, 300)}`);
    const cpu = threadCpuMs([pid]) - started;
    if (Number.isNaN(cpu)) throw new Error(`C1: workerd's threads (pid ${pid}) could not be read`);
    return cpu;
  } finally {
    await mf.dispose();
  }
}

/** The bundle's JavaScript modules, as Miniflare takes them. */
async function moduleFiles(dir) {
  const files = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.(m?js)$/.test(entry.name)) continue;
    const path = relative(dir, join(entry.parentPath, entry.name));
    files.push({ path, contents: await readFile(join(dir, path), 'utf8') });
  }
  return files;
}

/** workerd processes this process started (Miniflare's). */
function workerdChildren() {
  const found = [];
  for (const entry of readdirSyncSafe('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const stat = readSyncSafe(`/proc/${entry}/stat`);
    if (stat === undefined) continue;
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const parent = Number(stat.slice(close + 2).split(' ')[1]);
    if (comm === 'workerd' && parent === process.pid) found.push(Number(entry));
  }
  return found;
}

function readdirSyncSafe(path) {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

function readSyncSafe(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The modules of `built`'s main module that its startup does not evaluate: those esbuild wrapped
 * (`var init_x = __esm({ "path"() { … } })`) and that no `init_*()` call at the top level reaches,
 * directly or through the wrapped modules it evaluates. { deferred: [paths], deferredBytes }.
 */
export async function deferredModules(built) {
  const lines = (await readFile(join(built.dir, built.main), 'utf8')).split('\n');
  const wrapped = new Map();
  const topCalls = [];
  let current;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const start = /^var (init_\w+) = __esm\(\{$/.exec(line);
    if (start) {
      current = { name: start[1], path: /^\s+"([^"]+)"\(\) \{$/.exec(lines[i + 1] ?? '')?.[1] ?? start[1], calls: [], bytes: 0 };
      wrapped.set(current.name, current);
    } else if (current !== undefined) {
      if (line === '});') current = undefined;
      else {
        const call = /^ {4}(init_\w+)\(\);$/.exec(line);
        if (call) current.calls.push(call[1]);
        current.bytes += line.length + 1;
      }
    } else {
      const call = /^(init_\w+)\(\);$/.exec(line);
      if (call) topCalls.push(call[1]);
    }
  }
  const evaluated = new Set();
  for (const stack = [...topCalls]; stack.length > 0; ) {
    const name = stack.pop();
    if (evaluated.has(name)) continue;
    evaluated.add(name);
    stack.push(...(wrapped.get(name)?.calls ?? []));
  }
  const deferred = [...wrapped.values()].filter(({ name }) => !evaluated.has(name));
  return {
    deferred: deferred.map(({ path }) => path.replace(/^(\.\.\/)+/, '').replace(/^.*node_modules\//, '')),
    deferredBytes: deferred.reduce((sum, { bytes }) => sum + bytes, 0),
  };
}
