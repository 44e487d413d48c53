// The official TypeScript client through AUTH=oauth with SIGN_IN=oidc, against a REAL OpenID
// provider, every wait bounded and everything on loopback: `oidc-provider` (scripts/
// oidc-provider.mjs) on a free 127.0.0.1 port, and `npm run dev -- --env oidc` told its issuer
// and a client secret made for this run. No browser: a cookie jar per user walks the pages a
// browser would (our /authorize → the provider's login form, posted as `alice` with any
// password, and its consent → our /authorize/callback → our consent page, answered Allow), and
// hands the client its code. Then: a tool called in a session (2025-11-25) and in 2026-07-28;
// the session's principal, read from the admin route, is `oauth#<issuer>#<sub>`; a second user
// (`bob`) is another principal, and his request into alice's session gets the same 404, byte for
// byte, as one into a session that never was. Those clients register dynamically (DCR). Then
// CIMD: a client ID metadata document must be at an https URL on a public host (local ones are
// refused by design, docs/auth.md), so the same Worker is served by Miniflare with its outbound
// fetches answered for one reserved name, `cimd-client.example` (scripts/ci/oidc-cimd.mjs); alice's
// client names its document there as its `client_id`, never registers, signs in the same way and
// is the same principal.
import { randomBytes } from 'node:crypto';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { portInUse } from '../support/dev-server.mjs';
import { CIMD_HOST, startCimdWorker } from './oidc-cimd.mjs';
import { checker, countdown, oauthClient, startOidcStack } from './oidc-stack.mjs';

const TIMEOUT_MS = 240_000;
const REDIRECT = 'http://127.0.0.1:9/callback'; // never listened on: the script reads the redirect's Location
const { check, failed: anyFailed } = checker();
let failed = false;

