/**
 * The registrations, authorizations and token requests of the hosted and desktop clients people
 * connect to MCP servers with, as their public docs and issue threads describe them (sources
 * beside each): each registers, is told its registration's URI and token (RFC 7592), reads its
 * registration, is shown the consent page, and redeems its code for a token that opens a
 * session. A client whose shape this server refused would fail its users on their first try.
 */
import { describe, expect, it } from 'vitest';
import { base64url, consentPage, freshAddress, RESOURCE, send, whoami } from './oauth-flow.ts';

interface HostedClient {
  readonly name: string;
  /** Where its shape is documented. */
  readonly source: string;
  /** Its registration request, as it sends it. */
  readonly metadata: Record<string, unknown>;
  /** The redirect URI its authorization request names. */
  readonly redirect: string;
  /** Whether it names the resource (RFC 8707) on its authorization and token requests. */
  readonly resource: boolean;
}

/**
 * The scope each authorization asks for: what this server's challenge and metadata name
 * (`AUTH_SCOPES=mcp` in this project), which is where these clients take it from (Claude.ai
 * and Claude Code: the 401's `scope`, else `scopes_supported`; VS Code: `scopes_supported`).
 */
const SCOPE = 'mcp';

const GRANTS = ['authorization_code', 'refresh_token'];

const CLIENTS: readonly HostedClient[] = [
  {
    name: 'Claude.ai (web, Desktop and mobile connectors)',
    // A captured registration: PostHog/posthog#48397; still client_secret_post in
    // anthropics/claude-ai-mcp#1043; its authorize request (S256, state, scope, resource): #514.
    source: 'PostHog/posthog#48397, anthropics/claude-ai-mcp#1043, #514',
    metadata: {
      redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: GRANTS,
      response_types: ['code'],
      client_name: 'Claude',
    },
    redirect: 'https://claude.ai/api/mcp/auth_callback',
    resource: true,
  },
  {
    name: 'Claude Code',
    // Its client metadata document (anthropics/claude-code#44429): port-less loopback URIs, a
    // public client; it signs in on an ephemeral port (code.claude.com/docs/en/mcp). Registered
    // here by DCR, the body of its DCR fallback not being documented.
    source: 'anthropics/claude-code#44429, #12077',
    metadata: {
      client_name: 'Claude Code',
      client_uri: 'https://claude.ai',
      redirect_uris: ['http://localhost/callback', 'http://127.0.0.1/callback'],
      grant_types: GRANTS,
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
    redirect: 'http://localhost:54321/callback',
    resource: true,
  },
  {
    name: 'ChatGPT (connectors)',
    // Per-connector callback (developers.openai.com/apps-sdk/build/auth, makeplane/plane-mcp-server#165);
    // a DCR registration asking client_secret_post (gts360/django-oauth-toolkit-dcr#1); resource on both requests.
    source: 'developers.openai.com/apps-sdk/build/auth, gts360/django-oauth-toolkit-dcr#1',
    metadata: {
      client_name: 'ChatGPT',
      redirect_uris: ['https://chatgpt.com/connector/oauth/c0nn3ct0r'],
      grant_types: GRANTS,
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    },
    redirect: 'https://chatgpt.com/connector/oauth/c0nn3ct0r',
    resource: true,
  },
  {
    name: 'VS Code (GitHub Copilot)',
    // microsoft/vscode src/vs/base/common/oauth.ts (the registration; grant types filtered by
    // the server's grant_types_supported, scope its scopes_supported) and extHostAuthentication.ts
    // (loopback redirect on port 33418 first, resource on both requests).
    source: 'microsoft/vscode src/vs/base/common/oauth.ts',
    metadata: {
      client_name: 'Visual Studio Code',
      client_uri: 'https://code.visualstudio.com',
      grant_types: GRANTS,
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
      scope: 'mcp',
      redirect_uris: [
        'https://insiders.vscode.dev/redirect',
        'https://vscode.dev/redirect',
        'http://127.0.0.1/',
        'http://127.0.0.1:33418/',
      ],
    },
    redirect: 'http://127.0.0.1:33418/',
    resource: true,
  },
  {
    name: 'Cursor',
    // One registration with its custom scheme, its web callback and a loopback one (erp-mafia/accounted#2225,
    // bytebase/bytebase#20510), a public client (different-ai/openwork#3059); its resource handling is not documented.
    source: 'erp-mafia/accounted#2225, bytebase/bytebase#20510, different-ai/openwork#3059',
    metadata: {
      redirect_uris: [
        'cursor://anysphere.cursor-mcp/oauth/callback',
        'https://www.cursor.com/agents/mcp/oauth/callback',
        'http://localhost:8787/callback',
      ],
      token_endpoint_auth_method: 'none',
    },
    redirect: 'cursor://anysphere.cursor-mcp/oauth/callback',
    resource: false,
  },
  {
    name: 'Microsoft Copilot Studio',
    // A per-tool APIM consent redirect (SmartBear/smartbear-mcp#463, tableau/tableau-mcp#866);
    // no token_endpoint_auth_method, so client_secret_basic, its secret sent Basic (activepieces/activepieces#14397).
    source: 'SmartBear/smartbear-mcp#463, activepieces/activepieces#14397',
    metadata: { redirect_uris: ['https://global.consent.azure-apim.net/redirect/cr5f1-5fmcp-2dserver-5f1a2b3c'] },
    redirect: 'https://global.consent.azure-apim.net/redirect/cr5f1-5fmcp-2dserver-5f1a2b3c',
    resource: false,
  },
];

/** The token request, authenticated as the registration says: none, client_secret_post or client_secret_basic. */
function tokenRequest(client: HostedClient, registered: Record<string, string>, code: string, verifier: string): RequestInit {
  const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: client.redirect, code_verifier: verifier });
  if (client.resource) body.set('resource', RESOURCE);
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
  const method = registered.token_endpoint_auth_method;
  if (method === 'client_secret_basic') {
    headers.Authorization = `Basic ${btoa(`${encodeURIComponent(registered.client_id!)}:${encodeURIComponent(registered.client_secret!)}`)}`;
  } else {
    body.set('client_id', registered.client_id!);
    if (method === 'client_secret_post') body.set('client_secret', registered.client_secret!);
  }
  return { method: 'POST', headers, body };
}

