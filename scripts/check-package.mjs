// Proves the package installs as a user's project gets it: `npm pack`, then a copy of
// examples/demo outside the repository with the tarball as its dependency, installed from
// the registry, its test run and a `wrangler deploy --dry-run` bundled. Nothing is deployed.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'mcp-edge-sessions-package-'));

try {
  const [{ filename, files }] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: root, encoding: 'utf8' }),
  );
  console.log(`package: ${filename}, ${files.length} files`);
  const app = join(work, 'demo');
  cpSync(join(root, 'examples/demo'), app, { recursive: true, filter: (path) => !/node_modules|\.wrangler|\.cache/.test(path) });
  const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
  manifest.dependencies['mcp-edge-sessions'] = `file:${join(work, filename)}`;
  writeFileSync(join(app, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const run = (command, args, env = {}) => execFileSync(command, args, { cwd: app, stdio: 'inherit', env: { ...process.env, ...env } });
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error']);
  run('npm', ['test']);
  // A check, not a user's deploy: wrangler stays off the network.
  run('npx', ['wrangler', 'deploy', '--dry-run', '--outdir', join(work, 'bundle')], {
    WRANGLER_SEND_METRICS: 'false',
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    WRANGLER_HIDE_BANNER: 'true',
    XDG_CONFIG_HOME: join(work, 'xdg'),
  });
  console.log('package check: installed from the tarball, test passed, deploy --dry-run bundled');
} finally {
  rmSync(work, { recursive: true, force: true });
}
