/**
 * A misconfigured deployment, through the fixture's own Worker (its default export's fetch, with
 * a copy of the environment that lacks a binding or sets a variable wrong): every request, on
 * every path — AUTH=oauth's authorization server included — is answered with one 500 that says
 * `server misconfigured: …` and names the fix; the log has it once per isolate and environment;
 * no secret's value is ever quoted. Each environment copy is a fresh one to the Worker (its
 * state is kept per env object), as a new isolate would be.
 */
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import operations from '../../docs/operations.md?raw';
import fixture from '../fixture-server/index.ts';
import { EVENTS } from '../support/events-http.ts';
import { initializeRequest, POST_HEADERS } from '../support/mcp-http.ts';
import { modernRequestOf } from '../support/modern-http.ts';
import { captureLogLines } from '../support/log-lines.ts';

type Vars = Record<string, unknown>;

/** The environment without `drop`, with `set` over it. */
function environment(drop: readonly string[] = [], set: Vars = {}): Env {
  const copy: Vars = { ...env, ...set };
  for (const key of drop) delete copy[key];
  return copy as unknown as Env;
}

const initialize = (path = '/mcp', init: RequestInit = {}) =>
  new Request(`http://localhost${path}`, {
    method: 'POST',
    headers: POST_HEADERS,
    body: JSON.stringify(initializeRequest()),
    ...init,
  });

/** The fixture's default export, as the runtime calls it. */
const fetchFixture = (request: Request, environment: Env) =>
  fixture.fetch(request as Request<unknown, IncomingRequestCfProperties>, environment, createExecutionContext());

async function answer(
  request: Request,
  environment: Env,
): Promise<{ status: number; body: { id: unknown; error: { code: number; message: string } }; text: string }> {
  const response = await fetchFixture(request, environment);
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text), text };
}

const lines = captureLogLines();
const logged = () => lines().map(({ line }) => line);

const configLines = () => logged().filter(({ msg }) => msg === 'mcp.config.error');

