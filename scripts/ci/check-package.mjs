// Proves the package works as a user gets it, from the packed tarball alone, outside the
// repository (nothing is deployed; wrangler stays off the network):
// 1. `npx --yes <tarball> init demo`, without --from: its package.json depends on that tarball
//    (file:../<tarball>); then in demo: `npm install`, `npm test` (tsc and its test in
//    workerd), `npx wrangler deploy --dry-run`, and `npm run dev` answered by the official
//    client in legacy, auto and pinned-modern modes;
// 2. the same install, test and dry run for the other options (`--auth jwt` and `--auth oauth
//    --no-tasks`, whose tests sign in and call the tool; `--idp oidc`, `access`, `github` with
//    their variables unfilled; one with --from);
// 3. every reference to a file in the package's own docs, in `init --help` and in what init
//    writes resolves: in the installed package, or in the generated project;
// 4. a client-only project: the tarball without the server's dependencies in its tree, and
//    its `mcp-edge-sessions/client` types checked with `skipLibCheck: false`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { eraModes } from './client-matrix.mjs';
import { withDevServer } from '../support/dev-server.mjs';
import { unresolvedReferences } from './doc-references.mjs';

const root = resolve(import.meta.dirname, '../..');
const work = mkdtempSync(join(tmpdir(), 'mcp-edge-sessions-package-'));
const PORT = 8930;
const quiet = {
  WRANGLER_SEND_METRICS: 'false',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  WRANGLER_HIDE_BANNER: 'true',
  XDG_CONFIG_HOME: join(work, 'xdg'),
};
const run = (cwd, command, args) => execFileSync(command, args, { cwd, stdio: 'inherit', env: { ...process.env, ...quiet } });
const install = (cwd) => run(cwd, 'npm', ['install', '--no-audit', '--no-fund', '--loglevel=error']);
// npx installs a tarball under <cache>/_npx/<hash of the spec as typed>, so two runs at once
// (./x.tgz in two folders) would share that install, and init reads where it came from there:
// each run has an npx cache of its own (the tarball has no dependencies to fetch).
const npx = (cwd, args) =>
  execFileSync('npx', ['--yes', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...quiet, npm_config_cache: join(work, 'npx') },
  });
/** The files of `dir`, relative to it, node_modules left out. */
const filesOf = (dir) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !relative(dir, entry.parentPath).split('/').includes('node_modules'))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));

