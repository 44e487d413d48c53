// Installs a folder's own dependencies (its package-lock.json) when they are missing or differ
// from the lockfile, so that the benchmark's peers (bench/) and the agent frameworks' clients
// (scripts/ci/agent-clients/) work on a fresh clone without touching the product's own install.
//   node scripts/support/ensure-deps.mjs <folder>     or     ensureDeps(folder, label)
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const packagesOf = (file) => JSON.parse(readFileSync(file, 'utf8')).packages ?? {};

function installedMatchesLock(folder) {
  const hidden = join(folder, 'node_modules', '.package-lock.json');
  if (!existsSync(hidden)) return false;
  const installed = packagesOf(hidden);
  return Object.entries(packagesOf(join(folder, 'package-lock.json'))).every(
    ([path, entry]) => path === '' || entry.optional || installed[path]?.version === entry.version,
  );
}

/**
 * `npm ci` in `folder` unless what is installed there is its lockfile's; throws if it fails.
 * No install script runs (`--ignore-scripts`, whatever npm's own policy): neither folder needs
 * one, and one of the agent clients' dependencies reports its install over the network.
 */
export function ensureDeps(folder, label = folder) {
  if (installedMatchesLock(folder)) return;
  console.log(`${label}: installing its dependencies (npm ci in ${folder})`);
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: folder, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`npm ci in ${folder} exited with ${result.status}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const folder = process.argv[2];
  if (folder === undefined) throw new Error('usage: node scripts/support/ensure-deps.mjs <folder>');
  ensureDeps(resolve(folder));
}
