// The official TypeScript client through AUTH=oauth with SIGN_IN=oidc, against a REAL OpenID
// provider, every wait bounded and everything on loopback: `oidc-provider` (scripts/
// oidc-provider.mjs) on a free 127.0.0.1 port, and `npm run dev -- --env oidc` told its issuer
// and a client secret made for this run. No browser: a cookie jar per user walks the pages a
// browser would (our /authorize → the provider's login form, posted as `alice` with any
// password, and its consent → our /authorize/callback → our consent page, answered Allow), and
// hands the client its code. Then: a tool called in a session (2025-11-25) and in 2026-07-28;
// the session's principal, read from the admin route, is `oauth#<issuer>#<sub>`; a second user
// (`bob`) is another principal, and his request into alice's session gets the same 404, byte for
// byte, as one into a session that never was. Registration is dynamic (DCR) only: a client ID
// metadata document (CIMD) must be at a public https URL, and local ones are refused by design
// (docs/auth.md), so a loopback-only run cannot register by CIMD.
import { randomBytes } from 'node:crypto';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
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
  let step = await browser.follow(authorizationUrl);
  for (let forms = 0; step.redirected === undefined; forms++) {
    if (step.status !== 200 || forms === 6) throw new Error(`${step.at.href}: ${step.status} ${step.page.slice(0, 300)}`);
    const { action, fields } = formOf(step.page, step.at);
    let answer;
    if (/name="login"/.test(step.page)) {
      seen.push(`${step.at.host} login`);
      answer = { ...fields, login: user, password: 'any password (devInteractions checks none)' };
    } else if (fields.handle !== undefined) {
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
  return { params: step.redirected.searchParams, seen };
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

/** A connected client in `mode` (the SDK's versionNegotiation), with the user's token. */
async function connect(store, mode) {
  const transport = new StreamableHTTPClientTransport(url, { authProvider: store.provider });
  const client = new Client({ name: `oidc-e2e-${store.name}`, version: '1' }, { versionNegotiation: { mode } });
  await client.connect(transport);
  return { client, transport };
}

/** What the admin route says the principal holds. */
async function holdings(principal) {
  const response = await fetch(new URL(`/admin/principals/${encodeURIComponent(principal)}`, url), {
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

const { url, idp, adminToken, log, cleanUp, ready } = await startOidcStack({
  port: Number(process.env.OIDC_E2E_PORT ?? 8801),
  name: 'oidc-e2e',
  portVariable: 'OIDC_E2E_PORT',
});
const watchdog = setTimeout(async () => {
  console.error(`NOT finished within ${TIMEOUT_MS} ms`);
  await cleanUp();
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
} catch (error) {
  console.error(String(error?.stack ?? error));
  console.error(log.join('').split('\n').slice(-40).join('\n'));
  failed = true;
} finally {
  clearTimeout(watchdog);
  await cleanUp();
}
failed ||= anyFailed();
console.log(failed ? 'oidc-e2e: FAILED' : 'oidc-e2e: passed');
process.exit(failed ? 1 : 0);
