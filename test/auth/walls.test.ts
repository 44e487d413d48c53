/**
 * Every route the Worker serves is behind the same walls as the endpoint (issue 42): the
 * resource metadata at both RFC 9728 addresses, the operator's routes, the not-found answer
 * (an unknown path, the endpoint spelled otherwise) — a Host or Origin not allowed is 403
 * before anything else, so a foreign Host learns no `resource` named after itself, no CORS
 * grant, and not whether an admin token is right. Checked with AUTH=jwt (the project's) and
 * AUTH=none, on a Worker with the operator's routes served (ADMIN_TOKEN and a registry).
 */
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { createMcpWorker } from '../../src/lib.ts';
import { TEST_ADMIN_TOKEN } from '../support/tokens.ts';

const worker = createMcpWorker<Env>({ sessions: (e) => e.MCP_SESSION, principals: (e) => e.MCP_PRINCIPALS });

const ADMIN = { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

/** A route, how it is asked, and what an allowed Host gets there in each mode. */
const ROUTES: { name: string; path: string; method: string; headers?: Record<string, string>; jwt: number; none: number }[] = [
  { name: 'the path-suffixed resource metadata', path: '/.well-known/oauth-protected-resource/mcp', method: 'GET', jwt: 200, none: 404 },
  { name: 'the root resource metadata', path: '/.well-known/oauth-protected-resource', method: 'GET', jwt: 200, none: 404 },
  { name: 'a preflight of the metadata', path: '/.well-known/oauth-protected-resource/mcp', method: 'OPTIONS', jwt: 404, none: 404 },
  { name: 'an admin list with the admin token', path: '/admin/principals/p', method: 'GET', headers: ADMIN, jwt: 200, none: 200 },
  { name: 'an admin list without a token', path: '/admin/principals/p', method: 'GET', jwt: 401, none: 401 },
  {
    name: 'an admin session end with the admin token',
    path: `/admin/principals/p/sessions/${'A'.repeat(43)}`,
    method: 'DELETE',
    headers: ADMIN,
    jwt: 404,
    none: 404,
  },
  { name: 'an admin revocation without a token', path: '/admin/principals/p/revoke', method: 'POST', jwt: 401, none: 401 },
  { name: 'an unknown path', path: '/elsewhere', method: 'GET', jwt: 404, none: 404 },
  { name: 'the endpoint spelled otherwise', path: '/%6Dcp', method: 'POST', jwt: 404, none: 404 },
  { name: 'the endpoint', path: '/mcp', method: 'DELETE', jwt: 401, none: 400 },
];

const MODES: { mode: 'jwt' | 'none'; vars: Record<string, string> }[] = [
  { mode: 'jwt', vars: { ADMIN_TOKEN: TEST_ADMIN_TOKEN } },
  { mode: 'none', vars: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, AUTH: 'none' } },
];

async function send(vars: Record<string, string>, origin: string, path: string, method: string, headers: Record<string, string>) {
  const host = new URL(origin).host;
  return worker.fetch(
    new Request(`${origin}${path}`, { method, headers: { Host: host, ...headers } }),
    { ...env, ...vars },
    createExecutionContext(),
  );
}

describe.each(MODES)('AUTH=$mode', ({ mode, vars }) => {
  const rows = ROUTES.map((route) => ({ ...route, allowed: route[mode] }));

  it.each(rows)('$name at an allowed Host: $allowed', async ({ path, method, headers, allowed }) => {
    const response = await send(vars, 'http://localhost', path, method, headers ?? {});
    expect(response.status).toBe(allowed);
    await response.body?.cancel();
  });

  it.each(rows)('$name at Host evil.example: 403 naming ALLOWED_HOSTS', async ({ path, method, headers }) => {
    const response = await send(vars, 'http://evil.example', path, method, headers ?? {});
    expect(response.status).toBe(403);
    expect(response.headers.get('Access-Control-Allow-Origin')).toBeNull();
    expect(response.headers.get('WWW-Authenticate')).toBeNull();
    const text = await response.text();
    expect(text).toContain('host \\"evil.example\\" is not allowed (add it to ALLOWED_HOSTS)');
    expect(text).not.toContain('"resource"');
  });

  it.each(rows)('$name from Origin http://evil.example: 403 naming ALLOWED_ORIGINS', async ({ path, method, headers }) => {
    const response = await send(vars, 'http://localhost', path, method, { Origin: 'http://evil.example', ...headers });
    expect(response.status).toBe(403);
    expect(response.headers.get('Access-Control-Allow-Origin')).toBeNull();
    expect(await response.text()).toContain('origin \\"http://evil.example\\" is not allowed (add it to ALLOWED_ORIGINS)');
  });
});

describe('the resource metadata at an allowed Host (AUTH=jwt)', () => {
  it('names the resource at that Host, readable by any allowed page', async () => {
    const response = await send({}, 'http://127.0.0.1', '/.well-known/oauth-protected-resource/mcp', 'GET', {
      Origin: 'http://localhost',
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { resource: string }).resource).toBe('http://127.0.0.1/mcp');
    expect(response.headers.get('Access-Control-Allow-Origin')).toBe('*');
  });
});
