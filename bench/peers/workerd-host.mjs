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
 * goes to <stateDir>/do, the bundle to <stateDir>/bundle.
 */
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { Miniflare } from 'miniflare';
import { unstable_getMiniflareWorkerOptions } from 'wrangler';

const [config, portText, stateDirArg] = process.argv.slice(2);
const port = Number(portText);
if (config === undefined || !Number.isInteger(port) || stateDirArg === undefined) {
  console.error('usage: node bench/peers/workerd-host.mjs <wrangler.toml> <port> <stateDir>');
  process.exit(2);
}
const ROOT = resolve(import.meta.dirname, '../..');
const stateDir = resolve(stateDirArg);
const bundleDir = join(stateDir, 'bundle');

execFileSync(join(ROOT, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', bundleDir, '-c', config], {
  cwd: ROOT,
  stdio: ['ignore', 'ignore', 'inherit'],
});
const { workerOptions } = unstable_getMiniflareWorkerOptions(resolve(ROOT, config));

const mf = new Miniflare({
  ...workerOptions,
  name: 'peer',
  modules: true,
  modulesRoot: bundleDir,
  scriptPath: join(bundleDir, 'index.js'),
  modulesRules: [{ type: 'ESModule', include: ['**/*.js'] }],
  host: '127.0.0.1',
  port,
  durableObjectsPersist: join(stateDir, 'do'),
  // Miniflare would otherwise download Cloudflare's request.cf fixture.
  cf: false,
});
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