try {
  const [{ name, filename, files }] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: root, encoding: 'utf8' }),
  );
  const tarball = `./${filename}`;
  console.log(`package: ${filename}, ${files.length} files`);

  // The compatibility date a new project gets is the one this repository is tested at.
  const { COMPATIBILITY_DATE } = await import(join(root, 'dist/init/project-files.js'));
  const tested = /^compatibility_date = "([^"]+)"$/m.exec(readFileSync(join(root, 'wrangler.toml'), 'utf8'))?.[1];
  if (COMPATIBILITY_DATE !== tested) throw new Error(`init writes compatibility_date ${COMPATIBILITY_DATE}, wrangler.toml has ${tested}`);

  for (const [dir, options] of [
    ['demo', []],
    // Their tests sign in (a token the test mints; the embedded server's flow) and call countdown.
    ['jwt-demo', ['--auth', 'jwt']],
    ['oauth-demo', ['--auth', 'oauth', '--no-tasks']],
    // Its OpenID variables left as init writes them (empty): the project's test must not need them.
    ['oidc-demo', ['--auth', 'oauth', '--idp', 'oidc']],
    ['access-demo', ['--auth', 'oauth', '--idp', 'access', '--no-tasks', '--from', tarball]],
    ['github-demo', ['--auth', 'oauth', '--idp', 'github', '--no-tasks']],
  ]) {
    console.log(`\n== npx --yes ${tarball} init ${dir} ${options.join(' ')}`);
    process.stdout.write(npx(work, [tarball, 'init', dir, ...options]));
    const app = join(work, dir);
    const written = filesOf(app);
    // Without --from too: the tarball npx ran, relative to the project (npm install would 404 on ^0.1.0).
    const dependency = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).dependencies['mcp-edge-sessions'];
    if (dependency !== `file:../${filename}`) throw new Error(`${dir} depends on mcp-edge-sessions ${dependency}, not file:../${filename}`);
    install(app);
    // Every reference to a file resolves in the project as installed: what init wrote, and (once)
    // the package's own Markdown as installed and init's help text.
    const installed = join(app, 'node_modules', name);
    const texts = written.map((file) => [app, file]);
    if (dir === 'demo') texts.push(...filesOf(installed).flatMap((file) => (file.endsWith('.md') ? [[installed, file]] : [])));
    const unresolved = texts.flatMap(([base, file]) =>
      unresolvedReferences(readFileSync(join(base, file), 'utf8'), { root: base, file, name }),
    );
    if (dir === 'demo')
      unresolved.push(...unresolvedReferences(npx(work, [tarball, '--help']), { root: app, file: undefined, name, label: 'init --help' }));
    if (unresolved.length > 0) throw new Error(`references that do not resolve:\n${unresolved.join('\n')}`);
    console.log(
      `${dir}: every reference to a file resolves (${written.length} files written${dir === 'demo' ? ", the package's Markdown, init --help" : ''})`,
    );
    // Verbose: each test by name (jwt-demo and oauth-demo sign in and call countdown).
    run(app, 'npm', ['test', '--', '--reporter=verbose']);
    run(app, 'npx', ['wrangler', 'deploy', '--dry-run', '--outdir', join(work, `${dir}-bundle`)]);
    if (options.length === 0) {
      await withDevServer(PORT, (url) => eraModes(url, { confirm: false }), { project: app });
    }
  }

  console.log('\n== a client-only project');
  const client = join(work, 'client-only');
  mkdirSync(join(client, 'src'), { recursive: true });
  const typescript = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).devDependencies.typescript;
  const manifest = {
    name: 'client-only',
    private: true,
    type: 'module',
    dependencies: { 'mcp-edge-sessions': `file:../${filename}` },
    devDependencies: { typescript },
  };
  writeFileSync(join(client, 'package.json'), JSON.stringify(manifest, null, 2));
  const compilerOptions = {
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    target: 'es2023',
    lib: ['es2023', 'dom'],
    module: 'nodenext',
    moduleResolution: 'nodenext',
  };
  writeFileSync(join(client, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['src'] }, null, 2));
  writeFileSync(
    join(client, 'src/follow.ts'),
    `import { followTask, ForkSafeTransport, readTaskEvent } from 'mcp-edge-sessions/client';
export const transport = new ForkSafeTransport(new URL('http://127.0.0.1:8787/mcp'));
export async function follow(taskId: string): Promise<unknown> {
  const { task } = await followTask({
    url: 'http://127.0.0.1:8787/mcp',
    taskId,
    onEvent: (event) => {
      const known = readTaskEvent(event);
      if (known?.kind === 'progress') console.log(known.progress, known.total);
    },
  });
  return task.status === 'completed' ? task.result : task.status;
}
`,
  );
  install(client);
  const tree = execFileSync('npm', ['ls', '--all', '--parseable'], { cwd: client, encoding: 'utf8' });
  const pulled = [
    'hono',
    'jose',
    '@cloudflare/workers-oauth-provider',
    '@modelcontextprotocol/server',
    '@modelcontextprotocol/client',
  ].filter((name) => tree.split('\n').some((path) => path.endsWith(`/node_modules/${name}`)));
  if (pulled.length > 0) throw new Error(`a client-only install pulled in ${pulled.join(', ')}`);
  run(client, 'npx', ['tsc', '-p', '.']);
  console.log(
    `client-only: ${tree.trim().split('\n').length - 1} packages in its tree (no server dependency), types checked with skipLibCheck: false`,
  );

  console.log(
    '\npackage check: init from the tarball (six option sets, five without --from) installed, tested and bundled; the jwt and oauth projects signed in and called countdown; the demo answered the official client in three modes; every doc reference resolves; the client entry installs alone',
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
