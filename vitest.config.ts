import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';

const worker = (vars: Record<string, string> = {}) =>
  cloudflareTest({
    main: './src/index.ts',
    wrangler: { configPath: './wrangler.toml' },
    miniflare: { bindings: vars },
  });

const shared = {
  // The first request of a file pays for loading the SDK into workerd (~4 s on 2 cores).
  testTimeout: 20_000,
  // The Worker's one-line-per-request log is for `wrangler tail`, not for test output.
  onConsoleLog: (log: string) => !log.includes('"msg":"mcp.request"'),
};

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [worker()],
        test: { ...shared, name: 'default', include: ['test/**/*.test.ts'], exclude: ['test/json-mode/**'] },
      },
      {
        // The same Worker configured for JSON responses and fast heartbeats.
        plugins: [worker({ RESPONSE_MODE: 'json', HEARTBEAT_MS: '50' })],
        test: { ...shared, name: 'json-mode', include: ['test/json-mode/**/*.test.ts'] },
      },
    ],
  },
});
