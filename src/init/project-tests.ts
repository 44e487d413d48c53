/**
 * The test a new project gets (`init`): its Worker as clients reach it, in workerd with its real
 * bindings and storage. What users read first to learn how their server is called, so each is
 * short and plain: AUTH=none calls countdown in both eras (and as a task); AUTH=jwt and
 * AUTH=oauth are asked for a token, then sign in (a token minted in the test by a key of its
 * own; the embedded server's whole flow, through the demo page) and call countdown with it.
 */
import type { InitOptions } from './init-options.ts';
import { SIGN_IN_SOURCES } from './sign-in-sources.ts';

export function serverTest({ auth, idp, tasks }: InitOptions): string {
  if (auth === 'oauth' && idp !== undefined && idp !== 'demo') return signedInServerTest(idp);
  const imports = {
    none: `import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';`,
    jwt: `import { env, exports } from 'cloudflare:workers';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';`,
    oauth: `import { exports } from 'cloudflare:workers';
import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';`,
  }[auth];
  return `/** The Worker as clients reach it, in workerd with its real bindings and storage. */
${imports}

/** Where \`npm run dev\` serves it (with AUTH=oauth, MCP_RESOURCE's origin). */
const ORIGIN = 'http://localhost:8787';
const JSON_AND_SSE = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

const post = (body: unknown, headers: Record<string, string> = {}) =>
  exports.default.fetch(new Request(\`\${ORIGIN}/mcp\`, { method: 'POST', headers: { ...JSON_AND_SSE, ...headers }, body: JSON.stringify(body) }));

/** The JSON-RPC messages of a response: its SSE events' data, or its JSON body. */
async function messages(response: Response): Promise<any[]> {
  const text = await response.text();
  if (response.headers.get('Content-Type')?.startsWith('application/json')) return [JSON.parse(text)];
  return text.split('\\n').filter((line) => line.startsWith('data: {')).map((line) => JSON.parse(line.slice('data: '.length)));
}

/** A 2026-07-28 request: no session; the protocol version, capabilities and client in each request's _meta. */
function modern(method: string, params: Record<string, unknown>, { extensions = {}, headers = {} } = {}) {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': { extensions },
    'io.modelcontextprotocol/clientInfo': { name: 'test', version: '0' },
  };
  const name = (params.name ?? params.taskId) as string | undefined;
  return post(
    { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta } },
    { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, ...(name !== undefined && { 'Mcp-Name': name }), ...headers },
  );
}

const COUNTDOWN = { name: 'countdown', arguments: { from: 2, interval_ms: 0 } };
${{ none: noAuthTests(tasks), jwt: JWT_TESTS, oauth: OAUTH_TESTS }[auth]}`;
}

function noAuthTests(tasks: boolean): string {
  return `
describe('the server', () => {
  it('serves a 2025 session: countdown streams its progress, then its result', async () => {
    const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '0' } };
    const opened = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: init });
    const session = opened.headers.get('Mcp-Session-Id');
    expect(session).not.toBeNull();
    await opened.body?.cancel();
    const headers = { 'Mcp-Session-Id': session!, 'MCP-Protocol-Version': '2025-11-25' };
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status).toBe(202);
    const call = { name: 'countdown', arguments: { from: 3, interval_ms: 10 }, _meta: { progressToken: 'p1' } };
    const answer = await messages(await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }, headers));
    expect(answer.map((m) => m.params?.progress ?? m.result?.content[0].text)).toEqual([1, 2, 3, 'liftoff after 3']);
  });

  it('serves a 2026-07-28 call without a session', async () => {
    const answer = await messages(await modern('tools/call', COUNTDOWN));
    expect(answer.at(-1).result.content[0].text).toBe('liftoff after 2');
  });
${
  tasks
    ? `
  it('runs countdown as a task for a client that declares the Tasks extension', async () => {
    const extensions = { 'io.modelcontextprotocol/tasks': {} };
    const [created] = await messages(await modern('tools/call', { ...COUNTDOWN, arguments: { from: 2, interval_ms: 10 } }, { extensions }));
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
    const { taskId } = created.result;
    // Polled as a client would, at most 5 s.
    for (let attempt = 0; attempt < 50; attempt++) {
      const [read] = await messages(await modern('tasks/get', { taskId }, { extensions }));
      if (read.result.status !== 'working') {
        expect(read.result).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'liftoff after 2' }] } });
        return;
      }
      await scheduler.wait(100);
    }
    throw new Error('the task did not complete within 5 s');
  });
