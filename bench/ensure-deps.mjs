// Installs the peers' dependencies (bench/package-lock.json) when they are missing or differ
// from the lockfile, so `npm run bench` works on a fresh clone without touching the product's
// own install.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bench = dirname(fileURLToPath(import.meta.url));
const packagesOf = (file) => JSON.parse(readFileSync(file, 'utf8')).packages ?? {};

function installedMatchesLock() {
  const hidden = join(bench, 'node_modules', '.package-lock.json');
  if (!existsSync(hidden)) return false;
  const installed = packagesOf(hidden);
  return Object.entries(packagesOf(join(bench, 'package-lock.json'))).every(
    ([path, entry]) => path === '' || entry.optional || installed[path]?.version === entry.version,
  );
}

if (!installedMatchesLock()) {
  console.log("bench: installing the peers' dependencies (npm ci in bench/)");
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: bench, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
