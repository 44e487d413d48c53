// What scripts/ci/oidc-e2e.mjs (forms posted by hand) and scripts/ci/oidc-browser.mjs (headless
// Chromium) share: a real OpenID provider (oidc-provider, scripts/ci/oidc-provider.mjs) on a free
// 127.0.0.1 port and `npm run dev -- --env oidc` told its issuer, a client secret and an admin
// token made for this run (never written down), every process stopped by `cleanUp`; and the
// official SDK's OAuth client provider (DCR, or CIMD given a document's URL; PKCE) that records
// where it would send the user.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killGroup, portInUse, waitUntilReady } from '../support/dev-server.mjs';
import { startProvider } from './oidc-provider.mjs';

export { oauthClient } from './oauth-client.mjs';

const CLIENT_ID = 'mcp-edge-sessions-dev'; // as in wrangler.toml's [env.oidc]

/** `ok` lines and `NOT` lines; `failed()` is whether any was NOT. */
export function checker() {
  let failed = false;
  const check = (ok, line) => {
    console.log(`${ok ? 'ok ' : 'NOT'} ${line}`);
    if (!ok) failed = true;
  };
  return { check, failed: () => failed };
}

/**
 * The provider and the Worker on `port` (its MCP endpoint `url`), ready; `log` is the Worker's
 * output, `cleanUp` stops both and removes the Worker's state. Exits 1 if a port is taken.
 * `alsoPorts`: more ports whose Worker (scripts/ci/oidc-cimd.mjs) the provider takes as its client
 * too, with the same client secret (`clientSecret`).
 */
export async function startOidcStack({ port, name, portVariable, alsoPorts = [] }) {
  const url = new URL(`http://localhost:${port}/mcp`);
  for (const each of [port, ...alsoPorts]) {
    if (await portInUse(each)) {
      console.error(`port ${each} is in use: set ${portVariable}`);
      process.exit(1);
    }
  }
  const clientSecret = randomBytes(24).toString('base64url');
  const adminToken = randomBytes(24).toString('base64url');
  const state = mkdtempSync(join(tmpdir(), `${name}-`));
  const redirectUris = [port, ...alsoPorts].map((each) => `http://localhost:${each}/authorize/callback`);
  const idp = await startProvider({ clientId: CLIENT_ID, clientSecret, redirectUris });
  const vars = { MCP_RESOURCE: url.href, OIDC_ISSUER: idp.issuer, OIDC_CLIENT_SECRET: clientSecret, ADMIN_TOKEN: adminToken };
  const dev = spawn(
    'npm',
    [
      'run',
      'dev',
      '--',
      '--env',
      'oidc',
      '--port',
      String(port),
      '--persist-to',
      state,
      ...Object.entries(vars).flatMap(([key, value]) => ['--var', `${key}:${value}`]),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  const log = [];
  dev.stdout.on('data', (chunk) => log.push(String(chunk)));
  dev.stderr.on('data', (chunk) => log.push(String(chunk)));
  const cleanUp = async () => {
    await killGroup(dev, 'SIGTERM').catch(() => killGroup(dev, 'SIGKILL').catch(() => {}));
    await idp.close();
    rmSync(state, { recursive: true, force: true });
  };
  const ready = () => waitUntilReady(url.href, dev);
  return { url, idp, clientSecret, adminToken, log, cleanUp, ready };
}

export async function countdown(client) {
  const progress = [];
  const result = await client.callTool(
    { name: 'countdown', arguments: { from: 2, interval_ms: 20 } },
    { onprogress: ({ progress: step }) => progress.push(step) },
  );
  return `progress ${JSON.stringify(progress)}, "${result.content?.[0]?.text}"`;
}