`
    : ''
}});
`;
}

/** A request without a token: 401, naming where the client learns how to get one. */
const ASKS_FOR_A_TOKEN = `  it('asks for a token, and says where to get one', async () => {
    const response = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(response.status).toBe(401);
    expect(response.headers.get('WWW-Authenticate')).toContain('resource_metadata=');
    const metadata = await exports.default.fetch(new Request(\`\${ORIGIN}/.well-known/oauth-protected-resource/mcp\`));
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toMatchObject({ resource: expect.stringContaining('/mcp') });
  });
`;

/**
 * AUTH=jwt: the test plays the authorization server. Its key pair is made in the test; the
 * Worker fetches wrangler.toml's AUTH_JWKS_URL as it would deployed, and the test answers that
 * one fetch with the public half (nothing reaches the network), so the test keeps passing once
 * AUTH_ISSUER and AUTH_JWKS_URL are yours.
 */
const JWT_TESTS = `
describe('the server (AUTH=jwt)', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

${ASKS_FOR_A_TOKEN}
  it('serves a token its issuer signed: countdown answers', async () => {
    // The issuer, played here: a key pair of the test's own, its public half answered at AUTH_JWKS_URL.
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const kid = crypto.randomUUID();
    const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256' }] };
    const fetch = globalThis.fetch;
    vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) =>
      new Request(input, init).url === env.AUTH_JWKS_URL ? Promise.resolve(Response.json(jwks)) : fetch(input, init),
    );
    // Its token: this issuer, this endpoint as the audience (MCP_RESOURCE, once set), the scopes it asks.
    const audience = 'MCP_RESOURCE' in env ? String(env.MCP_RESOURCE) : \`\${ORIGIN}/mcp\`;
    const token = await new SignJWT({ scope: env.AUTH_SCOPES })
      .setProtectedHeader({ alg: 'ES256', kid })
      .setIssuer(env.AUTH_ISSUER)
      .setAudience(audience)
      .setSubject('alice')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);
    const response = await modern('tools/call', COUNTDOWN, { headers: { Authorization: \`Bearer \${token}\` } });
    expect(response.status).toBe(200);
    expect((await messages(response)).at(-1).result.content[0].text).toBe('liftoff after 2');
  });
});
`;

/**
 * AUTH=oauth, SIGN_IN=demo: the embedded authorization server's flow as an MCP client and its
 * user take it (dynamic registration, PKCE, the demo sign-in page, which serves on loopback),
 * then a call with the token.
 */
const OAUTH_TESTS = `
/** A request to the Worker at \`path\`; redirects are the client's to follow. */
const send = (path: string, init: RequestInit = {}) =>
  exports.default.fetch(new Request(\`\${ORIGIN}\${path}\`, { redirect: 'manual', ...init }));
const JSON_TYPE = { 'Content-Type': 'application/json' };
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

describe('the server (AUTH=oauth)', () => {
${ASKS_FOR_A_TOKEN}
  it('answers at its demo sign-in page on loopback (elsewhere it refuses, 403, until oauth.authorize is yours)', async () => {
    // No client_id: the provider's own 400, which only a page that serves gives.
    const page = await send('/authorize', { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(400);
    expect(await page.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('signs a user in through the demo page, whose token calls countdown', async () => {
    // The client registers itself (dynamic client registration)...
    const redirect_uri = 'http://127.0.0.1:9/callback';
    const registration = { redirect_uris: [redirect_uri], client_name: 'test', token_endpoint_auth_method: 'none' };
    const registered = await send('/oauth/register', { method: 'POST', headers: JSON_TYPE, body: JSON.stringify(registration) });
    expect(registered.status).toBe(201);
    const { client_id } = await registered.json<{ client_id: string }>();
    // ...sends its user to /authorize, with a PKCE challenge...
    const verifier = oauth.generateRandomCodeVerifier();
    const authorization = new URLSearchParams({
      response_type: 'code',
      client_id,
      redirect_uri,
      scope: 'mcp',
      state: 'xyz',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      resource: \`\${ORIGIN}/mcp\`,
    });
    const page = await send(\`/authorize?\${authorization}\`);
    expect(page.status).toBe(200);
    const handle = /name="handle" value="([^"]+)"/.exec(await page.text())![1]!;
    // ...who signs in on the demo page (any name) and allows: back to the client with a code...
    const cookie = page.headers.get('Set-Cookie')!.split(';')[0]!;
    const decision = new URLSearchParams({ handle, user: 'alice', decision: 'approve' });
    const allowed = await send('/authorize', { method: 'POST', headers: { ...FORM, Cookie: cookie }, body: decision });
    expect(allowed.status).toBe(302);
    const code = new URL(allowed.headers.get('Location')!).searchParams.get('code')!;
    // ...which the client exchanges, with the verifier, for a token.
    const exchange = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri,
      client_id,
      code_verifier: verifier,
      resource: \`\${ORIGIN}/mcp\`,
    });
    const tokens = await send('/oauth/token', { method: 'POST', headers: FORM, body: exchange });
    expect(tokens.status).toBe(200);
    const { access_token } = await tokens.json<{ access_token: string }>();
    const response = await modern('tools/call', COUNTDOWN, { headers: { Authorization: \`Bearer \${access_token}\` } });
    expect(response.status).toBe(200);
    expect((await messages(response)).at(-1).result.content[0].text).toBe('liftoff after 2');
  });
});
`;

