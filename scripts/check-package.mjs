// Proves the package works as a user gets it, from the packed tarball alone, outside the
// repository (nothing is deployed; wrangler stays off the network):
// 1. `npx <tarball> init demo`, then in demo: `npm install`, `npm test` (tsc and its test in
//    workerd), `npx wrangler deploy --dry-run`, and `npm run dev` answered by the official
//    client in legacy, auto and pinned-modern modes;
// 2. the same install, test and dry run for the other options (`--auth jwt`, `--auth oauth
//    --no-tasks`, `--auth oauth --idp oidc` with its OpenID variables unfilled), whose servers
//    ask for a token;
// 3. a client-only project: the tarball without the server's dependencies in its tree, and
//    its `mcp-edge-sessions/client` types checked with `skipLibCheck: false`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eraModes } from './client-matrix.mjs';
import { withDevServer } from './dev-server.mjs';

const root = resolve(import.meta.dirname, '..');
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

try {
  const [{ filename, files }] = JSON.parse(
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
    ['jwt-demo', ['--auth', 'jwt']],
    ['oauth-demo', ['--auth', 'oauth', '--no-tasks']],
    // Its OpenID variables left as init writes them (empty): the project's test must not need them.
    ['oidc-demo', ['--auth', 'oauth', '--idp', 'oidc']],
    ['access-demo', ['--auth', 'oauth', '--idp', 'access', '--no-tasks']],
    ['github-demo', ['--auth', 'oauth', '--idp', 'github', '--no-tasks']],
  ]) {
    console.log(`\n== npx ${tarball} init ${dir} ${options.join(' ')}`);
    run(work, 'npx', ['--yes', tarball, 'init', dir, ...options, '--from', tarball]);
    const app = join(work, dir);
    install(app);
    run(app, 'npm', ['test']);
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
    '\npackage check: init from the tarball (six option sets) installed, tested and bundled; the demo answered the official client in three modes; the client entry installs alone',
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