describe.each(CLIENTS)('$name', (client) => {
  it('registers, reads its registration, is authorized and redeems its code for a token that opens a session', async () => {
    const address = freshAddress();
    const registration = await send('/oauth/register', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(client.metadata),
      address,
    });
    expect(registration.status, await registration.clone().text()).toBe(201);
    const registered = (await registration.json()) as Record<string, string>;
    const read = await send(new URL(registered.registration_client_uri!).pathname, {
      headers: { Authorization: `Bearer ${registered.registration_access_token}` },
      address,
    });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { redirect_uris: string[] }).redirect_uris).toEqual(client.metadata.redirect_uris);

    const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
    const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: registered.client_id!,
      redirect_uri: client.redirect,
      state: 'st4te',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope: SCOPE,
      ...(client.resource && { resource: RESOURCE }),
    });
    const consent = await consentPage(query, address);
    const approved = await send('/authorize', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: consent.cookie },
      body: new URLSearchParams({ handle: consent.handle, user: 'hosted-user', decision: 'approve' }),
      address,
    });
    expect(approved.status, `consent: ${await approved.clone().text()}`).toBe(302);
    const location = new URL(approved.headers.get('Location')!);
    expect(`${location.origin === 'null' ? `${location.protocol}//${location.host}` : location.origin}${location.pathname}`).toBe(
      client.redirect.split('?')[0],
    );
    expect(location.searchParams.get('state')).toBe('st4te');
    const code = location.searchParams.get('code')!;

    const token = await send('/oauth/token', { ...tokenRequest(client, registered, code, verifier), address });
    expect(token.status, await token.clone().text()).toBe(200);
    const tokens = (await token.json()) as { access_token: string; token_type: string; scope?: string };
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.scope, 'the scope granted').toBe(SCOPE);
    expect((await whoami(tokens.access_token)).id).toContain('hosted-user');
  });
});
