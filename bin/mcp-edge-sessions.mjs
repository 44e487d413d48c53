#!/usr/bin/env node
// `npx mcp-edge-sessions init <dir>`: writes a new MCP server Worker (src/init/ decides what;
// this file only reads the command line, this package's manifest and npm's record of where it
// came from, and writes the files).
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseInitCommand, USAGE } from '../dist/init/init-options.js';
import { packageSource } from '../dist/init/package-source.js';
import { projectFiles } from '../dist/init/project-files.js';

const command = parseInitCommand(process.argv.slice(2));
if (command.kind === 'help') {
  console.log(USAGE);
  process.exit(0);
}
if (command.kind === 'invalid') {
  console.error(`mcp-edge-sessions: ${command.message}\n\n${USAGE}`);
  process.exit(2);
}
const { options } = command;
const target = resolve(options.dir);
if (existsSync(target) && readdirSync(target).length > 0) {
  console.error(`mcp-edge-sessions: ${options.dir} exists and is not empty; choose a new folder`);
  process.exit(1);
}
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const source = packageSource({
  from: options.packageSpec,
  cwd: process.cwd(),
  name: manifest.name,
  version: manifest.version,
  origin: origin(realpathSync(fileURLToPath(new URL('..', import.meta.url)))),
});
if (source.kind === 'refused') {
  console.error(`mcp-edge-sessions: ${source.message}; nothing written`);
  process.exit(1);
}
// A tarball is written relative to the new project, as npm writes it in package-lock.json: the
// project and the tarball move together (a repository holding both, another machine), where an
// absolute path would break on the first move.
const packageSpec =
  source.kind === 'spec' ? source.spec : `file:${relative(target, resolve(source.base, source.path)).split(sep).join('/')}`;
for (const { path, text } of projectFiles({ ...options, packageSpec }, manifest)) {
  const file = join(target, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}
const signIn = options.idp === undefined ? '' : `, sign-in ${options.idp}`;
const from = source.kind === 'tarball' ? `, depending on ${packageSpec} (relative to it: move the two together)` : '';
// A provider's variables are written empty: the Worker refuses to serve until they are filled in.
const fill =
  options.idp === undefined || options.idp === 'demo'
    ? ''
    : `\n\nSIGN_IN=${options.idp}: fill in its variables in wrangler.toml (and its secret), as README.md's "Sign-in"
says, before npm run dev; until then the Worker refuses every request, its log naming what to set.`;
console.log(`Wrote ${options.name} (auth ${options.auth}${signIn}, tasks ${options.tasks ? 'on' : 'off'}) in ${options.dir}${from}. Next:

  cd ${options.dir}
  npm install
  npm run dev      # http://localhost:8787/mcp
  npm test${fill}`);

/**
 * Where npm installed this copy (`root`, the package's real folder): the `resolved` of its entry
 * in the nearest lockfile above it (npx's cache `~/.npm/_npx/<hash>/` has one, as does a
 * project's or the global node_modules). Outside node_modules: a checkout, or unknown.
 */
function origin(root) {
  if (basename(dirname(root)) !== 'node_modules') {
    for (let dir = root; ; dir = dirname(dir)) {
      if (existsSync(join(dir, '.git'))) return { kind: 'checkout', root };
      if (dirname(dir) === dir) return { kind: 'unknown', root };
    }
  }
  for (let dir = dirname(dirname(root)); ; dir = dirname(dir)) {
    const key = relative(dir, root).split(sep).join('/');
    for (const lockfile of [join(dir, 'node_modules', '.package-lock.json'), join(dir, 'package-lock.json')]) {
      const entry = readLockfile(lockfile)?.packages?.[key];
      if (entry !== undefined) return { kind: 'installed', resolved: entry.resolved, lockRoot: dir };
    }
    if (dirname(dir) === dir) return { kind: 'installed', resolved: undefined, lockRoot: dir };
  }
}

function readLockfile(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}