describe('a binding the Worker was given an accessor for, missing', () => {
  it.each([
    {
      binding: 'MCP_SESSION',
      says: [
        'MCP_SESSION is not bound (the sessions',
        'add to wrangler.toml [[durable_objects.bindings]] name = "MCP_SESSION" class_name = "<your class extending McpSessionObject>"',
        'storage = "sqlite"',
      ],
    },
    {
      binding: 'MCP_TASKS',
      says: [
        'MCP_TASKS is not bound (the Tasks extension',
        'add to wrangler.toml [[durable_objects.bindings]] name = "MCP_TASKS" class_name = "<your class extending McpTaskObject>"',
        "or remove `tasks` from createMcpWorker's options",
      ],
    },
    {
      binding: 'MCP_PRINCIPALS',
      says: ['MCP_PRINCIPALS is not bound', 'name = "MCP_PRINCIPALS" class_name = "McpPrincipalRegistry"', 'or remove `principals`'],
    },
    { binding: 'MCP_BUS', says: ['MCP_BUS is not bound', 'name = "MCP_BUS" class_name = "McpEventBus"', 'or remove `bus`'] },
    {
      binding: 'MCP_EVENTS',
      says: [
        'MCP_EVENTS is not bound (the event logs of MCP Events',
        'add to wrangler.toml [[durable_objects.bindings]] name = "MCP_EVENTS" class_name = "McpEventLog"',
        "or remove `events` from createMcpWorker's options",
      ],
    },
    {
      binding: 'MCP_WEBHOOKS',
      says: [
        'MCP_WEBHOOKS is not bound (the webhook subscriptions of MCP Events',
        'name = "MCP_WEBHOOKS" class_name = "<your class extending McpWebhookSubscription>"',
        'or remove `webhooks` from the `events` option of createMcpWorker',
      ],
    },
    { binding: 'MCP_RATE_LIMIT', says: ['MCP_RATE_LIMIT is not bound', '[[ratelimits]] name = "MCP_RATE_LIMIT"', 'or remove `rateLimit`'] },
  ])('$binding: every request is told the fix, logged once', async ({ binding, says }) => {
    const broken = environment([binding]);
    for (const request of [
      initialize(),
      new Request('http://localhost/mcp', { method: 'GET', headers: { Host: 'localhost', Accept: 'text/event-stream' } }),
      new Request('http://localhost/.well-known/oauth-protected-resource'),
    ]) {
      const { status, body } = await answer(request, broken);
      expect(status).toBe(500);
      expect(body.error.code).toBe(-32603);
      expect(body.error.message.startsWith('server misconfigured: ')).toBe(true);
      for (const text of says) expect(body.error.message).toContain(text);
    }
    expect(configLines()).toEqual([{ msg: 'mcp.config.error', subject: binding, error: expect.stringContaining(says[0]!) }]);
  });

  it("docs/operations.md's example is this answer, byte for byte", async () => {
    const shown = /^500 (\{.*\})$/m.exec(operations)?.[1];
    const { status, text } = await answer(new Request('http://localhost/mcp', { method: 'DELETE' }), environment(['MCP_TASKS']));
    expect(`${status} ${text}`).toBe(`500 ${shown}`);
  });

  it('a binding of another kind: named as such', async () => {
    const { status, body } = await answer(initialize(), environment([], { MCP_SESSION: env.OAUTH_KV }));
    expect(status).toBe(500);
    expect(body.error.message).toContain('MCP_SESSION is bound, but not as a Durable Object namespace');
  });

  it('two missing: one answer naming both', async () => {
    const { body } = await answer(initialize(), environment(['MCP_TASKS', 'MCP_BUS']));
    expect(body.error.message).toMatch(/^server misconfigured, 2 problems: \(1\) MCP_BUS is not bound.* \(2\) MCP_TASKS is not bound/);
    expect(configLines().map(({ subject }) => subject)).toEqual(['MCP_BUS', 'MCP_TASKS']);
  });

  it('the same environment is checked once: a second isolate (environment) logs its own', async () => {
    const broken = environment(['MCP_TASKS']);
    await answer(initialize(), broken);
    await answer(initialize(), broken);
    expect(configLines()).toHaveLength(1);
    await answer(initialize(), environment(['MCP_TASKS']));
    expect(configLines()).toHaveLength(2);
  });

  it('the metrics dataset is the one binding that may be absent: metrics off, served', async () => {
    const response = await fetchFixture(initialize(), environment(['MCP_METRICS']));
    expect(response.status).toBe(200);
    await response.body?.cancel();
    expect(configLines()).toEqual([]);
  });
});

/** A value each test below sets, which no answer may quote. */
const SECRET = 'do-not-quote-this-secret-value-0123';

