// Issue 43's sign-in once in a real browser: headless Chromium (Debian's package, /usr/bin/chromium;
// skipped with one line, exit 0, where it is missing) driven by playwright-core, which downloads
// no browser. The provider and the Worker are oidc-e2e's (scripts/ci/oidc-stack.mjs), all on
// loopback, every wait bounded, every process stopped. The SDK client registers by DCR, named
// with markup meant to run (HOSTILE), and its authorization URL is opened in the browser: our
// /authorize → the provider's login (alice) and consent → our /authorize/callback → our consent
// page (alice's e-mail, the client's name as text; Allow) → the client's redirect URI, a
// listener this script runs on 127.0.0.1, gets the code; the client exchanges it and calls a
// tool. On our pages (the consent page and the error page of a bogus `state`): each renders
// (a screenshot of every page, the provider's too, in .cache/artifacts/oidc-browser/), its
// headers refuse framing and a page of another origin that frames it gets no rendered frame
// (while a frameable page beside it does render: the check can see a frame), no script runs
// (no dialog, no console message, no request the page did not ship: the injected <img> fetches
// nothing), and the CSP they send forbids scripts.
import { createServer } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { chromium } from 'playwright-core';
import { checker, countdown, oauthClient, startOidcStack } from './oidc-stack.mjs';

const CHROMIUM = '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  console.log(`oidc-browser: skipped: ${CHROMIUM} is missing (Debian's chromium package: apt-get install chromium)`);
  process.exit(0);
}
const TIMEOUT_MS = 240_000;
const ARTIFACTS = resolve('.cache/artifacts/oidc-browser');
const HOSTILE = `<script>alert('script')</script><img src=x onerror="alert('img')">`;
const { check, failed } = checker();

/** A loopback server answering `handler`; `{ origin, close }`. */
async function listen(handler) {
  const server = createServer(handler);
  await new Promise((done, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', done);
  });
  return {
    port: server.address().port,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

// The client's redirect URI: records what it is sent.
const received = [];
const client = await listen((request, response) => {
  const at = new URL(request.url, 'http://127.0.0.1');
  if (at.pathname === '/callback') received.push(at.searchParams);
  response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
  response.end('<!doctype html><title>client</title><p id="framable">The client got its answer.</p>');
});
const REDIRECT = `http://127.0.0.1:${client.port}/callback`;
// Another origin (same site: localhost, another port, so that the Worker's cookies go with the
// framed request and the frame is refused for its headers, not for a missing cookie). It frames
// `?src=` and, as the control, a page that allows framing.
const framer = await listen((request, response) => {
  const src = new URL(request.url, 'http://localhost').searchParams.get('src') ?? '';
  const attr = src.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
  response.end(`<!doctype html><title>framer</title><iframe name="target" src="${attr}"></iframe>
<iframe name="control" src="http://127.0.0.1:${client.port}/framable"></iframe>`);
});

const stack = await startOidcStack({
  port: Number(process.env.OIDC_BROWSER_PORT ?? 8802),
  name: 'oidc-browser',
  portVariable: 'OIDC_BROWSER_PORT',
});
const { url } = stack;
const profile = mkdtempSync(join(tmpdir(), 'oidc-browser-profile-'));
let browser;
const cleanUp = async () => {
  await browser?.close().catch(() => {});
  await stack.cleanUp();
  await client.close();
  await framer.close();
  rmSync(profile, { recursive: true, force: true });
};
const watchdog = setTimeout(async () => {
  console.error(`NOT finished within ${TIMEOUT_MS} ms`);
  await cleanUp();
  process.exit(1);
}, TIMEOUT_MS);

