#!/usr/bin/env node
// `npx mcp-edge-sessions init <dir>`: writes a new MCP server Worker (src/init/ decides what;
// this file only reads the command line and this package's manifest, and writes the files).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseInitCommand, USAGE } from '../dist/init/init-options.js';
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
// A tarball path is written as a file: dependency relative to the new project, as npm resolves it.
const spec = options.packageSpec;
const packageSpec = spec !== undefined && /\.tgz$/.test(spec) ? `file:${relative(target, resolve(spec))}` : spec;
for (const { path, text } of projectFiles({ ...options, packageSpec }, manifest)) {
  const file = join(target, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}
const signIn = options.idp === undefined ? '' : `, sign-in ${options.idp}`;
// A provider's variables are written empty: the Worker refuses to serve until they are filled in.
const fill =
  options.idp === undefined || options.idp === 'demo'
    ? ''
    : `\n\nSIGN_IN=${options.idp}: fill in its variables in wrangler.toml (and its secret), as README.md's "Sign-in"
says, before npm run dev; until then the Worker refuses every request, its log naming what to set.`;
console.log(`Wrote ${options.name} (auth ${options.auth}${signIn}, tasks ${options.tasks ? 'on' : 'off'}) in ${options.dir}. Next:

  cd ${options.dir}
  npm install
  npm run dev      # http://localhost:8787/mcp
  npm test${fill}`);
