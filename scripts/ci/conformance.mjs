// Runs the MCP conformance suite (the independent judge of protocol behaviour), the official
// Node client and a raw-HTTP walk of the resume decision table against `wrangler dev` on
// loopback, then the official v2 client in its three era modes and the clients of the agent
// frameworks (scripts/ci/agent-clients/, their own install) against the example. Two
// releases of the suite: 0.1.16 with every scenario (`--suite all`, pending ones included)
// and 0.2.0-alpha.12 with exactly what revisions 2025-11-25 and 2026-07-28 require. Fails on
// any FAILURE or WARNING check — the suite's summary line hides warnings, so every
// checks.json is read.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { withDevServer } from '../support/dev-server.mjs';
import { agentClients, installAgentClients } from './agent-clients/clients.mjs';
import { clientMatrix } from './client-matrix.mjs';
import { moreClients } from './client-matrix-more.mjs';
import { checkWithSdkClient } from './sdk-client-check.mjs';
import { walkResumeTable } from './walk-resume-table.mjs';

const port = Number(process.env.CONFORMANCE_PORT ?? 8797);
const require = createRequire(import.meta.url);
/** The suite's CLI inside an installed package (both releases install the same `conformance` bin name). */
const cli = (pkg) => join(dirname(require.resolve(`${pkg}/package.json`)), 'dist', 'index.js');

// What makes a session resumable: these must pass outright, not be skipped.
const MUST_SUCCEED = ['server-sse-priming-event', 'server-sse-retry-field', 'server-sse-disconnect-resume'];

// The Tasks extension (SEP-2663): all ten must be among the scenarios run.
const TASK_SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-status-notifications',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
];

const RUNS = [
  {
    label: 'conformance 0.1.16 --suite all',
    cli: cli('@modelcontextprotocol/conformance'),
    args: ['--suite', 'all'],
    mustSucceed: MUST_SUCCEED,
  },
  {
    label: 'conformance 0.2.0-alpha.12 --requirements 2025-11-25',
    cli: cli('conformance-0.2'),
    args: ['--requirements', '2025-11-25'],
    mustSucceed: MUST_SUCCEED,
  },
  // The stateless revision, served beside the sessions, with the Tasks extension's scenarios.
  {
    label: 'conformance 0.2.0-alpha.12 --requirements 2026-07-28',
    cli: cli('conformance-0.2'),
    args: ['--requirements', '2026-07-28'],
    mustRun: TASK_SCENARIOS,
  },
];
await withDevServer(port, async (url) => {
  let failed = false;
  for (const run of RUNS) {
    const problems = runSuite(run, url);
    if (problems.length > 0) failed = true;
  }
  if (failed) process.exit(1);
  await checkWithSdkClient(url);
  if (!(await walkResumeTable(url))) process.exit(1);
});

// The official v2 client in each era mode, the fork-safe transport, the v1 client, mcp-remote
// bridging a stdio client, and the agent frameworks' clients with MCP Inspector's CLI, against
// the example a user runs with `npm run dev`. The last have an install of their own, made first.
installAgentClients();
console.log('\n== client matrix (the demo: wrangler.toml)');
await withDevServer(
  port + 1,
  async (url) => {
    await clientMatrix(url);
    await moreClients(url);
    await agentClients(url);
  },
  { config: 'wrangler.toml' },
);

/** One release of the suite; returns every failure, warning and missing must-pass check. */
function runSuite({ label, cli, args, mustSucceed = [], mustRun = [] }, url) {
  const out = mkdtempSync(join(tmpdir(), 'conformance-'));
  console.log(`\n== ${label}`);
  const run = spawnSync(process.execPath, [cli, 'server', '--url', url, ...args, '-o', out], { stdio: 'inherit', timeout: 600_000 });
  if (run.error) throw run.error;

  const problems = [];
  let checks = 0;
  const scenarios = readdirSync(out);
  for (const scenario of scenarios) {
    const results = JSON.parse(readFileSync(join(out, scenario, 'checks.json'), 'utf8'));
    for (const check of results) {
      checks++;
      if (check.status === 'FAILURE' || check.status === 'WARNING') {
        problems.push(`${scenario}: ${check.id} ${check.status} ${check.errorMessage ?? ''}`);
      }
      if (mustSucceed.includes(check.id) && check.status !== 'SUCCESS') {
        problems.push(`${scenario}: ${check.id} must be SUCCESS, was ${check.status}`);
      }
    }
  }
  // Directories are named `server-<scenario>-<timestamp>` (the scenario's own name starts with server- too).
  const pollingDir = scenarios.find((name) => name.startsWith('server-server-sse-polling-'));
  const polling = pollingDir === undefined ? [] : JSON.parse(readFileSync(join(out, pollingDir, 'checks.json'), 'utf8'));
  for (const id of mustSucceed) {
    if (!polling.some((check) => check.id === id)) problems.push(`server-sse-polling: ${id} missing`);
  }
  for (const name of mustRun) {
    if (!scenarios.some((dir) => dir.startsWith(`server-${name}-`))) problems.push(`${name}: not run`);
  }
  if (run.status !== 0) problems.push(`the suite exited with ${run.status}`);
  console.log(`${label}: ${scenarios.length} scenarios, ${checks} checks read, ${problems.length} failures or warnings`);
  for (const problem of problems) console.log(`  ${problem}`);
  return problems;
}
