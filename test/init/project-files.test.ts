/**
 * The files `init` writes (src/init/project-files.ts): what each option changes. That the
 * project installs, type-checks, passes its test, deploys (dry run) and answers the official
 * client is proven from the packed tarball by scripts/check-package.mjs.
 */
import { describe, expect, it } from 'vitest';
import type { InitOptions } from '../../src/init/init-options.ts';
import { projectFiles, type LibraryManifest } from '../../src/init/project-files.ts';
import { isHostAllowed, isOriginAllowed, parseHostAllowlist, parseOriginAllowlist } from '../../src/core/allowlist.ts';
import manifest from '../../package.json';

const options = (overrides: Partial<InitOptions> = {}): InitOptions => ({
  dir: 'x',
  name: 'my-server',
  auth: 'none',
  tasks: true,
  packageSpec: undefined,
  ...overrides,
});
const files = (overrides?: Partial<InitOptions>) =>
  Object.fromEntries(projectFiles(options(overrides), manifest as LibraryManifest).map((f) => [f.path, f.text]));

describe('projectFiles', () => {
  it('writes a whole project', () => {
    expect(Object.keys(files())).toEqual([
      'package.json',
      'wrangler.toml',
      'tsconfig.json',
      'vitest.config.ts',
      'src/index.ts',
      'src/tools.ts',
      'test/server.test.ts',
      '.gitignore',
      'README.md',
    ]);
  });

  it('pins the toolchain this package is tested with, and depends on this version', () => {
    const project = JSON.parse(files()['package.json']!);
    const tested = manifest.devDependencies as Record<string, string>;
    for (const name of ['wrangler', 'workerd', 'node', 'vitest', 'typescript', '@cloudflare/vitest-plugin', '@cloudflare/workers-types']) {
      expect(project.devDependencies[name], name).toBe(tested[name]);
    }
    for (const name of ['@modelcontextprotocol/server', 'hono', 'jose', 'oauth4webapi', '@cloudflare/workers-oauth-provider', 'zod']) {
      expect(project.dependencies[name], name).toBe(tested[name]);
    }
    expect(project.dependencies['mcp-edge-sessions']).toBe(`^${manifest.version}`);
    expect(project.overrides).toEqual(manifest.overrides);
    // Wrangler stays off the network in dev and test, never in deploy (the user's own login).
    expect(project.scripts.dev).toContain('WRANGLER_SEND_METRICS=false');
    expect(project.scripts.deploy).toBe('wrangler deploy');
  });

  it('depends on a given package spec instead (a packed tarball)', () => {
    const project = JSON.parse(files({ packageSpec: 'file:../mcp-edge-sessions-0.1.0.tgz' })['package.json']!);
    expect(project.dependencies['mcp-edge-sessions']).toBe('file:../mcp-edge-sessions-0.1.0.tgz');
  });

  it('refuses a manifest without a tested version of a dependency', () => {
    const { wrangler: _, ...devDependencies } = manifest.devDependencies as Record<string, string>;
    expect(() => projectFiles(options(), { ...manifest, devDependencies } as LibraryManifest)).toThrow('no tested version of wrangler');
  });

  it.each([
    [true, ['MCP_TASKS', 'class_name = "Tasks"', 'new_sqlite_classes = ["Sessions", "McpEventBus", "Tasks"]']],
    [false, ['new_sqlite_classes = ["Sessions", "McpEventBus"]']],
  ])('tasks %s: the binding, the class, its migration and runTask', (tasks, toml) => {
    const project = files({ tasks });
    for (const line of toml) expect(project['wrangler.toml']).toContain(line);
    expect(project['wrangler.toml']!.includes('MCP_TASKS')).toBe(tasks);
    expect(project['src/index.ts']!.includes('class Tasks extends McpTaskObject')).toBe(tasks);
    expect(project['src/index.ts']!.includes('tasks: (env) => env.MCP_TASKS')).toBe(tasks);
    expect(project['src/tools.ts']!.includes('runTask(')).toBe(tasks);
    expect(project['test/server.test.ts']!.includes('as a task')).toBe(tasks);
  });

  it.each([
    ['none', [], ['AUTH =', 'OAUTH_KV']],
    ['jwt', ['AUTH = "jwt"', 'AUTH_ISSUER', 'AUTH_JWKS_URL'], ['OAUTH_KV']],
    ['oauth', ['AUTH = "oauth"', 'MCP_RESOURCE = "http://localhost:8787/mcp"', 'binding = "OAUTH_KV"'], ['AUTH_ISSUER']],
  ] as const)('auth %s: its variables and bindings, and a test of its challenge', (auth, present, absent) => {
    const project = files({ auth });
    for (const text of present) expect(project['wrangler.toml']).toContain(text);
    for (const text of absent) expect(project['wrangler.toml']).not.toContain(text);
    expect(project['test/server.test.ts']!.includes('asks for a token')).toBe(auth !== 'none');
  });

  it.each(['none', 'jwt', 'oauth'] as const)(
    'auth %s: its allowlists admit npm run dev (localhost:8787) and MCP Inspector (http://localhost:6274), and no other host',
    (auth) => {
      const toml = files({ auth })['wrangler.toml']!;
      const value = (name: string) => new RegExp(`^${name} = "([^"]*)"$`, 'm').exec(toml)![1]!;
      const hosts = parseHostAllowlist(value('ALLOWED_HOSTS'));
      const origins = parseOriginAllowlist(value('ALLOWED_ORIGINS'));
      expect([
        isHostAllowed(hosts, 'localhost:8787'),
        isHostAllowed(hosts, '127.0.0.1:8787'),
        isHostAllowed(hosts, 'evil.example'),
      ]).toEqual([true, true, false]);
      expect(isOriginAllowed(origins, 'http://localhost:6274')).toBe(true);
      expect(toml).toContain('An entry without a port is\n# its default ports only');
    },
  );

  it('auth oauth: wrangler.toml and the README name the demo sign-in page’s risk and its opt-in, which is not set', () => {
    const project = files({ auth: 'oauth' });
    const toml = project['wrangler.toml']!;
    expect(toml).toContain('whoever reaches it can sign in as anyone');
    expect(toml).toContain('DEMO_SIGN_IN = "anyone-is-anyone"');
    expect(toml).toMatch(/^# .*DEMO_SIGN_IN = "anyone-is-anyone"/m);
    expect(toml).not.toMatch(/^DEMO_SIGN_IN/m);
    expect(toml).toContain('`oauth: { authorize }`');
    expect(project['README.md']).toContain('whoever reaches it can sign in as anyone');
    expect(project['README.md']).toContain('`DEMO_SIGN_IN = "anyone-is-anyone"`');
    expect(project['test/server.test.ts']).toContain('its demo sign-in page on loopback');
    for (const auth of ['none', 'jwt'] as const) expect(files({ auth })['wrangler.toml']).not.toContain('DEMO_SIGN_IN');
  });

  it('names the Worker everywhere it is named', () => {
    const project = files({ name: 'weather-tools' });
    expect(JSON.parse(project['package.json']!).name).toBe('weather-tools');
    expect(project['wrangler.toml']).toMatch(/^name = "weather-tools"$/m);
    expect(project['src/index.ts']).toContain("name: 'weather-tools'");
    expect(project['README.md']).toMatch(/^# weather-tools$/m);
  });
});