describe('what the chosen AUTH needs', () => {
  const OAUTH = { AUTH: 'oauth', MCP_RESOURCE: 'http://localhost/mcp' };
  const OIDC = { ...OAUTH, SIGN_IN: 'oidc', OIDC_ISSUER: 'https://idp.example', OIDC_CLIENT_ID: 'mcp', OIDC_CLIENT_SECRET: SECRET };
  const JWT = { AUTH: 'jwt', AUTH_ISSUER: 'https://issuer.example', AUTH_JWKS_URL: 'https://issuer.example/jwks.json' };

  it.each([
    { name: 'AUTH=jwt without AUTH_ISSUER', drop: [], set: { ...JWT, AUTH_ISSUER: undefined }, says: 'AUTH=jwt needs AUTH_ISSUER' },
    { name: 'AUTH=jwt with AUTH_ISSUER empty', drop: [], set: { ...JWT, AUTH_ISSUER: ' ' }, says: 'AUTH=jwt needs AUTH_ISSUER' },
    {
      name: 'AUTH=jwt with neither AUTH_JWKS_URL nor AUTH_JWKS',
      drop: [],
      set: { ...JWT, AUTH_JWKS_URL: '' },
      says: 'AUTH=jwt needs exactly one of AUTH_JWKS_URL',
    },
    {
      name: 'AUTH=jwt with an AUTH_JWKS that is no key set',
      drop: [],
      set: { ...JWT, AUTH_JWKS_URL: undefined, AUTH_JWKS: `{"private":"${SECRET}"}` },
      says: 'AUTH_JWKS must be a JSON Web Key Set',
    },
    {
      name: 'AUTH=jwt with an AUTH_JWKS_URL that is no URL',
      drop: [],
      set: { ...JWT, AUTH_JWKS_URL: `keys?token=${SECRET}` },
      says: 'AUTH_JWKS_URL must be an absolute URL',
    },
    { name: 'AUTH=oauth without MCP_RESOURCE', drop: [], set: { AUTH: 'oauth' }, says: 'AUTH=oauth needs MCP_RESOURCE' },
    { name: 'AUTH=oauth without its KV', drop: ['OAUTH_KV'], set: OAUTH, says: 'OAUTH_KV is not bound' },
    {
      name: 'SIGN_IN=oidc without OIDC_ISSUER',
      drop: [],
      set: { ...OIDC, OIDC_ISSUER: undefined },
      says: 'SIGN_IN=oidc needs OIDC_ISSUER',
    },
    {
      name: 'SIGN_IN=oidc without OIDC_CLIENT_SECRET',
      drop: [],
      set: { ...OIDC, OIDC_CLIENT_SECRET: undefined, ADMIN_TOKEN: SECRET },
      says: 'SIGN_IN=oidc needs OIDC_CLIENT_SECRET: set it as a secret: `wrangler secret put OIDC_CLIENT_SECRET`',
    },
    {
      name: 'SIGN_IN=access without ACCESS_TEAM_DOMAIN',
      drop: [],
      set: { ...OAUTH, SIGN_IN: 'access', ACCESS_AUD: 'a'.repeat(64) },
      says: 'ACCESS_TEAM_DOMAIN is required',
    },
    {
      name: 'SIGN_IN=github without GITHUB_CLIENT_SECRET',
      drop: [],
      set: { ...OAUTH, SIGN_IN: 'github', GITHUB_CLIENT_ID: 'Iv1.abc' },
      says: 'GitHub sign-in needs GITHUB_CLIENT_SECRET',
    },
    {
      name: 'a METRICS_KEY too short',
      drop: [],
      set: { MCP_METRICS: { writeDataPoint: () => undefined }, METRICS_KEY: SECRET.slice(0, 20) },
      says: 'METRICS_KEY must be at least 32 bytes',
    },
    {
      name: 'a REQUEST_STATE_KEY too short',
      drop: [],
      set: { REQUEST_STATE_KEY: SECRET.slice(0, 16) },
      says: 'REQUEST_STATE_KEY must be at least 32 bytes',
    },
  ])('$name: named, with its fix, and no value quoted', async ({ drop, set, says }) => {
    const { status, body, text } = await answer(initialize(), environment(drop, set as Vars));
    expect(status).toBe(500);
    expect(body.error.message).toContain('server misconfigured: ');
    expect(body.error.message).toContain(says);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(SECRET.slice(0, 16));
    expect(JSON.stringify(logged())).not.toContain(SECRET.slice(0, 16));
  });

  it("AUTH=oauth misconfigured: the authorization server's paths are answered the same, before its walls", async () => {
    const broken = environment(['OAUTH_KV'], { AUTH: 'oauth', MCP_RESOURCE: 'http://localhost/mcp' });
    for (const request of [
      new Request('http://localhost/.well-known/oauth-authorization-server', { headers: { Host: 'localhost' } }),
      new Request('http://localhost/register', {
        method: 'POST',
        headers: { Host: 'localhost', 'Content-Type': 'application/json' },
        body: '{}',
      }),
      new Request('http://localhost/token', { method: 'POST', headers: { Host: 'localhost' }, body: 'grant_type=authorization_code' }),
      new Request('http://localhost/authorize?client_id=x', { headers: { Host: 'localhost' } }),
      initialize('/mcp', { headers: { ...POST_HEADERS, Host: 'evil.example' } }),
    ]) {
      const { status, body } = await answer(request, broken);
      expect(status).toBe(500);
      expect(body.error.message).toContain('OAUTH_KV is not bound');
      expect(body.error.message).toContain('[[kv_namespaces]] binding = "OAUTH_KV"');
    }
    expect(configLines()).toHaveLength(1);
  });
});

