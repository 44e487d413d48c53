// node --test bench/harness/*.test.mjs — how C1 reads a startup profile and a bundle (startup-cpu.mjs).
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { build } from 'esbuild';
import { deferredModules, summarizeProfile } from './startup-cpu.mjs';

test('a profile is summarized as wrangler does: sampled time less idle, garbage collection apart', () => {
  const node = (id, functionName) => ({ id, callFrame: { functionName, url: '', lineNumber: -1 } });
  const profile = {
    nodes: [node(1, '(root)'), node(2, '(idle)'), node(3, 'startup'), node(4, '(garbage collector)')],
    samples: [2, 3, 3, 4, 2],
    timeDeltas: [500, 1_000, 2_000, 1_500, 4_000],
  };
  assert.deepEqual(summarizeProfile(profile), { activeMs: 4.5, gcMs: 1.5, samples: 5 });
});

/** Bundles `files` (name → source; `entry.js` first) as wrangler's esbuild does: ESM, no splitting. */
async function bundled(files) {
  const dir = await mkdtemp(join(tmpdir(), 'c1-bundle-'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  await build({
    entryPoints: [join(dir, 'entry.js')],
    outfile: join(dir, 'out', 'index.js'),
    bundle: true,
    format: 'esm',
    logLevel: 'silent',
  });
  return { dir, built: { dir: join(dir, 'out'), main: 'index.js' } };
}

test('a module reached only by import() is deferred; one the top level also imports is not, though esbuild wraps it', async () => {
  const { dir, built } = await bundled({
    'entry.js': "import { shared } from './shared.js';\nexport const now = shared();\nexport const later = () => import('./lazy.js');\n",
    'shared.js': 'export const shared = () => 1;\nglobalThis.sharedRan = true;\n',
    'lazy.js': "import { shared } from './shared.js';\nimport { deep } from './deep.js';\nexport const lazy = shared() + deep;\n",
    'deep.js': 'export const deep = 2;\nglobalThis.deepRan = true;\n',
  });
  try {
    const { deferred, deferredBytes } = await deferredModules(built);
    assert.deepEqual(deferred.map((path) => path.split('/').at(-1)).sort(), ['deep.js', 'lazy.js']);
    assert.ok(deferredBytes > 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a bundle without import() defers nothing', async () => {
  const { dir, built } = await bundled({
    'entry.js': "import { deep } from './deep.js';\nexport default deep;\n",
    'deep.js': 'export const deep = 2;\n',
  });
  try {
    assert.deepEqual(await deferredModules(built), { deferred: [], deferredBytes: 0 });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
