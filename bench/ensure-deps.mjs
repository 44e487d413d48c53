// Installs the peers' dependencies (bench/package-lock.json) when they are missing or differ
// from the lockfile, so `npm run bench` works on a fresh clone without touching the product's
// own install.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDeps } from '../scripts/ensure-deps.mjs';

ensureDeps(dirname(fileURLToPath(import.meta.url)), 'bench');
