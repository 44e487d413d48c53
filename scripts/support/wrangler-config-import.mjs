/**
 * For vitest.config.ts: a Vite plugin by which a test imports a wrangler config as wrangler itself
 * reads it (`import config from '…/wrangler.toml?wrangler'`, or `import.meta.glob` with `query:
 * '?wrangler'`). Tests run in workerd, which can neither read the repository's files nor run
 * wrangler; the import is resolved here, in vitest's Node process, by wrangler's own parser and
 * normalisation (the pinned wrangler's `experimental_readRawConfig` and `unstable_readConfig`), so
 * a test sees what `wrangler deploy` would use, for the top level and each `[env.*]`, rather than
 * what a parser of ours would make of the file. Used by test/deploy/wrangler-configs.test.ts.
 *
 * The module's default export: { raw, environments, error }. `raw` is the file as parsed;
 * `environments` maps '' (the top level) and each environment's name to its normalised
 * `{ name, durableObjects, exports, migrations }`; `error` is wrangler's validation error (the
 * text `wrangler deploy` would print) when it refuses the file, with `environments` then empty.
 */

const QUERY = '?wrangler';

export function wranglerConfigImport() {
  return {
    name: 'mcp-edge-sessions:wrangler-config',
    enforce: 'pre',
    async load(id) {
      if (!id.endsWith(QUERY)) return null;
      const path = id.slice(0, -QUERY.length);
      this.addWatchFile(path);
      // Loaded only when a test asks: wrangler is large, and most test runs never need it.
      const { experimental_readRawConfig, unstable_readConfig } = await import('wrangler');
      const { rawConfig } = experimental_readRawConfig({ config: path });
      const environments = {};
      let error;
      try {
        for (const env of ['', ...Object.keys(rawConfig.env ?? {})]) {
          const config = unstable_readConfig({ config: path, env: env === '' ? undefined : env }, { hideWarnings: true });
          environments[env] = {
            name: config.name,
            durableObjects: config.durable_objects.bindings,
            exports: config.exports,
            migrations: config.migrations,
          };
        }
      } catch (thrown) {
        error = thrown instanceof Error ? thrown.message : String(thrown);
      }
      return `export default ${JSON.stringify({ raw: rawConfig, environments: error === undefined ? environments : {}, error })};`;
    },
  };
}
