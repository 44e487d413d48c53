import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';
import { repositoryFolders } from './scripts/support/repository-folders.mjs';
import { dropExpectedWorkerdLines } from './scripts/support/test-quiet-workerd.mjs';
import { startWebhookReceiver } from './scripts/support/webhook-test-receiver.mjs';
import { wranglerConfigImport } from './scripts/support/wrangler-config-import.mjs';
import { TEST_METRICS_KEY } from './test/fixture-server/metrics-recorder.ts';
import { TEST_ADMIN_TOKEN, TEST_ISSUER, TEST_PUBLIC_JWKS } from './test/support/tokens.ts';

// The one workerd line a test causes on purpose that `verbose: false` (below) can still let
// through, now and then: dropped here, every other line printed as it comes (see the script).
dropExpectedWorkerdLines();

const worker = (vars: Record<string, string> = {}, miniflare: Record<string, unknown> = {}) =>
  cloudflareTest({
    main: './test/fixture-server/index.ts',
    // workerd without --verbose (the plugin passes it unless told otherwise): its INFO lines are
    // the expected side of what tests do on purpose, each printed with a `stack:` of addresses -
    // the object aborted by abortAllDurableObjects() (eviction, schema upgrade), a client that
    // leaves mid-stream (`pump canceled`, `read end of pipe was aborted`: slow client, fuzz, a
    // body cut off at 64 KiB), an unreachable metadata document (`Connection refused`), the
    // fuzz's non-ASCII Mcp-Session-Id. Errors and warnings workerd logs still show, and a
    // failing test prints its own error either way.
    verbose: false,
    wrangler: { configPath: './test/fixture-server/wrangler.toml' },
    miniflare: { bindings: vars, ...miniflare },
  });

// The webhook tests' receiver on 127.0.0.1 (scripts/support/webhook-test-receiver.mjs): started
// with the run, in this process, so its origin can be a binding of the `webhooks` project (the
// only origin WEBHOOK_DEV_ORIGINS lets a subscription POST to over http). It holds no process open.
const webhookReceiver = await startWebhookReceiver();
webhookReceiver.server.unref();

const shared = {
  // The first request of a file pays for loading the SDK into workerd (~4 s on 2 cores).
  testTimeout: 20_000,
};

