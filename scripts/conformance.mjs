// Runs the MCP conformance suite (the independent judge of protocol behaviour), the official
// Node client and a raw-HTTP walk of the resume decision table against `wrangler dev` on
// loopback. Fails on any FAILURE or WARNING check — the suite's summary line hides warnings,
// so every checks.json is read.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withDevServer } from './dev-server.mjs';
import { checkWithSdkClient } from './sdk-client-check.mjs';
import { walkResumeTable } from './walk-resume-table.mjs';

const port = Number(process.env.CONFORMANCE_PORT ?? 8797);
const MUST_SUCCEED = ['server-sse-priming-event', 'server-sse-retry-field', 'server-sse-disconnect-resume'];

await withDevServer(port, async (url) => {
  const out = mkdtempSync(join(tmpdir(), 'conformance-'));
  const run = spawnSync('npx', ['conformance', 'server', '--url', url, '--suite', 'all', '-o', out], {
    stdio: 'inherit',
    timeout: 300_000,
  });
  if (run.error) throw run.error;

  const problems = [];
  let checks = 0;
  for (const scenario of readdirSync(out)) {
    const results = JSON.parse(readFileSync(join(out, scenario, 'checks.json'), 'utf8'));
    for (const check of results) {
      checks++;
      if (check.status === 'FAILURE' || check.status === 'WARNING') {
        problems.push(`${scenario}: ${check.id} ${check.status} ${check.errorMessage ?? ''}`);
      }
      if (MUST_SUCCEED.includes(check.id) && check.status !== 'SUCCESS') {
        problems.push(`${scenario}: ${check.id} must be SUCCESS, was ${check.status}`);
      }
    }
  }
  // Directories are named `server-<scenario>-<timestamp>` (the scenario's own name starts with server- too).
  const pollingDir = readdirSync(out).find((name) => name.startsWith('server-server-sse-polling-'));
  const polling = pollingDir === undefined ? [] : JSON.parse(readFileSync(join(out, pollingDir, 'checks.json'), 'utf8'));
  for (const id of MUST_SUCCEED) {
    if (!polling.some((check) => check.id === id)) problems.push(`server-sse-polling: ${id} missing`);
  }
  console.log(`conformance: ${checks} checks read, ${problems.length} failures or warnings`);
  for (const problem of problems) console.log(`  ${problem}`);
  if (problems.length > 0 || run.status !== 0) process.exit(1);

  await checkWithSdkClient(url);
  if (!(await walkResumeTable(url))) process.exit(1);
});
