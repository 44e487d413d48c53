import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [
    cloudflareTest({
      main: './src/index.ts',
      wrangler: { configPath: './wrangler.toml' },
    }),
  ],
  test: {
    include: ['test/**/*.test.ts'],
    // The first request of a file pays for loading the SDK into workerd (~4 s on 2 cores).
    testTimeout: 20_000,
    // The Worker's one-line-per-request log is for `wrangler tail`, not for test output.
    onConsoleLog: (log) => !log.includes('"msg":"mcp.request"'),
  },
});