export default defineConfig({
  test: {
    // The Worker's one-line-per-request log is for `wrangler tail`, not for test output (a
    // root-only option: vitest ignores it inside a project).
    onConsoleLog: (log: string) => !log.includes('"msg":"mcp.request"'),
    // Quiet on success, whole on failure: `minimal` prints each failed test with its error, then
    // the summary; `passed-only` prints the console output of failed tests only (a passing run
    // hides the expected log lines: idle expiry, the injected SQLITE_FULL). `--reporter=default`
    // lists every file again. workerd's own output is not vitest's to silence: see `verbose`
    // above.
    reporters: ['minimal'],
    silent: 'passed-only',
    // A file per core at once. vitest's default (cores - 1) ran one file at a time on 2 cores:
    // 180 s with the cores a third busy, a file mostly waiting (timers, TTLs, heartbeats, its
    // workerd starting). Two at once: ~110 s; three gained little more (~92 s) for more
    // contention on the timed tests. Set once for every project (projects with different
    // maxWorkers would each need their own sequence.groupOrder).
    maxWorkers: '100%',
    // No performance hints after the run (vitest otherwise suggests `isolate: false` every time).
    experimental: { diagnostics: false },
    projects: [
      {
        // `…/wrangler.toml?wrangler`: a config as wrangler reads it (test/deploy/);
        // `/CONTRIBUTING.md?folders`: the file with the repository's folders (test/repository/).
        plugins: [worker(), wranglerConfigImport(), repositoryFolders()],
        test: {
          ...shared,
          name: 'default',
          include: ['test/**/*.test.ts'],
          exclude: [
            'test/configured/**',
            'test/bounds/**',
            'test/buffered/**',
            'test/auth/**',
            'test/oauth/**',
            'test/oauth-scopes/**',
            'test/principals/**',
            'test/scale/**',
            'test/metrics/recorded-run.test.ts',
            'test/misconfigured/**',
            'test/webhooks/**',
            'test/placement/**',
          ],
        },
      },
      {
        // MCP_METRICS bound to a recorder the test reads (test/fixture-server/metrics-recorder.ts),
        // with the key its principal index needs (a secret, `wrangler secret put METRICS_KEY`, deployed).
        plugins: [worker({ METRICS_RECORDER: 'on', METRICS_KEY: TEST_METRICS_KEY })],
        test: { ...shared, name: 'metrics', include: ['test/metrics/recorded-run.test.ts'] },
      },
      {
        // Durable Object classes without SQLite (declared `storage = "legacy-kv"` in `[exports]`, or
        // not declared), beside the fixture's: a test binds one where the Worker expects its class.
        plugins: [
          cloudflareTest({
            main: './test/misconfigured/index.ts',
            verbose: false,
            wrangler: { configPath: './test/misconfigured/wrangler.toml' },
          }),
        ],
        test: { ...shared, name: 'misconfigured', include: ['test/misconfigured/**/*.test.ts'] },
      },
      {
        // The optional behaviours switched on: JSON responses, fast heartbeats, connection age.
        plugins: [worker({ RESPONSE_MODE: 'json', HEARTBEAT_MS: '50', MAX_CONNECTION_AGE_MS: '400' })],
        test: { ...shared, name: 'configured', include: ['test/configured/**/*.test.ts'] },
      },
      {
        // Tight bounds, so expiry, pruning and a task's purge happen within a test, and a client reaches its event streams' bound.
        plugins: [
          worker({
            SESSION_TTL_MS: '1000',
            MAX_SESSION_EVENTS: '50',
            MAX_SESSION_REQUESTS: '20',
            MAX_RUNNING_CALLS: '3',
            TASK_TTL_MS: '1000',
            TASK_MAX_EVENTS: '8',
            // Two MCP Events push streams per client address (AUTH=none), so a third is refused within a test.
            MAX_EVENT_STREAMS_PER_PRINCIPAL: '2',
          }),
        ],
        test: { ...shared, name: 'bounds', include: ['test/bounds/**/*.test.ts'] },
      },
      {
        // AUTH=jwt: every request needs a token signed by the tests' key (test/support/tokens.ts).
        plugins: [
          worker(
            {
              AUTH: 'jwt',
              AUTH_ISSUER: TEST_ISSUER,
              AUTH_JWKS: JSON.stringify(TEST_PUBLIC_JWKS),
              AUTH_SCOPES: 'mcp',
              // Small shares of a small isolate, so one principal reaches its bound within a test.
              MAX_LISTEN_STREAMS: '8',
              MAX_LISTENS_PER_PRINCIPAL: '3',
              MAX_STREAMS_PER_PRINCIPAL: '3',
            },
            // 60 requests a minute per principal: a flood is refused within a test.
            { ratelimits: { MCP_RATE_LIMIT: { namespace_id: '1001', simple: { limit: 60, period: 60 } } } },
          ),
        ],
        test: { ...shared, name: 'auth', include: ['test/auth/**/*.test.ts'] },
      },
      {
        // AUTH=jwt with small bounds per principal (event streams too), and the operator's routes (test/support/principals.ts).
        plugins: [
          worker({
            AUTH: 'jwt',
            AUTH_ISSUER: TEST_ISSUER,
            AUTH_JWKS: JSON.stringify(TEST_PUBLIC_JWKS),
            AUTH_SCOPES: 'mcp',
            MAX_SESSIONS_PER_PRINCIPAL: '3',
            MAX_TASKS_PER_PRINCIPAL: '2',
            MAX_EVENT_STREAMS_PER_PRINCIPAL: '2',
            ADMIN_TOKEN: TEST_ADMIN_TOKEN,
          }),
        ],
        test: { ...shared, name: 'principals', include: ['test/principals/**/*.test.ts'] },
      },
      {
        // AUTH=oauth: the embedded authorization server in front of the endpoint.
        plugins: [
          worker(
            { AUTH: 'oauth', MCP_RESOURCE: 'http://localhost/mcp', AUTH_SCOPES: 'mcp', ADMIN_TOKEN: TEST_ADMIN_TOKEN },
            // 60 a minute per client address: a flood of registrations or authorizations is refused within a test.
            { ratelimits: { MCP_RATE_LIMIT: { namespace_id: '1001', simple: { limit: 60, period: 60 } } } },
          ),
        ],
        test: { ...shared, name: 'oauth', include: ['test/oauth/**/*.test.ts'] },
      },
      {
        // AUTH=oauth with two required scopes: a token narrowed on refresh holds only what it kept.
        plugins: [
          worker(
            { AUTH: 'oauth', MCP_RESOURCE: 'http://localhost/mcp', AUTH_SCOPES: 'mcp files:read' },
            { ratelimits: { MCP_RATE_LIMIT: { namespace_id: '1001', simple: { limit: 60, period: 60 } } } },
          ),
        ],
        test: { ...shared, name: 'oauth-scopes', include: ['test/oauth-scopes/**/*.test.ts'] },
      },
      {
        // A small connection buffer, so a slow client's connection falls behind and reads the
        // log; the listen bus over three shards; an isolate of 8 listens, 6 per client address.
        plugins: [worker({ CONNECTION_BUFFER_BYTES: '8192', BUS_SHARDS: '3', MAX_LISTEN_STREAMS: '8', MAX_LISTENS_PER_PRINCIPAL: '6' })],
        test: { ...shared, name: 'buffered', include: ['test/buffered/**/*.test.ts'] },
      },
      {
        // MCP Events webhooks (AUTH=jwt: only an authenticated principal subscribes), delivered to
        // the receiver above under WEBHOOK_DEV_ORIGINS, with a retry policy and TTLs short enough
        // for a test to see a retry, a give-up, a suspension and an expiry. MCP_METRICS bound to the
        // recorder (as in `metrics`): test/webhooks/metrics.test.ts reads the webhook points.
        plugins: [
          worker({
            AUTH: 'jwt',
            AUTH_ISSUER: TEST_ISSUER,
            AUTH_JWKS: JSON.stringify(TEST_PUBLIC_JWKS),
            AUTH_SCOPES: 'mcp',
            ADMIN_TOKEN: TEST_ADMIN_TOKEN,
            MAX_WEBHOOKS_PER_PRINCIPAL: '3',
            WEBHOOK_RECEIVER: webhookReceiver.origin,
            WEBHOOK_DEV_ORIGINS: webhookReceiver.origin,
            WEBHOOK_MIN_TTL_MS: '1000',
            WEBHOOK_RETRY_FIRST_MS: '200',
            WEBHOOK_RETRY_MAX_DELAY_MS: '1000',
            WEBHOOK_RETRY_WINDOW_MS: '10000',
            WEBHOOK_SUSPEND_AFTER_FAILURES: '6',
            WEBHOOK_SUSPEND_AFTER_MS: '1500',
            WEBHOOK_ATTEMPT_TIMEOUT_MS: '1000',
            WEBHOOK_SECRET_GRACE_MS: '5000',
            METRICS_RECORDER: 'on',
            METRICS_KEY: TEST_METRICS_KEY,
          }),
        ],
        test: { ...shared, name: 'webhooks', include: ['test/webhooks/**/*.test.ts'] },
      },
      {
        // Every object placed: DO_JURISDICTION and DO_LOCATION_HINT (AUTH=jwt, so principals have
        // registries; webhooks delivered to the receiver above). A local workerd has no
        // jurisdictions: the test stands one in (test/support/jurisdiction-stand-in.ts).
        plugins: [
          worker({
            DO_JURISDICTION: 'eu',
            DO_LOCATION_HINT: 'weur',
            AUTH: 'jwt',
            AUTH_ISSUER: TEST_ISSUER,
            AUTH_JWKS: JSON.stringify(TEST_PUBLIC_JWKS),
            AUTH_SCOPES: 'mcp',
            ADMIN_TOKEN: TEST_ADMIN_TOKEN,
            WEBHOOK_RECEIVER: webhookReceiver.origin,
            WEBHOOK_DEV_ORIGINS: webhookReceiver.origin,
          }),
        ],
        test: { ...shared, name: 'placement', include: ['test/placement/**/*.test.ts'] },
      },
      // Scale runs, not part of npm test (`npm run bus-scale` sets MCP_SCALE): the listen bus over 8 shards.
      ...(process.env.MCP_SCALE === '1'
        ? [
            {
              // One client opens every stream: no share of the isolate's listens per address.
              plugins: [worker({ BUS_SHARDS: '8', MAX_LISTEN_STREAMS: '4096', MAX_LISTENS_PER_PRINCIPAL: '0' })],
              test: { ...shared, name: 'scale', include: ['test/scale/**/*.test.ts'] },
            },
          ]
        : []),
    ],
  },
});