describe("MCP Events' cursor key (EVENTS_CURSOR_KEY, docs/events.md choice 11)", () => {
  /** An events request to `host`, which the environment's ALLOWED_HOSTS lets in. */
  const eventsAt = (host: string, method = 'events/poll', params: Record<string, unknown> = { name: 'demo.note', cursor: null }) =>
    new Request(`http://${host}/mcp`, modernRequestOf(method, params, EVENTS, { Host: host }, 7));
  const beyondLoopback = (set: Vars = {}) => environment([], { ALLOWED_HOSTS: 'mcp.example.com', ...set });

  it.each(['events/poll', 'events/stream'])(
    '%s beyond loopback without the secret: 500 -32603 naming EVENTS_CURSOR_KEY and its fix, never served under the development key',
    async (method) => {
      const broken = beyondLoopback();
      await answer(eventsAt('mcp.example.com', method), broken);
      const { status, body } = await answer(eventsAt('mcp.example.com', method), broken);
      expect(status).toBe(500);
      expect(body.id).toBe(7);
      expect(body.error.code).toBe(-32603);
      expect(body.error.message).toMatch(/^server misconfigured: .*EVENTS_CURSOR_KEY/);
      expect(body.error.message).toContain('npx wrangler secret put EVENTS_CURSOR_KEY');
      expect(configLines()).toEqual([
        { msg: 'mcp.config.error', subject: 'EVENTS_CURSOR_KEY', error: expect.stringContaining('EVENTS_CURSOR_KEY') },
      ]);
    },
  );

  it('beyond loopback without the secret, events/list (no cursor sealed) is served; on loopback the development key serves polls', async () => {
    const list = await answer(eventsAt('mcp.example.com', 'events/list', {}), beyondLoopback());
    expect(list.status).toBe(200);
    const loopback = await answer(eventsAt('localhost'), environment());
    expect(loopback.status).toBe(200);
    expect(loopback.text).toContain('"resultType":"complete"');
  });

  it('beyond loopback with the secret: served', async () => {
    const { status, text } = await answer(eventsAt('mcp.example.com'), beyondLoopback({ EVENTS_CURSOR_KEY: SECRET }));
    expect(status).toBe(200);
    expect(text).toContain('"resultType":"complete"');
  });

  it.each([
    {
      name: 'a key under 32 bytes',
      set: { EVENTS_CURSOR_KEY: SECRET.slice(0, 20) },
      says: 'EVENTS_CURSOR_KEY: the event cursor key must be at least 32 bytes; set EVENTS_CURSOR_KEY',
    },
    {
      name: 'a previous key without a current one',
      set: { EVENTS_CURSOR_KEY_PREVIOUS: SECRET },
      says: 'EVENTS_CURSOR_KEY_PREVIOUS is set without EVENTS_CURSOR_KEY',
    },
    {
      name: 'a short previous key',
      set: { EVENTS_CURSOR_KEY: `${SECRET}-current`, EVENTS_CURSOR_KEY_PREVIOUS: SECRET.slice(0, 20) },
      says: 'EVENTS_CURSOR_KEY_PREVIOUS: the event cursor key must be at least 32 bytes',
    },
  ])('$name: 500 naming EVENTS_CURSOR_KEY, logged once, no value quoted', async ({ set, says }) => {
    const broken = environment([], set);
    await answer(eventsAt('localhost'), broken);
    const { status, body, text } = await answer(eventsAt('localhost'), broken);
    expect(configLines()).toEqual([
      { msg: 'mcp.config.error', subject: expect.stringMatching(/^EVENTS_CURSOR_KEY/), error: expect.stringContaining(says) },
    ]);
    expect(status).toBe(500);
    expect(body.error.message).toMatch(/^server misconfigured: .*EVENTS_CURSOR_KEY/);
    expect(body.error.message).toContain(says);
    expect(text).not.toContain(SECRET.slice(0, 16));
    expect(JSON.stringify(logged())).not.toContain(SECRET.slice(0, 16));
  });
});
