// The official TypeScript client through the whole AUTH=oauth flow against `npm run dev --
// --env oauth` (the example behind its embedded authorization server), on loopback, every wait
// bounded: discovery from the 401, dynamic registration, PKCE, the demo's consent page (this
// script reads the form and approves it, as a user would), the token; a session and a tool call
// with progress; a refresh (the access token is spoiled, the client refreshes on the 401 and
// goes on in the same session); a stream cut mid-call and resumed with its cursor and a token; the
// refresh token revoked (RFC 7009) mid-call: the call ends `grant_revoked`, the session is gone.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { killGroup, waitUntilReady } from '../support/dev-server.mjs';
import { oauthClient } from './oauth-client.mjs';

const port = Number(process.env.OAUTH_E2E_PORT ?? 8800);
const url = new URL(`http://localhost:${port}/mcp`);
const REDIRECT = 'http://127.0.0.1:9/callback'; // never listened on: the script reads the redirect's Location
const state = mkdtempSync(join(tmpdir(), 'oauth-e2e-'));

const store = oauthClient('oauth-e2e', { redirect: REDIRECT });
const { provider } = store;

/** The user at the consent page: reads the form, signs in as `e2e`, allows; returns the redirect's query. */
async function consent(where) {
  const page = await fetch(where, { redirect: 'manual', signal: AbortSignal.timeout(10_000) });
  if (page.status !== 200) throw new Error(`consent page: ${page.status}`);
  const handle = /name="handle" value="([^"]+)"/.exec(await page.text())?.[1];
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0];
  const approved = await fetch(new URL('/authorize', where), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
    body: new URLSearchParams({ handle, user: 'e2e', decision: 'approve' }),
    signal: AbortSignal.timeout(10_000),
  });
  const location = approved.headers.get('location');
  if (approved.status !== 302 || location === null) throw new Error(`consent: ${approved.status}`);
  return new URL(location).searchParams;
}

