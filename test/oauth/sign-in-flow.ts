/**
 * A browser and a client through `/authorize` with an identity source (SIGN_IN=oidc, access,
 * github): a Worker of its own over the oauth project's environment with the source's vars, the
 * browser's cookies, the consent form answered, and what the client's redirect URI hears.
 * Shared by the sign-in tests of each source.
 */
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, vi } from 'vitest';
import { userIdOf } from '../../src/auth/sign-in/identity.ts';
import { createMcpWorker } from '../../src/lib.ts';
import { authorizationQuery, CLIENT, freshAddress, kvCount, REDIRECT, redeem } from './oauth-flow.ts';

export const ORIGIN = 'http://localhost';
export const CALLBACK = `${ORIGIN}/authorize/callback`;

/**
 * `fetch` to each origin of `answers` answered by its handler, inside the test (the Worker runs
 * in the test's isolate, so its upstream requests come here too); any other origin as before.
 */
export function interceptFetch(answers: Record<string, (request: Request) => Response | Promise<Response>>): void {
  const real = globalThis.fetch;
  vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    const answer = answers[new URL(request.url).origin];
    return answer === undefined ? real(request) : answer(request);
  });
}

export type Deployment = ReturnType<typeof deployment>;

/** A Worker of its own with `vars` over the project's environment; `headers` on every request (an edge's, such as Access's). */
export function deployment(vars: Record<string, string>) {
  const worker = createMcpWorker<Env>({ sessions: (e) => e.MCP_SESSION, rateLimit: (e) => e.MCP_RATE_LIMIT });
  const environment = { ...env, ...vars } as Env;
  const address = freshAddress();
  const fetch = (url: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('CF-Connecting-IP', address);
    return worker.fetch(new Request(url, { redirect: 'manual', ...init, headers }), environment, createExecutionContext());
  };
  return { fetch };
}

/** The cookies a response sets, as a browser would send them back (cleared ones dropped). */
export function cookiesOf(response: Response, jar = new Map<string, string>()): Map<string, string> {
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const [name, value] = pair!.split('=');
    if (/Max-Age=0/.test(line)) jar.delete(name!);
    else jar.set(name!, value!);
  }
  return jar;
}
export const cookieHeader = (jar: Map<string, string>) => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');

/** A registered client's authorization request, sent (with `headers`): the answer, and the browser's cookies. */
export async function authorize(d: Deployment, headers: Record<string, string> = {}) {
  const registered = await d.fetch(`${ORIGIN}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(CLIENT),
  });
  expect(registered.status).toBe(201);
  const clientId = ((await registered.json()) as { client_id: string }).client_id;
  const { query, verifier } = await authorizationQuery(clientId, 'mcp');
  const response = await d.fetch(`${ORIGIN}/authorize?${query}`, { headers });
  return { d, clientId, verifier, response, jar: cookiesOf(response) };
}

/** The authorization request sent to an upstream: our 302 there, and the browser's cookies. */
export async function start(d: Deployment) {
  const sent = await authorize(d);
  expect(sent.response.status).toBe(302);
  return { ...sent, location: sent.response.headers.get('Location')! };
}

/** Back from the upstream, at `url`, with the browser's cookies. */
export const back = (d: Deployment, url: string, jar: Map<string, string>) =>
  d.fetch(url, { headers: { Cookie: cookieHeader(jar), Accept: 'text/html' } });

/** The consent page's form answered: `decision`, and whatever else a form could carry (and `headers`, an edge's). */
export async function answer(d: Deployment, jar: Map<string, string>, page: string, fields: Record<string, string>, headers = {}) {
  const handle = /name="handle" value="([^"]+)"/.exec(page)![1]!;
  return d.fetch(`${ORIGIN}/authorize`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookieHeader(jar) },
    body: new URLSearchParams({ handle, ...fields }),
  });
}

/** The consent page (200) allowed, with `fields` and `headers`: the client's tokens. */
export async function approveAndRedeem(
  flow: { d: Deployment; jar: Map<string, string>; clientId: string; verifier: string },
  consent: Response,
  fields: Record<string, string> = {},
  headers: Record<string, string> = {},
) {
  expect(consent.status).toBe(200);
  cookiesOf(consent, flow.jar);
  const page = await consent.text();
  const approved = await answer(flow.d, flow.jar, page, { ...fields, decision: 'approve' }, headers);
  expect(approved.status).toBe(302);
  const redirect = new URL(approved.headers.get('Location')!);
  expect(`${redirect.origin}${redirect.pathname}`).toBe(REDIRECT);
  // Redeemed as any client would (the project's Worker: the same OAUTH_KV and resource).
  const tokens = await redeem(flow.clientId, redirect.searchParams.get('code')!, flow.verifier, freshAddress());
  return { page, consent, tokens: tokens as { access_token: string } };
}

/** The grants `subject` holds under `issuer`. */
export const grantsOf = (issuer: string, subject: string) => kvCount(env.OAUTH_KV, `grant:${userIdOf({ issuer, subject })}:`);

/** The client's redirect URI hears `error`, with its state; nothing was granted to `subject` of `issuer`. */
export async function expectClientError(response: Response, issuer: string, subject: string, error = 'access_denied') {
  expect(response.status).toBe(302);
  const url = new URL(response.headers.get('Location')!);
  expect(`${url.origin}${url.pathname}`).toBe(REDIRECT);
  expect(url.searchParams.get('error')).toBe(error);
  expect(url.searchParams.get('state')).toBe('xyz');
  expect(url.searchParams.get('code')).toBeNull();
  expect(await grantsOf(issuer, subject)).toBe(0);
}