/** A browser, as far as these pages need one: a cookie jar per host, redirects followed by hand. */
class Browser {
  jar = new Map();
  async fetch(target, init = {}) {
    const at = new URL(target);
    const cookies = this.jar.get(at.host) ?? new Map();
    const headers = new Headers(init.headers);
    if (cookies.size > 0) headers.set('Cookie', [...cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await fetch(at, { ...init, headers, redirect: 'manual', signal: AbortSignal.timeout(10_000) });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const name = pair.slice(0, pair.indexOf('=')).trim();
      const value = pair.slice(pair.indexOf('=') + 1).trim();
      const gone = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === '';
      if (gone) cookies.delete(name);
      else cookies.set(name, value);
    }
    this.jar.set(at.host, cookies);
    return response;
  }
  /** GET (or the given request), then each redirect, until a page or a redirect to the client's URI. */
  async follow(target, init) {
    let at = new URL(target);
    let response = await this.fetch(at, init);
    for (let hops = 0; response.status >= 300 && response.status < 400; hops++) {
      const next = new URL(response.headers.get('location'), at);
      if (next.href.startsWith(REDIRECT)) return { redirected: next };
      if (hops === 10) throw new Error(`too many redirects at ${at.href}`);
      at = next;
      response = await this.fetch(at);
    }
    return { page: await response.text(), status: response.status, at };
  }
}

const decode = (text) =>
  text.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (_, e) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'" })[e]);

/** The page's (first) form: its action and hidden fields. */
function formOf(page, at) {
  const form = /<form\b[^>]*>/i.exec(page)?.[0];
  if (form === undefined) throw new Error(`no form at ${at.href}: ${page.slice(0, 300)}`);
  const fields = {};
  for (const [input] of page.matchAll(/<input\b[^>]*>/gi)) {
    if (!/type="hidden"/i.test(input)) continue;
    fields[decode(/name="([^"]*)"/.exec(input)[1])] = decode(/value="([^"]*)"/.exec(input)?.[1] ?? '');
  }
  return { action: new URL(decode(/action="([^"]*)"/.exec(form)?.[1] ?? at.pathname), at), fields };
}

/**
 * The user `user` at the pages from `authorizationUrl` on: the provider's login (any password)
 * and consent, then ours (Allow). Returns the client's redirect's query, and the pages seen.
 */
async function signIn(browser, authorizationUrl, user) {
  const seen = [];
  let consent;
  let step = await browser.follow(authorizationUrl);
  for (let forms = 0; step.redirected === undefined; forms++) {
    if (step.status !== 200 || forms === 6) throw new Error(`${step.at.href}: ${step.status} ${step.page.slice(0, 300)}`);
    const { action, fields } = formOf(step.page, step.at);
    let answer;
    if (/name="login"/.test(step.page)) {
      seen.push(`${step.at.host} login`);
      answer = { ...fields, login: user, password: 'any password (devInteractions checks none)' };
    } else if (fields.handle !== undefined) {
      consent = step.page;
      seen.push(`${step.at.host} our consent${step.page.includes(`${user}@example.test`) ? ` (shows ${user}@example.test)` : ''}`);
      answer = { handle: fields.handle, decision: 'approve' };
    } else {
      seen.push(`${step.at.host} ${fields.prompt ?? 'form'}`);
      answer = fields;
    }
    step = await browser.follow(action, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(answer),
    });
  }
  return { params: step.redirected.searchParams, seen, consent };
}

/** `user` registers, signs in through the provider and consents; the client holds a token after. */
async function authorize(user) {
  const store = oauthClient(user, { redirect: REDIRECT, clientName: `oidc-e2e ${user}` });
  const first = new StreamableHTTPClientTransport(url, { authProvider: store.provider });
  const refused = await new Client({ name: `oidc-e2e-${user}`, version: '1' }).connect(first).then(
    () => undefined,
    (error) => error,
  );
  check(
    refused instanceof UnauthorizedError && store.authorizationUrl !== undefined && store.client?.client_id !== undefined,
    `${user}: 401 → registered by DCR as ${store.client?.client_id?.slice(0, 8)}…, sent to ${store.authorizationUrl?.pathname}`,
  );
  const { params, seen } = await signIn(new Browser(), store.authorizationUrl, user);
  check(
    seen.length === 3 && seen[0].endsWith('login') && seen[2].includes('our consent') && params.has('code'),
    `${user}: ${seen.join(' → ')} → the client's redirect with a code`,
  );
  await first.finishAuth(params);
  check(typeof store.tokens?.access_token === 'string', `${user}: code exchanged for an access token`);
  return store;
}

/**
 * alice's client by CIMD against the Worker `cimd` (scripts/ci/oidc-cimd.mjs): its `client_id` is
 * its document's URL, which the Worker fetches; it never registers. `registrations` counts the
 * client's requests to the registration endpoint (its own fetch, counted).
 */
async function authorizeByCimd(cimd, user) {
  const documentUrl = `https://${CIMD_HOST}/oidc-e2e/${user}/client.json`;
  const clientName = `oidc-e2e CIMD client of ${user}`;
  cimd.documents[new URL(documentUrl).pathname] = {
    client_id: documentUrl,
    client_name: clientName,
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  const store = oauthClient(user, { redirect: REDIRECT, clientName, clientMetadataUrl: documentUrl });
  store.at = cimd.url;
  store.registrations = 0;
  store.fetch = (target, init) => {
    const at = new URL(target instanceof Request ? target.url : target);
    if (at.origin === cimd.url.origin && at.pathname.startsWith('/oauth/register')) store.registrations++;
    return fetch(target, init);
  };
  const first = new StreamableHTTPClientTransport(cimd.url, { authProvider: store.provider, fetch: store.fetch });
  const refused = await new Client({ name: `oidc-e2e-cimd-${user}`, version: '1' }).connect(first).then(
    () => undefined,
    (error) => error,
  );
  const sentId = store.authorizationUrl?.searchParams.get('client_id');
  check(
    refused instanceof UnauthorizedError && sentId === documentUrl && store.client?.client_id === documentUrl,
    `${user} (CIMD): 401 → client_id ${sentId} (no registration), sent to ${store.authorizationUrl?.pathname}`,
  );
  const { params, seen, consent } = await signIn(new Browser(), store.authorizationUrl, user);
  check(
    seen.length === 3 && seen[0].endsWith('login') && seen[2].includes(`(shows ${user}@example.test)`) && params.has('code'),
    `${user} (CIMD): ${seen.join(' → ')} → the client's redirect with a code`,
  );
  check(consent?.includes(clientName) === true, `${user} (CIMD): our consent page names the client as its document does ("${clientName}")`);
  check(
    cimd.fetched.some((line) => line === `GET ${documentUrl}`),
    `${user} (CIMD): the Worker fetched the document (${cimd.fetched.length} fetch(es) of ${CIMD_HOST})`,
  );
  await first.finishAuth(params);
  check(typeof store.tokens?.access_token === 'string', `${user} (CIMD): code exchanged for an access token`);
  return store;
}

/** A connected client in `mode` (the SDK's versionNegotiation), with the user's token (at `store.at`, else `url`). */
async function connect(store, mode) {
  const transport = new StreamableHTTPClientTransport(store.at ?? url, { authProvider: store.provider, fetch: store.fetch });
  const client = new Client({ name: `oidc-e2e-${store.name}`, version: '1' }, { versionNegotiation: { mode } });
  await client.connect(transport);
  return { client, transport };
}

/** What the admin route (of the Worker at `at`) says the principal holds. */
async function holdings(principal, at = url) {
  const response = await fetch(new URL(`/admin/principals/${encodeURIComponent(principal)}`, at), {
    headers: { Authorization: `Bearer ${adminToken}` },
    signal: AbortSignal.timeout(10_000),
  });
  if (response.status !== 200) throw new Error(`admin route: ${response.status} ${await response.text()}`);
  return response.json();
}

/** A raw 2025-11-25 request into `session` with `token`: its status, content type and body. */
async function intoSession(token, session) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${token}`,
      'Mcp-Session-Id': session,
      'MCP-Protocol-Version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    signal: AbortSignal.timeout(10_000),
  });
  return `${response.status} ${response.headers.get('content-type')} ${await response.text()}`;
}

const cimdPort = Number(process.env.OIDC_E2E_CIMD_PORT ?? 8811);
const { url, idp, clientSecret, adminToken, log, cleanUp, ready } = await startOidcStack({
  port: Number(process.env.OIDC_E2E_PORT ?? 8801),
  name: 'oidc-e2e',
  portVariable: 'OIDC_E2E_PORT (or OIDC_E2E_CIMD_PORT)',
  alsoPorts: [cimdPort],
});
let cimd;
const stopAll = async () => {
  await cimd?.cleanUp();
  await cleanUp();
};
const watchdog = setTimeout(async () => {
  console.error(`NOT finished within ${TIMEOUT_MS} ms`);
  await stopAll();
  process.exit(1);
}, TIMEOUT_MS);
try {
  console.log(`provider: oidc-provider at ${idp.issuer}; Worker: ${url.href}`);
  await ready();
  const alice = await authorize('alice');

  // A session (2025-11-25), and its principal as the admin route knows it.
  const session = await connect(alice, 'legacy');
  const version = session.client.getNegotiatedProtocolVersion();
  const counted = await countdown(session.client);
  check(version === '2025-11-25' && counted === 'progress [1,2], "liftoff after 2"', `alice, session ${version}: countdown ${counted}`);
  const alicePrincipal = `oauth#${encodeURIComponent(idp.issuer)}#${encodeURIComponent('alice')}`;
  const held = await holdings(alicePrincipal);
  check(
    held.sessions.some((s) => s.id === session.transport.sessionId),
    `alice's session is held by ${alicePrincipal} (GET /admin/principals/{id})`,
  );

  // 2026-07-28: no session, the same token.
  const modern = await connect(alice, { pin: '2026-07-28' });
  const modernVersion = modern.client.getNegotiatedProtocolVersion();
  const modernCounted = await countdown(modern.client);
  check(
    modernVersion === '2026-07-28' && modernCounted === 'progress [1,2], "liftoff after 2"',
    `alice, ${modernVersion}: countdown ${modernCounted}`,
  );
  await modern.client.close();

  // bob: another principal; alice's session is no more his than one that never was.
  const bob = await authorize('bob');
  const bobSession = await connect(bob, 'legacy');
  const bobPrincipal = `oauth#${encodeURIComponent(idp.issuer)}#${encodeURIComponent('bob')}`;
  const bobHeld = await holdings(bobPrincipal);
  check(
    bobHeld.sessions.some((s) => s.id === bobSession.transport.sessionId) &&
      !bobHeld.sessions.some((s) => s.id === session.transport.sessionId) &&
      !(await holdings(alicePrincipal)).sessions.some((s) => s.id === bobSession.transport.sessionId),
    `bob's session is held by ${bobPrincipal}, alice's is not`,
  );
  await bobSession.client.close();
  const unknown = session.transport.sessionId.replace(/[0-9a-f]/g, () => '0123456789abcdef'[randomBytes(1)[0] % 16]);
  const intoAlices = await intoSession(bob.tokens.access_token, session.transport.sessionId);
  const intoUnknown = await intoSession(bob.tokens.access_token, unknown);
  check(
    intoAlices.startsWith('404 ') && intoAlices === intoUnknown,
    `bob into alice's session: the same answer as into an unknown one, byte for byte: ${intoAlices.slice(0, 120)}`,
  );
  // …and alice's session still answers alice.
  check((await session.client.listTools()).tools.length > 0, "alice's session still serves alice");
  await session.client.close();

  // CIMD: the same Worker under Miniflare, alice's client named by its document's URL.
  if (await portInUse(cimdPort)) throw new Error(`port ${cimdPort} is in use: set OIDC_E2E_CIMD_PORT`);
  cimd = await startCimdWorker({
    port: cimdPort,
    vars: { OIDC_ISSUER: idp.issuer, OIDC_CLIENT_SECRET: clientSecret, ADMIN_TOKEN: adminToken },
  });
  console.log(`CIMD: the Worker under Miniflare at ${cimd.url.href}, ${CIMD_HOST} answered by this script`);
  // Finding 9 stands in this very Worker: a document on this machine is refused, never fetched.
  const local = `https://127.0.0.1:${cimdPort}/oidc-e2e/client.json`;
  const refusedLocal = await fetch(
    `${cimd.url.origin}/authorize?${new URLSearchParams({ response_type: 'code', client_id: local, redirect_uri: REDIRECT, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`,
    { redirect: 'manual', signal: AbortSignal.timeout(10_000) },
  );
  const refusedBody = await refusedLocal.text();
  check(
    refusedLocal.status === 400 &&
      refusedBody.includes('is not fetched from this host') &&
      !cimd.passed.some((line) => line.includes(`//127.0.0.1:${cimdPort}/`)),
    `client_id ${local}: ${refusedLocal.status}, not fetched (${refusedBody.slice(0, 110)})`,
  );
  const aliceCimd = await authorizeByCimd(cimd, 'alice');
  const cimdSession = await connect(aliceCimd, 'legacy');
  const cimdVersion = cimdSession.client.getNegotiatedProtocolVersion();
  const cimdCounted = await countdown(cimdSession.client);
  check(
    cimdVersion === '2025-11-25' && cimdCounted === 'progress [1,2], "liftoff after 2"',
    `alice (CIMD), session ${cimdVersion}: countdown ${cimdCounted}`,
  );
  check(
    (await holdings(alicePrincipal, cimd.url)).sessions.some((s) => s.id === cimdSession.transport.sessionId),
    `alice's CIMD session is held by the same principal as with DCR, ${alicePrincipal}`,
  );
  await cimdSession.client.close();
  const cimdModern = await connect(aliceCimd, { pin: '2026-07-28' });
  const cimdModernVersion = cimdModern.client.getNegotiatedProtocolVersion();
  const cimdModernCounted = await countdown(cimdModern.client);
  check(
    cimdModernVersion === '2026-07-28' && cimdModernCounted === 'progress [1,2], "liftoff after 2"',
    `alice (CIMD), ${cimdModernVersion}: countdown ${cimdModernCounted}`,
  );
  await cimdModern.client.close();
  const clientKeys = (await cimd.kv.list({ prefix: 'client:' })).keys.map((key) => key.name);
  check(
    aliceCimd.registrations === 0 && clientKeys.length === 0,
    `alice (CIMD): no registration (${aliceCimd.registrations} request(s) to /oauth/register, ${clientKeys.length} client record(s) in OAUTH_KV)`,
  );
} catch (error) {
  console.error(String(error?.stack ?? error));
  console.error(log.join('').split('\n').slice(-40).join('\n'));
  failed = true;
} finally {
  clearTimeout(watchdog);
  await stopAll();
}
failed ||= anyFailed();
console.log(failed ? 'oidc-e2e: FAILED' : 'oidc-e2e: passed');
process.exit(failed ? 1 : 0);
