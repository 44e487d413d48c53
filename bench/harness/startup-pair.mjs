// Startup CPU of ours's configurations against another checkout's, interleaved: the tool for
// telling whether a change moved C1's figures (pair.mjs's counterpart for a cold start).
//   node bench/harness/startup-pair.mjs [--base .cache/base] [--configurations none,jwt] [--runs 21] [--profiles 0]
// Each configuration (cold-start.mjs CONFIGURATIONS) is bundled from this checkout and, with
// `--base`, from that checkout under .cache (`git worktree add .cache/base HEAD`, or its src/ and
// package.json unpacked there); createMcpHandler alone and McpAgent beside them. Then `--runs`
// passes of thread CPU (startup-cpu.mjs; an empty import first, subtracted) over every Worker,
// each pass in the other order than the one before, and `--profiles` passes of `wrangler check
// startup`. Prints each Worker's bundle (raw, gzip), its medians and lower quartiles, and how
// much of it its startup leaves unevaluated. Needs the project's Node 24 (type stripping).
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { bundle, CONFIGURATIONS, HANDLER_CONFIG, REPO, writeConfiguration } from './cold-start.mjs';
import { median } from './stats.mjs';
import { deferredModules, EMPTY, profileStartup, threadCpu } from './startup-cpu.mjs';

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    configurations: { type: 'string', default: CONFIGURATIONS.map(({ name }) => name).join(',') },
    runs: { type: 'string', default: '21' },
    profiles: { type: 'string', default: '0' },
  },
});
const chosen = args.configurations.split(',');
const unknown = chosen.filter((name) => !CONFIGURATIONS.some((c) => c.name === name));
if (unknown.length > 0)
  throw new Error(`unknown configuration(s) ${unknown.join(', ')}: ${CONFIGURATIONS.map(({ name }) => name).join(', ')}`);
const base = args.base === undefined ? undefined : resolve(REPO, args.base);
if (base !== undefined && !base.startsWith(`${join(REPO, '.cache')}/`))
  throw new Error(`--base must be a checkout under ${join(REPO, '.cache')}`);

const workers = [];
for (const configuration of CONFIGURATIONS.filter(({ name }) => chosen.includes(name))) {
  if (base !== undefined) {
    const label = `pair-base-${configuration.name}`;
    workers.push(await bundle(label, await writeConfiguration(configuration, { source: base, label })));
  }
  const label = `pair-${configuration.name}`;
  workers.push(await bundle(label, await writeConfiguration(configuration, { label })));
}
workers.push(
  await bundle('pair-startup-floor', HANDLER_CONFIG),
  await bundle('pair-mcpagent', join(REPO, 'bench/peers/mcpagent/wrangler.toml')),
);

const cpu = new Map([EMPTY, ...workers].map((worker) => [worker, []]));
const profiled = new Map(workers.map((worker) => [worker, []]));
for (let pass = 0; pass < Number(args.runs); pass++) {
  const order = [EMPTY, ...workers];
  for (const worker of pass % 2 === 0 ? order : order.reverse()) cpu.get(worker).push(await threadCpu(worker));
}
for (let pass = 0; pass < Number(args.profiles); pass++) {
  for (const worker of pass % 2 === 0 ? workers : [...workers].reverse())
    profiled.get(worker).push((await profileStartup(worker, pass)).activeMs);
}

const empty = median(cpu.get(EMPTY));
const quartile = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 4)];
const ms = (value) => (value === undefined ? '-' : value.toFixed(1)).padStart(7);
console.log(`thread CPU less an empty import (${empty.toFixed(2)} ms), ${args.runs} runs; check startup, ${args.profiles} runs`);
console.log(
  `${'worker'.padEnd(26)}${'KiB'.padStart(8)}${'gzip'.padStart(8)}${'cpu p50'.padStart(9)}${'cpu q1'.padStart(8)}${'check p50'.padStart(11)}${'check q1'.padStart(9)}  unevaluated at startup`,
);
for (const worker of workers) {
  const own = cpu.get(worker).map((value) => value - empty);
  const checks = profiled.get(worker);
  const { deferred, deferredBytes } = await deferredModules(worker);
  console.log(
    `${worker.name.replace(/^pair-/, '').padEnd(26)}${(worker.rawBytes / 1024).toFixed(1).padStart(8)}${(worker.gzipBytes / 1024).toFixed(1).padStart(8)}` +
      `  ${ms(median(own))} ${ms(quartile(own))}   ${ms(median(checks))}  ${ms(quartile(checks))}  ${(deferredBytes / 1024).toFixed(0)} KiB in ${deferred.length} modules`,
  );
}