/** What ran or was fetched on a page that should run nothing: dialogs, console, requests. */
function watch(page, ours) {
  const seen = { dialogs: [], console: [], requests: [] };
  page.on('dialog', (dialog) => {
    seen.dialogs.push(dialog.message());
    dialog.dismiss().catch(() => {});
  });
  // Ours only (the provider's pages are not under test); the favicon is the browser's own fetch.
  page.on('console', (message) => {
    const at = message.location().url || page.url();
    if (!seen.probing && at.startsWith(ours) && !at.endsWith('/favicon.ico')) seen.console.push(`${at}: ${message.text()}`);
  });
  // Anything but a page itself (and the browser's favicon) fetched while one of ours is shown.
  page.on('request', (request) => {
    let shown = '';
    try {
      shown = request.frame().url();
    } catch {
      // a request of no frame (a service worker's): none of ours
    }
    if (shown.startsWith(ours) && request.resourceType() !== 'document' && !request.url().endsWith('/favicon.ico'))
      seen.requests.push(`${request.method()} ${request.url()}`);
  });
  return seen;
}

const shots = [];
async function screenshot(page, name) {
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  shots.push(path);
}

/**
 * The headers refuse framing; the CSP, sent or in a <meta> (where frame-ancestors has no force),
 * forbids scripts; and the browser holds to it: a script added to the page now does not run.
 */
async function checkPolicy(what, page, seen, headers) {
  const csp = headers['content-security-policy'] ?? '';
  check(
    headers['x-frame-options'] === 'DENY' || /frame-ancestors 'none'/.test(csp),
    `${what}: framing refused by its headers (X-Frame-Options: ${headers['x-frame-options']}; CSP: ${csp || 'none'})`,
  );
  const meta =
    (await page
      .locator('meta[http-equiv="Content-Security-Policy"]')
      .getAttribute('content', { timeout: 1_000 })
      .catch(() => null)) ?? '';
  const policy = [csp, meta].join('; ');
  const scripts = /(?:^|;)\s*script-src\s+([^;]*)/.exec(policy)?.[1] ?? /(?:^|;)\s*default-src\s+([^;]*)/.exec(policy)?.[1];
  seen.probing = true; // the refusal below is logged to the console by design
  const probe = await page.evaluate(
    () =>
      new Promise((done) => {
        window.probeRan = false;
        document.addEventListener('securitypolicyviolation', (event) => done({ refused: event.effectiveDirective, ran: window.probeRan }), {
          once: true,
        });
        const script = document.createElement('script');
        script.textContent = 'window.probeRan = true';
        document.body.append(script);
        setTimeout(() => done({ refused: null, ran: window.probeRan }), 1_000);
      }),
  );
  seen.probing = false;
  check(
    scripts?.trim() === "'none'" && probe.refused !== null && !probe.ran,
    `${what}: its CSP forbids every script (${scripts === undefined ? 'it sends none that does' : `scripts: ${scripts}${meta ? ', in a <meta>' : ''}`}); an inline script added now ${probe.ran ? 'RAN' : `is refused (${probe.refused})`}`,
  );
}

/** `target` framed by the other origin: no rendered frame for it, while the control frame renders. */
async function checkFraming(context, what, target) {
  const page = await context.newPage();
  const framed = [];
  page.on('response', (response) => {
    if (response.url() === target) framed.push(response.status());
  });
  await page.goto(`http://localhost:${framer.port}/?src=${encodeURIComponent(target)}`);
  await page.waitForLoadState('load');
  const frame = page.frames().find((f) => f.name() === 'target');
  const control = page.frames().find((f) => f.name() === 'control');
  // A frame rendered if it holds a document of its own with something in it; a refused one is
  // Chromium's error page (chrome-error://), or no document at all.
  const renders = async (f) =>
    f !== undefined &&
    !f.url().startsWith('chrome-error:') &&
    ((await f.evaluate(() => document.body?.textContent ?? '').catch(() => '')) ?? '').trim() !== '';
  const [targetRendered, controlRendered] = [await renders(frame), await renders(control)];
  check(
    framed.length > 0 && !targetRendered && controlRendered,
    `${what}, framed by http://localhost:${framer.port}: served (${framed.join(',') || 'not requested'}), ${targetRendered ? 'RENDERED' : 'not rendered'} (frame at ${frame?.url()}); the control frame ${controlRendered ? 'rendered' : 'did NOT render'}`,
  );
  await screenshot(page, `framed-${what.replace(/\W+/g, '-')}`);
  await page.close();
}

