/**
 * DO_JURISDICTION and DO_LOCATION_HINT through the fixture's own Worker (its default export's
 * fetch, with a copy of the environment that sets them), in the local workerd as it is — no
 * jurisdiction stood in (test/placement/ has one): a value not in the runtime's list, and a
 * jurisdiction this runtime refuses, are each the configuration error that names the fix,
 * answered to every request and logged once; a location hint alone, which workerd accepts,
 * serves as before.
 */
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { JURISDICTIONS, LOCATION_HINTS } from '../../src/core/placement.ts';
import fixture from '../fixture-server/index.ts';
import { captureLogLines } from '../support/log-lines.ts';
import { callTool, initializeRequest, POST_HEADERS } from '../support/mcp-http.ts';
import { SseReader, message } from '../support/sse-reader.ts';

/** The environment with `set` over it: a fresh one to the Worker (its state is kept per env object), as a new isolate's. */
const environment = (set: Record<string, string>) => ({ ...env, ...set }) as unknown as Env;

const post = (body: unknown, headers: Record<string, string> = {}) =>
  new Request('http://localhost/mcp', { method: 'POST', headers: { ...POST_HEADERS, ...headers }, body: JSON.stringify(body) });

const fetchFixture = (request: Request, environment: Env) =>
  fixture.fetch(request as Request<unknown, IncomingRequestCfProperties>, environment, createExecutionContext());

async function misconfigured(environment: Env): Promise<string> {
  const response = await fetchFixture(post(initializeRequest()), environment);
  expect(response.status).toBe(500);
  const body = (await response.json()) as { error: { code: number; message: string } };
  expect(body.error.code).toBe(-32603);
  return body.error.message;
}

const lines = captureLogLines();
const configLines = () =>
  lines()
    .filter(({ line }) => line.msg === 'mcp.config.error')
    .map(({ line }) => line);

describe('a placement that does not parse', () => {
  it.each<{ vars: Record<string, string>; says: string }>([
    {
      vars: { DO_JURISDICTION: 'EU' },
      says: `DO_JURISDICTION (the jurisdiction every Durable Object is restricted to) must be one of ${JURISDICTIONS.join(', ')}, or unset for none; got "EU"`,
    },
    {
      vars: { DO_LOCATION_HINT: 'europe' },
      says: `DO_LOCATION_HINT (where a new Durable Object is created) must be one of ${LOCATION_HINTS.join(', ')}, or unset for none; got "europe"`,
    },
  ])('$vars: every request is told the variable and its values, logged once', async ({ vars, says }) => {
    const broken = environment(vars);
    expect(await misconfigured(broken)).toBe(`server misconfigured: ${says}`);
    expect(await misconfigured(broken)).toBe(`server misconfigured: ${says}`);
    expect(configLines()).toEqual([{ msg: 'mcp.config.error', subject: '[vars]', error: says }]);
  });

  it('beside another variable that does not parse: one answer naming both', async () => {
    const message = await misconfigured(environment({ RESPONSE_MODE: 'xml', DO_JURISDICTION: 'europe' }));
    expect(message).toMatch(/^server misconfigured, 2 problems: \(1\) RESPONSE_MODE .* \(2\) DO_JURISDICTION /);
  });
});

describe('a jurisdiction this runtime refuses (a local workerd has none)', () => {
  it('every request is told so, with the fix for local development, once for all the bindings', async () => {
    const message = await misconfigured(environment({ DO_JURISDICTION: 'eu' }));
    expect(message).toBe(
      'server misconfigured: DO_JURISDICTION is "eu", and the runtime refused it for MCP_SESSION ("Jurisdiction restrictions are not implemented in workerd."). ' +
        'A local workerd (wrangler dev, vitest) has no jurisdictions: leave DO_JURISDICTION empty there (a line `DO_JURISDICTION=` in .dev.vars, ' +
        'or a test project whose vars leave it out) and set it only where the Worker is deployed',
    );
    expect(configLines().map(({ subject }) => subject)).toEqual(['DO_JURISDICTION']);
  });

  it('empty, as .dev.vars leaves it: no jurisdiction, served', async () => {
    const response = await fetchFixture(post(initializeRequest()), environment({ DO_JURISDICTION: '' }));
    expect(response.status).toBe(200);
    await response.body?.cancel();
  });
});

describe('a location hint alone (workerd accepts hints)', () => {
  it('a session is created with it and served', async () => {
    const hinted = environment({ DO_LOCATION_HINT: 'weur' });
    const opened = await fetchFixture(post(initializeRequest()), hinted);
    expect(opened.status).toBe(200);
    await opened.body?.cancel();
    const session = { 'Mcp-Session-Id': opened.headers.get('Mcp-Session-Id')!, 'MCP-Protocol-Version': '2025-11-25' };
    const initialized = await fetchFixture(post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session), hinted);
    expect(initialized.status).toBe(202);
    const reader = new SseReader(await fetchFixture(post(callTool(1, 'echo', { text: 'hinted' }), session), hinted));
    try {
      const answers = (await reader.all()).filter(({ data }) => data !== '').map(message);
      expect(JSON.stringify(answers)).toContain('hinted');
    } finally {
      await reader.cancel();
    }
  });
});