const dev = spawn(
  'npm',
  ['run', 'dev', '--', '--env', 'oauth', '--port', String(port), '--persist-to', state, '--var', `MCP_RESOURCE:${url.href}`],
  {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  },
);
dev.stderr.on('data', () => {});
let failed = false;
const check = (ok, line) => {
  console.log(`${ok ? 'ok ' : 'NOT'} ${line}`);
  if (!ok) failed = true;
};
try {
  await waitUntilReady(url.href, dev);
  // 1. The first connect meets the 401: discovery, registration, and the authorization URL.
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  const refused = await new Client({ name: 'oauth-e2e', version: '1' }).connect(first).then(
    () => undefined,
    (error) => error,
  );
  check(
    refused instanceof UnauthorizedError && store.authorizationUrl !== undefined,
    `401 → registered client ${store.client?.client_id?.slice(0, 8)}…, sent to ${store.authorizationUrl?.pathname}`,
  );
  check(
    store.authorizationUrl?.searchParams.get('code_challenge_method') === 'S256' &&
      store.authorizationUrl?.searchParams.get('resource') === url.href,
    'PKCE S256, resource = this endpoint',
  );
  await first.finishAuth(await consent(store.authorizationUrl));
  check(
    typeof store.tokens?.access_token === 'string' && typeof store.tokens?.refresh_token === 'string',
    'code exchanged for an access and a refresh token',
  );

  // 2. A session, and a tool call with progress.
  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  const client = new Client({ name: 'oauth-e2e', version: '1' });
  await client.connect(transport);
  const progress = [];
  const counted = await client.callTool(
    { name: 'countdown', arguments: { from: 3, interval_ms: 50 } },
    { onprogress: ({ progress: step }) => progress.push(step) },
  );
  check(
    JSON.stringify(progress) === '[1,2,3]' && counted.content?.[0]?.text === 'liftoff after 3',
    `countdown: progress ${JSON.stringify(progress)}, "${counted.content?.[0]?.text}"`,
  );

  // 3. Refresh: a spoiled access token is refused; the client refreshes and the session goes on.
  const session = transport.sessionId;
  const before = store.tokens.access_token;
  store.tokens = { ...store.tokens, access_token: 'spoiled' };
  const noted = await client.callTool({ name: 'note', arguments: { text: 'after refresh' } });
  check(
    store.tokens.access_token !== 'spoiled' && store.tokens.access_token !== before && transport.sessionId === session,
    `refreshed on the 401; same session; note → "${noted.content?.[0]?.text}"`,
  );

  // 4. Resume: a call's stream cut after its second event, resumed from that cursor.
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    Authorization: `Bearer ${store.tokens.access_token}`,
    'Mcp-Session-Id': session,
    'MCP-Protocol-Version': '2025-11-25',
  };
  const call = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'cut',
      method: 'tools/call',
      params: { name: 'countdown', arguments: { from: 4, interval_ms: 100 }, _meta: { progressToken: 'cut' } },
    }),
    signal: AbortSignal.timeout(10_000),
  });
  const ids = [];
  const reader = call.body.getReader();
  let text = '';
  while (ids.length < 2) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
    ids.splice(0, ids.length, ...[...text.matchAll(/^id: (\S+)$/gm)].map((match) => match[1]));
  }
  await reader.cancel();
  const resumed = await fetch(url, {
    headers: { ...headers, Accept: 'text/event-stream', 'Last-Event-ID': ids[1] },
    signal: AbortSignal.timeout(10_000),
  });
  const rest = await resumed.text();
  check(
    resumed.headers.get('mcp-stream-resumed') === 'true' && rest.includes('liftoff after 4'),
    `resumed after ${ids[1]} with a token: the rest arrived, ending "liftoff after 4"`,
  );
  await client.close();

  // 5. Revocation: the client revokes its refresh token (RFC 7009) while a call runs; the call
  //    ends with grant_revoked, the old token is refused, and signed in again the session is gone.
  const revokedTransport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  const revokedClient = new Client({ name: 'oauth-e2e', version: '1' });
  await revokedClient.connect(revokedTransport);
  const revokedSession = revokedTransport.sessionId;
  let started;
  const firstStep = new Promise((resolve) => {
    started = resolve;
  });
  const running = revokedClient
    .callTool({ name: 'countdown', arguments: { from: 600, interval_ms: 100 } }, { onprogress: () => started(), timeout: 20_000 })
    .then(
      () => undefined,
      (error) => error,
    );
  await firstStep;
  const oldToken = store.tokens.access_token;
  const revocation = await fetch(new URL('/oauth/token', url), {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: store.tokens.refresh_token, token_type_hint: 'refresh_token', client_id: store.client.client_id }),
    signal: AbortSignal.timeout(10_000),
  });
  const ended = await running;
  check(
    revocation.status === 200 && ended?.data?.reason === 'grant_revoked',
    `refresh token revoked (${revocation.status}): the running call ended with ${ended?.code} ${ended?.data?.reason}`,
  );
  await revokedClient.close().catch(() => {});
  const withOld = await fetch(url, {
    method: 'POST',
    headers: { ...headers, Authorization: `Bearer ${oldToken}`, 'Mcp-Session-Id': revokedSession },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'old', method: 'tools/list' }),
    signal: AbortSignal.timeout(10_000),
  });
  // Signed in again (the same user): the session the revoked grant held is gone.
  delete store.tokens;
  store.authorizationUrl = undefined;
  const again = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await new Client({ name: 'oauth-e2e', version: '1' }).connect(again).catch(() => {});
  await again.finishAuth(await consent(store.authorizationUrl));
  const afterwards = await fetch(url, {
    method: 'POST',
    headers: { ...headers, Authorization: `Bearer ${store.tokens.access_token}`, 'Mcp-Session-Id': revokedSession },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'again', method: 'tools/list' }),
    signal: AbortSignal.timeout(10_000),
  });
  check(
    withOld.status === 401 && afterwards.status === 404,
    `the old token: ${withOld.status}; signed in again, the session: ${afterwards.status}`,
  );
} catch (error) {
  console.error(String(error?.stack ?? error));
  failed = true;
} finally {
  await killGroup(dev, 'SIGTERM').catch(() => {});
  rmSync(state, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
