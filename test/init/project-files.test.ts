/**
 * The files `init` writes (src/init/project-files.ts): what each option changes. That the
 * project installs, type-checks, passes its test, deploys (dry run) and answers the official
 * client is proven from the packed tarball by scripts/ci/check-package.mjs.
 */
import { describe, expect, it } from 'vitest';
import type { InitOptions } from '../../src/init/init-options.ts';
import { projectFiles, type LibraryManifest } from '../../src/init/project-files.ts';
import { isHostAllowed, isOriginAllowed, parseHostAllowlist, parseOriginAllowlist } from '../../src/core/allowlist.ts';
import { readConfig } from '../../src/config.ts';
import { JURISDICTIONS, LOCATION_HINTS, readPlacement } from '../../src/core/placement.ts';
import { SIGN_IN_SOURCES } from '../../src/init/sign-in-sources.ts';
import manifest from '../../package.json';

const options = (overrides: Partial<InitOptions> = {}): InitOptions => ({
  dir: 'x',
  name: 'my-server',
  auth: 'none',
  idp: undefined,
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

  /** wrangler.toml's `[exports]` table: each class it declares, and its entry as written. */
  const exportsTable = (toml: string) => {
    const start = toml.indexOf('\n[exports]\n');
    if (start === -1) return {};
    const body = toml.slice(start + '\n[exports]\n'.length);
    const end = body.search(/^\[/m);
    return Object.fromEntries(
      [...(end === -1 ? body : body.slice(0, end)).matchAll(/^(\w+) = (\{[^\n]*\})$/gm)].map(([, name, entry]) => [name!, entry!]),
    );
  };
  const exportsOf = (toml: string) => Object.keys(exportsTable(toml));
  /** Each class a `[[durable_objects.bindings]]` entry names. */
  const boundClasses = (toml: string) =>
    [...toml.matchAll(/^\[\[durable_objects\.bindings\]\]\nname = "\w+"\nclass_name = "(\w+)"$/gm)].map(([, name]) => name!);

  it.each(
    (['none', 'jwt', 'oauth'] as const).flatMap((auth) =>
      [true, false].flatMap((tasks) =>
        (auth === 'oauth' ? (['demo', 'oidc'] as const) : [undefined]).map((idp) => [auth, tasks, idp] as const),
      ),
    ),
  )('auth %s, tasks %s, idp %s: every bound class is exported with SQLite storage, and nothing else; no migrations', (auth, tasks, idp) => {
    const toml = files({ auth, tasks, idp })['wrangler.toml']!;
    const bound = boundClasses(toml);
    expect(bound.length).toBe(2 + (tasks ? 1 : 0) + (auth === 'none' ? 0 : 1));
    expect(exportsOf(toml)).toEqual(bound);
    for (const entry of Object.values(exportsTable(toml))) expect(entry).toBe('{ type = "durable-object", storage = "sqlite" }');
    // The two are exclusive: wrangler refuses a config with both.
    expect(toml).not.toMatch(/^\[\[migrations\]\]|^migrations|new_sqlite_classes/m);
  });

  it.each([
    [true, ['MCP_TASKS', 'class_name = "Tasks"', 'Tasks = { type = "durable-object", storage = "sqlite" }']],
    [false, []],
  ])('tasks %s: the binding, the class, its export and runTask', (tasks, toml) => {
    const project = files({ tasks });
    for (const line of toml) expect(project['wrangler.toml']).toContain(line);
    expect(exportsOf(project['wrangler.toml']!).includes('Tasks')).toBe(tasks);
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
    const project = files({ auth, idp: auth === 'oauth' ? 'demo' : undefined });
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
    const project = files({ auth: 'oauth', idp: 'demo' });
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

  /** wrangler.toml's `[vars]`, as the Worker gets them (uncommented `NAME = "value"` lines). */
  const varsOf = (toml: string) =>
    Object.fromEntries(
      [...toml.slice(toml.indexOf('[vars]')).matchAll(/^([A-Z_]+) = "([^"]*)"$/gm)].map(([, name, value]) => [name!, value!]),
    );
  const PROVIDER_VARS = /^#? ?(OIDC_|ACCESS_|GITHUB_|DEMO_SIGN_IN =)/m;

  it.each([
    ['demo', [], undefined, ['whoever reaches it can sign in as anyone', '`SIGN_IN = "oidc"`']],
    [
      'oidc',
      [
        'OIDC_ISSUER = ""',
        'OIDC_CLIENT_ID = ""',
        'OIDC_SCOPES = "openid email profile"',
        '# OIDC_ALLOWED_EMAIL_DOMAINS = "example.com"',
        '# OIDC_REQUIRED_GROUP = "mcp-users"',
      ],
      'OIDC_CLIENT_SECRET',
      [
        'redirect URI: `https://<your host>/authorize/callback`',
        '`http://localhost:8787/authorize/callback`',
        'scopes `openid email profile`',
        '`client_secret_basic`',
        '`OIDC_ISSUER`',
        '`OIDC_CLIENT_ID`',
      ],
    ],
    [
      'access',
      ['ACCESS_TEAM_DOMAIN = ""', 'ACCESS_AUD = ""'],
      undefined,
      [
        'the path **`/authorize`** only',
        '**Not the whole host, not `/mcp`**',
        'Application Audience (AUD) Tag',
        '`https://<team>.cloudflareaccess.com`',
        '`workers_dev = false`',
      ],
    ],
    [
      'github',
      ['GITHUB_CLIENT_ID = ""'],
      'GITHUB_CLIENT_SECRET',
      [
        '*New OAuth App*',
        '**authorization callback URL**\n   `https://<your host>/authorize/callback`',
        "GitHub's numeric user id",
        'No scope is asked',
      ],
    ],
  ] as const)(
    'auth oauth --idp %s: SIGN_IN, its variables as placeholders, its secret named, the README’s steps',
    (idp, lines, secret, steps) => {
      const project = files({ auth: 'oauth', idp });
      const toml = project['wrangler.toml']!;
      expect(varsOf(toml)).toMatchObject({ AUTH: 'oauth', SIGN_IN: idp });
      for (const line of lines) expect(toml).toMatch(new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
      // Only its own source's variables.
      const own = toml
        .split('\n')
        .filter((line) => PROVIDER_VARS.test(line))
        .map((line) => line.replace(/^# /, '').split(' = ')[0]);
      expect(own).toEqual(lines.map((line) => line.replace(/^# /, '').split(' = ')[0]));
      for (const step of steps) expect(project['README.md']).toContain(step);
      if (idp !== 'demo') expect(project['README.md']).toContain(`## Sign-in: ${SIGN_IN_SOURCES[idp].title}`);
      if (secret === undefined) {
        expect(project['.dev.vars.example']).toBeUndefined();
        expect(toml).not.toContain('wrangler secret put OIDC_CLIENT_SECRET');
        return;
      }
      // The secret: named where it is set, never given a value in wrangler.toml.
      expect(toml).toContain(`# And a secret, never written here: npx wrangler secret put ${secret}`);
      expect(toml).not.toMatch(new RegExp(`^${secret}`, 'm'));
      expect(project['README.md']).toContain(`\`npx wrangler secret put ${secret}\``);
      expect(project['.dev.vars.example']).toMatch(new RegExp(`^${secret}=$`, 'm'));
      expect(project['.gitignore']).toMatch(/^\.dev\.vars$/m);
    },
  );

  it.each([
    [
      'jwt',
      undefined,
      // A key pair of its own, its public half answered at AUTH_JWKS_URL; a token of AUTH_ISSUER's.
      ["generateKeyPair('ES256')", 'new Request(input, init).url === env.AUTH_JWKS_URL', '.setIssuer(env.AUTH_ISSUER)'],
    ],
    [
      'oauth',
      'demo',
      // Registration, PKCE, the demo page's consent, the code for a token.
      [
        "send('/oauth/register'",
        'oauth.calculatePKCECodeChallenge(verifier)',
        "user: 'alice', decision: 'approve'",
        'code_verifier: verifier',
      ],
    ],
  ] as const)('auth %s: the project’s test signs in and calls countdown with the token', (auth, idp, steps) => {
    const test = files({ auth, idp })['test/server.test.ts']!;
    for (const step of steps) expect(test).toContain(step);
    expect(test).toContain('headers: { Authorization: `Bearer ${');
    expect(test).toContain("expect((await messages(response)).at(-1).result.content[0].text).toBe('liftoff after 2');");
  });

  it.each([
    ['none', undefined],
    ['jwt', undefined],
    ['oauth', 'demo'],
    ['oauth', 'oidc'],
  ] as const)('auth %s %s: the docs it names are the installed package’s, and no registry page', (auth, idp) => {
    for (const [path, written] of Object.entries(files({ auth, idp }))) {
      const text = written.replace(/\[[^\]]*\]\(/g, '('); // a link's text is no reference
      // Every docs/… it names is under node_modules/mcp-edge-sessions/ (scripts/ci/check-package.mjs checks each is there).
      for (const { index } of text.matchAll(/docs\//g))
        expect(text.slice(index - 'node_modules/mcp-edge-sessions/'.length, index), path).toBe('node_modules/mcp-edge-sessions/');
      expect(text, path).not.toContain('npmjs.com');
    }
  });

  it.each(['oidc', 'access', 'github'] as const)(
    'auth oauth --idp %s: the project’s test signs in with stand-ins, and refuses each placeholder left empty and the secret',
    (idp) => {
      const project = files({ auth: 'oauth', idp });
      const test = project['test/server.test.ts']!;
      const placeholders = Object.entries(varsOf(project['wrangler.toml']!)).filter(([, value]) => value === '');
      const { secret, testValues, refusals } = SIGN_IN_SOURCES[idp];
      // Every variable init leaves empty, and the secret, has a stand-in and a refusal row.
      const named = [...placeholders.map(([name]) => name), ...(secret === undefined ? [] : [secret])];
      expect(Object.keys(testValues).sort()).toEqual([...named].sort());
      expect(refusals.map(([variable]) => variable).sort()).toEqual([...named].sort());
      for (const [name, value] of Object.entries(testValues)) expect(test).toContain(`  ${name}: '${value}',`);
      for (const [variable, logged] of refusals) expect(test).toContain(`['${variable}', '${logged}'],`);
      if (secret !== undefined) expect(refusals).toContainEqual([secret, `wrangler secret put ${secret}`]);
      // It reaches the Worker with the stand-ins over wrangler.toml's, never with the placeholders alone.
      expect(test).toContain('worker.fetch(request, { ...env, ...vars } as Env, createExecutionContext())');
      expect(test).not.toContain('exports.default');
    },
  );

  it.each(
    (['oidc', 'access', 'github'] as const).flatMap((idp) =>
      SIGN_IN_SOURCES[idp].refusals.map(([variable, logged]) => [idp, variable, logged] as const),
    ),
  )(
    'auth oauth --idp %s: the Worker refuses wrangler.toml as written with %s empty, naming it (%s); the test’s stand-ins pass',
    (idp, variable, logged) => {
      const project = files({ auth: 'oauth', idp });
      const { testValues } = SIGN_IN_SOURCES[idp];
      const written = varsOf(project['wrangler.toml']!);
      expect(() => readConfig({ ...written, ...testValues, [variable]: written[variable] ?? '' })).toThrow(logged);
      expect(readConfig({ ...written, ...testValues }).auth).toMatchObject({ mode: 'oauth', signIn: { kind: idp } });
    },
  );

  it('auth oauth --idp demo: the Worker reads wrangler.toml as written, and signs in with the loopback-only demo', () => {
    const config = readConfig(varsOf(files({ auth: 'oauth', idp: 'demo' })['wrangler.toml']!));
    expect(config.auth).toMatchObject({ mode: 'oauth', signIn: { kind: 'demo' } });
    expect(config.demoSignIn).toBe(false);
  });

  it.each(['none', 'jwt', 'oauth'] as const)(
    'auth %s: wrangler.toml offers the placement, commented out; uncommented, the Worker reads it',
    (auth) => {
      const toml = files({ auth })['wrangler.toml']!;
      const offered = [...toml.matchAll(/^# (DO_JURISDICTION|DO_LOCATION_HINT) = "([^"]*)" +# (.+)$/gm)];
      expect(offered.map(([, name]) => name)).toEqual(['DO_JURISDICTION', 'DO_LOCATION_HINT']);
      expect(toml).not.toMatch(/^DO_/m);
      const uncommented = Object.fromEntries(offered.map(([, name, value]) => [name!, value!]));
      expect(readPlacement(uncommented)).toEqual({ jurisdiction: 'eu', locationHint: 'weur' });
      // Each line says what its variable does and what it may be.
      expect(offered[0]![3]).toContain(JURISDICTIONS.join(', '));
      expect(offered[0]![3]).toContain('every object is orphaned');
      expect(offered[1]![3]).toContain(LOCATION_HINTS.join(', '));
    },
  );

  it('names the Worker everywhere it is named', () => {
    const project = files({ name: 'weather-tools' });
    expect(JSON.parse(project['package.json']!).name).toBe('weather-tools');
    expect(project['wrangler.toml']).toMatch(/^name = "weather-tools"$/m);
    expect(project['src/index.ts']).toContain("name: 'weather-tools'");
    expect(project['README.md']).toMatch(/^# weather-tools$/m);
  });
});
