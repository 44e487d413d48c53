/**
 * The demo's sign-in page believes any name typed into it (issue 42): it serves only where the
 * request's host and MCP_RESOURCE's are both loopback (localhost, 127.0.0.0/8, [::1]), or where
 * the operator set `DEMO_SIGN_IN = "anyone-is-anyone"`. Elsewhere `/authorize` is refused with a
 * 403 that says what to configure — an HTML page to a browser, an OAuth error otherwise, never
 * a 500 — before anything is stored, and the refusal is logged once. A page of the deployment's
 * own (`oauth.authorize`) is served wherever the walls let it.
 */
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMcpWorker } from '../../src/lib.ts';
import { authorizationQuery, CLIENT, freshAddress } from './oauth-flow.ts';

const HOSTS = 'localhost,localhost:8787,127.0.0.1,127.0.0.2,[::1],mcp.example.com,app.example';
const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

type Options = Parameters<typeof createMcpWorker<Env>>[0]['oauth'];

/** A Worker of its own with `vars` over the project's, one environment (so one provider) for all its requests. */
function deployment(vars: Record<string, string>, oauth?: Options) {
  const worker = createMcpWorker<Env>({ sessions: (e) => e.MCP_SESSION, ...(oauth !== undefined && { oauth }) });
  const environment = { ...env, ALLOWED_HOSTS: HOSTS, ...vars } as Env & { MCP_RESOURCE: string };
  const address = freshAddress();
  const fetch = (url: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('CF-Connecting-IP', address);
    return worker.fetch(new Request(url, { redirect: 'manual', ...init, headers }), environment, createExecutionContext());
  };
  /** `GET /authorize` at `origin` for a client registered at MCP_RESOURCE's origin. */
  const authorize = async (origin: string, headers: Record<string, string> = {}) => {
    const resource = environment.MCP_RESOURCE;
    const registered = await fetch(`${new URL(resource).origin}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(CLIENT),
    });
    expect(registered.status).toBe(201);
    const { query } = await authorizationQuery(((await registered.json()) as { client_id: string }).client_id, 'mcp');
    query.set('resource', resource);
    return fetch(`${origin}/authorize?${query}`, { headers });
  };
  return { fetch, authorize };
}

const SERVED = /name="handle" value="[^"]+"/;

async function expectRefusedPage(response: Response) {
  expect(response.status).toBe(403);
  expect(response.headers.get('Content-Type')).toBe('text/html; charset=utf-8');
  expect(response.headers.get('Set-Cookie')).toBeNull();
  // The sign-in pages' walls: no script runs on it, no page frames it.
  expect(response.headers.get('X-Frame-Options')).toBe('DENY');
  expect(response.headers.get('Content-Security-Policy')).toMatch(/default-src 'none'.*frame-ancestors 'none'/);
  const text = await response.text();
  expect(text).not.toMatch(SERVED);
  expect(text).toContain('oauth: { authorize }');
  expect(text).toContain('SIGN_IN = &#34;oidc&#34;');
  expect(text).toContain('DEMO_SIGN_IN = &#34;anyone-is-anyone&#34;');
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('beyond loopback, the demo sign-in page is refused, naming the fix', () => {
  it.each([
    { name: 'a non-loopback Host and MCP_RESOURCE', resource: 'https://mcp.example.com/mcp', origin: 'https://mcp.example.com' },
    { name: 'a loopback Host, MCP_RESOURCE not', resource: 'https://mcp.example.com/mcp', origin: 'http://localhost' },
    { name: 'MCP_RESOURCE loopback, the Host not', resource: 'http://localhost/mcp', origin: 'http://app.example' },
    { name: 'a Host whose name starts as loopback', resource: 'http://localhost/mcp', origin: 'http://127.0.0.1.app.example' },
  ])('$name: a browser gets a 403 page', async ({ resource, origin }) => {
    const { authorize } = deployment({ MCP_RESOURCE: resource, ALLOWED_HOSTS: `${HOSTS},127.0.0.1.app.example` });
    await expectRefusedPage(await authorize(origin, { Accept: HTML }));
  });

  it('a client that does not ask for HTML gets an OAuth error', async () => {
    const { authorize } = deployment({ MCP_RESOURCE: 'https://mcp.example.com/mcp' });
    const response = await authorize('https://mcp.example.com', { Accept: 'application/json' });
    expect(response.status).toBe(403);
    const body = (await response.json()) as { error: string; error_description: string };
    expect(body.error).toBe('access_denied');
    expect(body.error_description).toContain('oauth: { authorize }');
    expect(body.error_description).toContain('DEMO_SIGN_IN = "anyone-is-anyone"');
  });

  it('a consent form posted there is refused too, and grants nothing', async () => {
    const { fetch } = deployment({ MCP_RESOURCE: 'https://mcp.example.com/mcp' });
    const response = await fetch('https://mcp.example.com/authorize', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: HTML },
      body: new URLSearchParams({ handle: 'x', user: 'admin', decision: 'approve' }),
    });
    await expectRefusedPage(response);
  });

  it('logs why once, however many requests are refused', async () => {
    const lines = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { authorize } = deployment({ MCP_RESOURCE: 'https://mcp.example.com/mcp' });
    for (let i = 0; i < 3; i++) expect((await authorize('https://mcp.example.com', { Accept: HTML })).status).toBe(403);
    const refusals = lines.mock.calls.map(([line]) => String(line)).filter((line) => line.includes('mcp.oauth.demo_sign_in_refused'));
    expect(refusals).toHaveLength(1);
    expect(JSON.parse(refusals[0]!)).toMatchObject({
      msg: 'mcp.oauth.demo_sign_in_refused',
      host: 'mcp.example.com',
      resource_host: 'mcp.example.com',
    });
  });
});

describe('the demo sign-in page is served', () => {
  it.each([
    { resource: 'http://localhost/mcp', origin: 'http://localhost' },
    { resource: 'http://localhost:8787/mcp', origin: 'http://127.0.0.1' },
    { resource: 'http://127.0.0.1/mcp', origin: 'http://127.0.0.2' },
    { resource: 'http://[::1]/mcp', origin: 'http://[::1]' },
  ])('on loopback: MCP_RESOURCE $resource, at $origin', async ({ resource, origin }) => {
    const { authorize } = deployment({ MCP_RESOURCE: resource });
    const response = await authorize(origin, { Accept: HTML });
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(SERVED);
  });

  it('anywhere with DEMO_SIGN_IN = "anyone-is-anyone"', async () => {
    const { authorize } = deployment({ MCP_RESOURCE: 'https://mcp.example.com/mcp', DEMO_SIGN_IN: 'anyone-is-anyone' });
    const response = await authorize('https://mcp.example.com', { Accept: HTML });
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(SERVED);
  });
});

describe("a deployment's own sign-in page (oauth.authorize)", () => {
  it('is served beyond loopback: the refusal is the demo’s alone', async () => {
    const { authorize } = deployment(
      { MCP_RESOURCE: 'https://mcp.example.com/mcp' },
      { authorize: { fetch: () => new Response('the identity provider', { status: 200 }) } },
    );
    const response = await authorize('https://mcp.example.com', { Accept: HTML });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('the identity provider');
  });
});
