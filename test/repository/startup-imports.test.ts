/**
 * What a Worker evaluates when its isolate starts (issue 48): every module src/lib.ts reaches by
 * static imports — wrangler's bundler (esbuild, no splitting) evaluates those at startup, and a
 * module reached by a dynamic `import()` only when that runs. So the code of one AUTH mode that
 * the others never use stays out of their startup: the embedded authorization server's
 * (`@cloudflare/workers-oauth-provider`, the sign-in flows and pages, oauth4webapi) is imported by
 * the first AUTH=oauth request (edge/worker-entry.ts), and `jose` by the first AUTH=jwt token
 * (auth/jwt-verifier.ts). A static import of any of them from a module lib.ts reaches would put it
 * back into every Worker's startup, whatever its AUTH; this test names the path that does.
 * `import type` and `export type` are erased by the build and are no edges here; any other
 * import is one, `import { type X }` included (verbatimModuleSyntax keeps it as an import).
 * The bench measures what that costs (C1, bench/harness/cold-start.mjs).
 */
import { describe, expect, it } from 'vitest';
import { moduleImports, resolveFrom } from '../support/module-imports.ts';

const sources = import.meta.glob<string>('/src/**/*.ts', { query: '?raw', import: 'default', eager: true });

/** The packages only one AUTH mode uses, and the modules that import them, each loaded by `import()` where its mode needs it. */
const DEFERRED_PACKAGES = ['@cloudflare/workers-oauth-provider', 'jose', 'oauth4webapi'];
const DEFERRED_MODULES = ['/src/auth/oauth-server.ts', '/src/auth/jwt-keys.ts'];

/** A bare specifier's package: `@scope/name` or `name`. */
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/** Each module's value imports: modules of src/ by path, packages by name. */
const edges = new Map<string, string[]>();
for (const [file, text] of Object.entries(sources)) {
  edges.set(
    file,
    moduleImports(text)
      .filter(({ typeOnly }) => !typeOnly)
      .map(({ specifier }) => (/^\.{1,2}\//.test(specifier) ? resolveFrom(file, specifier) : packageOf(specifier))),
  );
}

/** What `entry` evaluates, each with the chain of imports that reaches it from `entry`. */
function reached(entry: string): Map<string, string[]> {
  const chains = new Map<string, string[]>([[entry, [entry]]]);
  const queue = [entry];
  for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
    for (const next of edges.get(node) ?? []) {
      if (chains.has(next)) continue;
      chains.set(next, [...chains.get(node)!, next]);
      queue.push(next);
    }
  }
  return chains;
}

const short = (chain: readonly string[]) => chain.map((node) => node.replace('/src/', '')).join(' -> ');

describe('what a Worker evaluates at startup (src/lib.ts and its static imports)', () => {
  const atStartup = reached('/src/lib.ts');

  it('takes in none of the packages a single AUTH mode uses', () => {
    const found = DEFERRED_PACKAGES.filter((name) => atStartup.has(name)).map((name) => short(atStartup.get(name)!));
    expect(found, `evaluated at every startup, whatever AUTH is:\n${found.join('\n')}\n`).toEqual([]);
  });

  it('takes in neither the authorization server nor the JWT key set: each is imported where its mode needs it', () => {
    const found = DEFERRED_MODULES.filter((file) => atStartup.has(file)).map((file) => short(atStartup.get(file)!));
    expect(found).toEqual([]);
  });

  it('reads what it checks: the Worker, the session object and the SDK are there, and each deferred module holds its packages', () => {
    expect(atStartup.has('/src/edge/worker.ts')).toBe(true);
    expect(atStartup.has('/src/session/session-object.ts')).toBe(true);
    expect(atStartup.has('@modelcontextprotocol/server')).toBe(true);
    const oauth = reached('/src/auth/oauth-server.ts');
    expect(['@cloudflare/workers-oauth-provider', 'oauth4webapi', 'jose'].filter((name) => oauth.has(name))).toHaveLength(3);
    expect(reached('/src/auth/jwt-keys.ts').has('jose')).toBe(true);
  });
});

describe('the reading of value imports', () => {
  it('takes packages and relative modules, and leaves out what names types alone', () => {
    const text = [
      "import { a } from 'jose';",
      "import type { B } from 'oauth4webapi';",
      "import { type C } from '@cloudflare/workers-oauth-provider/dist/x.js';",
      "export type { D } from './d.ts';",
      "export { e } from '../e.ts';",
      "const f = await import('./f.ts');",
    ].join('\n');
    const found = moduleImports(text).filter(({ typeOnly }) => !typeOnly);
    expect(found.map(({ specifier }) => specifier)).toEqual(['jose', '@cloudflare/workers-oauth-provider/dist/x.js', '../e.ts']);
    expect(packageOf('@cloudflare/workers-oauth-provider/dist/x.js')).toBe('@cloudflare/workers-oauth-provider');
  });
});
