/**
 * Every wrangler config in the repository (the demo's at the root, the test fixture's, the
 * benchmark peers'), as wrangler itself reads it (scripts/support/wrangler-config-import.mjs: its parser
 * and its normalisation, which decides what an environment inherits): each Durable Object class a
 * Worker binds of its own (a binding with `script_name` is another Worker's class) has a live
 * `exports` entry with SQLite storage, in every environment, and no config keeps the older
 * `[[migrations]]`, which `exports` excludes. Why `exports`: docs/operations.md, "Deploying and
 * upgrading". A project `init` writes is checked in test/init/project-files.test.ts.
 */
import { describe, expect, it } from 'vitest';

interface Binding {
  name: string;
  class_name: string;
  script_name?: string;
}
interface Environment {
  name: string;
  durableObjects: Binding[];
  exports: Record<string, { type?: string; state?: string; storage?: string }>;
  migrations: unknown[];
}
interface WranglerView {
  raw: Record<string, unknown> & { env?: Record<string, Record<string, unknown>> };
  environments: Record<string, Environment>;
  error?: string;
}

const configs = import.meta.glob<WranglerView>('/**/wrangler.toml', { query: '?wrangler', import: 'default', eager: true });

/** The classes an environment binds of its own without a live `exports` entry that gives them SQLite. */
const withoutSqliteExport = ({ durableObjects, exports }: Environment) =>
  durableObjects
    .filter((binding) => binding.script_name === undefined)
    .map((binding) => binding.class_name)
    .filter((name) => {
      const entry = exports[name];
      const live = entry?.state === undefined || entry.state === 'created';
      return !(entry?.type === 'durable-object' && live && entry.storage === 'sqlite');
    });

describe('wrangler configs', () => {
  it('finds every config in the repository (a new one is listed here too)', () => {
    expect(Object.keys(configs).sort()).toEqual([
      '/bench/peers/durable-floor/wrangler.toml',
      '/bench/peers/events-floor/wrangler.toml',
      '/bench/peers/floor/wrangler.toml',
      '/bench/peers/mcpagent/wrangler.toml',
      '/bench/peers/modern-floor/wrangler.toml',
      '/bench/peers/ours/wrangler.toml',
      '/bench/peers/sdk-floor/wrangler.toml',
      '/bench/peers/startup-floor/wrangler.toml',
      '/test/fixture-server/wrangler.toml',
      '/test/misconfigured/wrangler.toml',
      '/wrangler.toml',
    ]);
  });

  it('reads the root config’s environments, each a Worker of its own (its exports inherited: below)', () => {
    const names = Object.values(configs['/wrangler.toml']!.environments).map((environment) => environment.name);
    expect(names).toEqual(['mcp-edge-sessions-demo', 'mcp-edge-sessions-demo-oauth', 'mcp-edge-sessions-demo-oidc']);
  });

  /** The misconfigured project's config lacks SQLite on purpose (test/misconfigured/): checked below for exactly that. */
  const MISCONFIGURED = '/test/misconfigured/wrangler.toml';

  it.each(Object.entries(configs).filter(([path]) => path !== MISCONFIGURED))(
    '%s: every bound class is exported with SQLite storage, in every environment; no migrations',
    (_, config) => {
      expect(config.error).toBeUndefined();
      // `[[migrations]]` nowhere, at the top level or in an environment.
      expect(Object.keys(config.raw)).not.toContain('migrations');
      for (const env of Object.values(config.raw.env ?? {})) expect(Object.keys(env)).not.toContain('migrations');
      for (const [name, environment] of Object.entries(config.environments)) {
        expect(withoutSqliteExport(environment), `environment '${name}'`).toEqual([]);
        expect(environment.migrations, `environment '${name}'`).toEqual([]);
      }
    },
  );

  it('the misconfigured project lacks SQLite exactly where its tests need it to, and has no migrations', () => {
    const config = configs[MISCONFIGURED]!;
    expect(Object.keys(config.raw)).not.toContain('migrations');
    const [environment] = Object.values(config.environments);
    expect(withoutSqliteExport(environment!).sort()).toEqual([
      'KvBus',
      'KvEvents',
      'KvRegistry',
      'KvSession',
      'KvTasks',
      'UndeclaredTasks',
    ]);
  });
});
