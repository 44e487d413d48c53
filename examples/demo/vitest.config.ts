import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [cloudflareTest({ main: './src/index.ts', wrangler: { configPath: '../../wrangler.toml' } })],
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    // The Worker's one line per request is for `wrangler tail`, not for test output.
    onConsoleLog: (log: string) => !log.includes('"msg":"mcp.request"'),
  },
});