try {
  mkdirSync(ARTIFACTS, { recursive: true });
  console.log(`provider: oidc-provider at ${stack.idp.issuer}; Worker: ${url.href}; client: ${REDIRECT}`);
  await stack.ready();
  // A fresh profile (playwright's own flag for --user-data-dir); the flags keep Chromium from
  // calling out (background networking, components, sync, QUIC), which a closed network refuses.
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    timeout: 30_000,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const context = browser;
  // Loopback only: anything else a page asks for (the provider's page names a web font) is
  // refused here rather than left to the closed network's DNS.
  const offLoopback = [];
  await context.route(
    (at) => !['127.0.0.1', 'localhost'].includes(at.hostname),
    (route) => {
      offLoopback.push(route.request().url());
      return route.abort('blockedbyclient');
    },
  );
  context.setDefaultTimeout(20_000);
  context.setDefaultNavigationTimeout(20_000);
  const page = context.pages()[0] ?? (await context.newPage());
  const seen = watch(page, url.origin);

  // The client: 401, registers by DCR, and names where the user goes.
  const store = oauthClient('alice', { redirect: REDIRECT, clientName: HOSTILE });
  const first = new StreamableHTTPClientTransport(url, { authProvider: store.provider });
  const refused = await new Client({ name: 'oidc-browser', version: '1' }).connect(first).then(
    () => undefined,
    (error) => error,
  );
  check(
    refused instanceof UnauthorizedError && store.authorizationUrl !== undefined,
    `401 → registered by DCR, sent to ${store.authorizationUrl?.pathname}`,
  );

  // Our /authorize → the provider's login.
  await page.goto(store.authorizationUrl.href);
  await page.locator('input[name="login"]').waitFor();
  check(page.url().startsWith(stack.idp.issuer), `the provider's login page at ${new URL(page.url()).pathname}`);
  await screenshot(page, '1-provider-login');
  await page.fill('input[name="login"]', 'alice');
  await page.fill('input[name="password"]', 'any password (devInteractions checks none)');
  const loginPage = page.url();
  await page.click('button[type="submit"]');
  // The provider's consent: another interaction page, with no login field.
  await page.waitForURL((at) => at.href !== loginPage, { waitUntil: 'load' }).catch(() => {});
  let consentHeaders = {};
  if (page.url().startsWith(stack.idp.issuer) && (await page.locator('input[name="login"]').count()) === 0) {
    await screenshot(page, '2-provider-consent');
    check(true, `the provider's consent page at ${new URL(page.url()).pathname}`);
    // Its callback's response is our consent page.
    const [ours] = await Promise.all([
      page.waitForResponse(
        (response) => response.url().startsWith(`${url.origin}/authorize/callback`) && response.request().isNavigationRequest(),
      ),
      page.click('button[type="submit"]'),
    ]);
    await page.waitForLoadState('load');
    consentHeaders = await ours.allHeaders();
  } else check(false, `the provider's consent page: went to ${page.url()}`);

  // Our consent page: alice's e-mail, the client's name as text, nothing run.
  await page.locator('button[value="approve"]').waitFor();
  await screenshot(page, '3-our-consent');
  const heading = await page.locator('h1').textContent();
  const body = await page.locator('body').textContent();
  check(body.includes('alice@example.test'), "our consent page shows alice's e-mail (alice@example.test)");
  check(heading === `Allow ${HOSTILE} to use this MCP server?`, `our consent page shows the client's name as text: ${heading}`);
  const dom = await page.evaluate(() => ({ scripts: document.scripts.length, images: document.images.length }));
  check(
    dom.scripts === 0 && dom.images === 0 && seen.dialogs.length === 0,
    `our consent page: no <script>, no <img> in its DOM (${JSON.stringify(dom)}), no dialog (${seen.dialogs.length})`,
  );

  await checkPolicy('our consent page', page, seen, consentHeaders);

  // Allow: the form posts, and the client's redirect URI gets the code.
  await Promise.all([page.waitForURL((at) => at.href.startsWith(REDIRECT)), page.click('button[value="approve"]')]);
  const params = received.at(-1);
  check(params?.has('code') === true, `Allow posted; the client's redirect URI got a code (${received.length} request)`);
  check(
    seen.requests.length === 0,
    `no request from our pages but the pages themselves (${seen.requests.join(', ') || 'none: the injected <img src=x> fetched nothing'})`,
  );
  check(seen.console.length === 0, `no console message on our pages (${seen.console.join(' | ') || 'none'})`);

  await first.finishAuth(params);
  check(typeof store.tokens?.access_token === 'string', 'the client exchanged the code for an access token');
  const transport = new StreamableHTTPClientTransport(url, { authProvider: store.provider });
  const mcp = new Client({ name: 'oidc-browser', version: '1' });
  await mcp.connect(transport);
  const counted = await countdown(mcp);
  check(counted === 'progress [1,2], "liftoff after 2"', `a tool called with the token: countdown ${counted}`);
  await mcp.close();

  check(
    offLoopback.every((at) => !at.startsWith(url.origin)),
    `loopback only: off-loopback requests refused in the browser: ${offLoopback.length} (${[...new Set(offLoopback.map((at) => new URL(at).host))].join(', ') || 'none'}), from the provider's pages`,
  );

  // The error page: our callback with a state it never gave.
  const bogus = `${url.origin}/authorize/callback?state=bogus-state&code=bogus-code`;
  const errorResponse = await page.goto(bogus);
  await screenshot(page, '4-our-error-page');
  const errorText = await page.locator('body').textContent();
  check(
    errorResponse.status() === 400 && /Sign-in not completed/.test(errorText),
    `our error page renders: ${errorResponse.status()} "${errorText.split('\n')[0]}"`,
  );
  await checkPolicy('our error page', page, seen, await errorResponse.allHeaders());

  // Framing: our consent page (a fresh sign-in, its callback held back and then framed) and the error page.
  const again = oauthClient('alice-framed', { redirect: REDIRECT, clientName: 'framed' });
  await new Client({ name: 'oidc-browser', version: '1' })
    .connect(new StreamableHTTPClientTransport(url, { authProvider: again.provider }))
    .catch(() => {});
  // The browser context's own request client (its cookies: alice's session at the provider, and
  // the binding cookie our /authorize sets), redirects followed by hand up to our callback.
  // (A page route would not do: Playwright routes only the first request of a redirect chain.)
  let callback;
  let hop = new URL(again.authorizationUrl.href);
  for (let hops = 0; hops < 10; hops++) {
    const response = await context.request.get(hop.href, { maxRedirects: 0 });
    const location = response.headers().location;
    if (location === undefined) throw new Error(`second sign-in stopped at ${hop.href}: ${response.status()}`);
    hop = new URL(location, hop);
    if (hop.href.startsWith(`${url.origin}/authorize/callback?`)) {
      callback = hop.href;
      break;
    }
  }
  check(callback !== undefined, 'a second sign-in reached our callback (held back, to be framed)');
  if (callback !== undefined) await checkFraming(context, 'our consent page', callback);
  await checkFraming(context, 'our error page', bogus);
} catch (error) {
  console.error(String(error?.stack ?? error));
  console.error(stack.log.join('').split('\n').slice(-40).join('\n'));
  check(false, 'the run ended by the error above');
} finally {
  clearTimeout(watchdog);
  await cleanUp();
}
for (const path of shots) console.log(`screenshot: ${path}`);
console.log(failed() ? 'oidc-browser: FAILED' : 'oidc-browser: passed');
process.exit(failed() ? 1 : 0);
