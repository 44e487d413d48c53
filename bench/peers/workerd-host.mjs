/**
 * Runs one Worker peer in workerd the way `wrangler dev` does, minus what only development
 * needs: node bench/peers/workerd-host.mjs <wrangler.toml> <port> <stateDir>
 *
 * wrangler 4.86's `wrangler dev` puts a second workerd in front of the Worker (a proxy that
 * survives reloads) and attaches its DevTools proxy to the Worker's inspector with
 * Runtime.enable and Network.enable. Measured here with the bare floor, that adds ~5 ms to
 * every request (echo p50 8.2 ms through the proxy, 2.3-2.8 ms at the Worker's own port) and
 * it is paid by the workerd peers only, not by the SDK on Node. So the Worker is bundled
 * exactly as `wrangler deploy` bundles it (`--dry-run --outdir`), and served by Miniflare
 * (the same workerd and the same bindings wrangler derives from the config) on 127.0.0.1.
 *
 * Prints "ready <url>" once serving; stops on SIGTERM or SIGINT. Durable Object storage
 * goes to <stateDir>/do (each object's SQLite file in do/durable-objects/<namespace>/), the
 * bundle to <stateDir>/bundle. BENCH_PEER_VARS (JSON, optional) sets
 * [vars] over the config's, for a second instance of one peer (index.mjs: `ours-ttl`).
 * BENCH_INSPECTOR_PORT (optional) opens workerd's own inspector on 127.0.0.1 at that port, for
 * a helper whose isolate's memory a workload reads (index.mjs `inspect`: H1's `ours-held`); no
 * peer that is timed has one.
 * BENCH_PEER_BUNDLE (optional): a folder holding the config's bundle already built (`--outdir`),
 * served as it is, not built again (C1 times fresh processes, not wrangler's build).
 */
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';
import { unstable_getMiniflareWorkerOptions } from 'wrangler';

const [config, portText, stateDirArg] = process.argv.slice(2);
const port = Number(portText);
if (config === undefined || !Number.isInteger(port) || stateDirArg === undefined) {
  console.error('usage: node bench/peers/workerd-host.mjs <wrangler.toml> <port> <stateDir>');
  process.exit(2);
}
const ROOT = resolve(import.meta.dirname, '../..');
const stateDir = resolve(stateDirArg);
const bundleDir = process.env.BENCH_PEER_BUNDLE ? resolve(process.env.BENCH_PEER_BUNDLE) : join(stateDir, 'bundle');

// On this process's Node: wrangler needs Node >= 22, which the system's may not be.
if (!process.env.BENCH_PEER_BUNDLE) {
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', bundleDir, '-c', config],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
}
// Module rules are for sources, and wrangler has bundled them: one ES module (Miniflare 5 also
// refuses to convert rules it cannot carry over exactly).
const { modulesRules: _sourceRules, ...workerOptions } = unstable_getMiniflareWorkerOptions(resolve(ROOT, config)).workerOptions;
if (process.env.BENCH_PEER_VARS) workerOptions.bindings = { ...workerOptions.bindings, ...JSON.parse(process.env.BENCH_PEER_VARS) };

// wrangler derives Miniflare 4's option shape; Miniflare 5 takes its own, converted.
const mf = new Miniflare(
  convertV4MiniflareOptions({
    ...workerOptions,
    name: 'peer',
    modules: true,
    modulesRoot: bundleDir,
    scriptPath: join(bundleDir, 'index.js'),
    host: '127.0.0.1',
    port,
    // Miniflare 5's own name for it: the v4 option `durableObjectsPersist` is dropped by the
    // conversion, which put every object in a temporary directory of its own under /tmp.
    resourcePersistencePath: join(stateDir, 'do'),
    // Miniflare would otherwise download Cloudflare's request.cf fixture.
    cf: false,
    ...(process.env.BENCH_INSPECTOR_PORT && { inspectorPort: Number(process.env.BENCH_INSPECTOR_PORT) }),
  }),
);
const url = await mf.ready;
console.log(`ready ${url.href}`);

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    await mf.dispose().catch(() => {});
    process.exit(0);
  });
}