/**
 * AUTH=oauth behind an identity provider: the test gives the Worker stand-in values for the
 * provider's variables, so that it passes before they are filled in and reaches no provider;
 * and shows that each one left empty is refused with a log line that names it.
 */
function signedInServerTest(idp: Exclude<InitOptions['idp'], 'demo' | undefined>): string {
  const { testValues, refusals } = SIGN_IN_SOURCES[idp];
  return `/** The Worker as clients reach it, in workerd with its real bindings and storage. */
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import worker from '../src/index.ts';

/** Where \`npm run dev\` serves it (MCP_RESOURCE's origin). */
const ORIGIN = 'http://localhost:8787';

/**
 * Stand-ins for the sign-in's variables (SIGN_IN = "${idp}"), whatever wrangler.toml and
 * .dev.vars hold: the test needs no identity provider, and reaches none.
 */
const SIGN_IN_VARS: Record<string, string> = {
${Object.entries(testValues)
  .map(([name, value]) => `  ${name}: '${value}',`)
  .join('\n')}
};

/** The Worker with these variables over its own. */
const fetchWith = (request: Request, vars: Record<string, string> = SIGN_IN_VARS) =>
  worker.fetch(request, { ...env, ...vars } as Env, createExecutionContext());

describe('the server (AUTH=oauth, SIGN_IN=${idp})', () => {
  it('asks for a token, and says where to get one', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const response = await fetchWith(new Request(\`\${ORIGIN}/mcp\`, { method: 'POST', headers, body }));
    expect(response.status).toBe(401);
    expect(response.headers.get('WWW-Authenticate')).toContain('resource_metadata=');
    const metadata = await fetchWith(new Request(\`\${ORIGIN}/.well-known/oauth-protected-resource/mcp\`));
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toMatchObject({ resource: expect.stringContaining('/mcp') });
  });

  it('checks the client at /authorize before it sends anyone to the provider', async () => {
    // No client_id: the provider's own 400.
    const page = await fetchWith(new Request(\`\${ORIGIN}/authorize\`, { headers: { Accept: 'text/html' } }));
    expect(page.status).toBe(400);
    expect(await page.json()).toMatchObject({ error: 'invalid_request' });
  });

  it.each([
${refusals.map(([variable, named]) => `    ['${variable}', '${named}'],`).join('\n')}
  ])(
    'refuses to serve without %s: a 500 whose log says what to set',
    async (variable, named) => {
      const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
      const response = await fetchWith(new Request(\`\${ORIGIN}/authorize\`), { ...SIGN_IN_VARS, [variable]: '' });
      const logged = errors.mock.calls.map(([line]) => String(line)).join('\\n');
      errors.mockRestore();
      expect(response.status).toBe(500);
      expect(logged).toContain(named);
    },
  );
});
`;
}
