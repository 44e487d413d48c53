/**
 * The pages of `/authorize` (src/auth/sign-in/pages.ts) forbid what they do not ship: no script,
 * style, image or other fetch runs on them, whatever a client or an upstream put in the markup
 * (escaping is the first wall, this the second). The consent page says it in a <meta> placed
 * before any content (its headers are the OAuth provider's); the error page in its header, with
 * the anti-framing it always had. The browser's own reading of both: `npm run oidc-browser`.
 */
import type { ConsentDescription } from '@cloudflare/workers-oauth-provider';
import { describe, expect, it } from 'vitest';
import { consentHtml, errorPage, PAGE_CSP } from '../../src/auth/sign-in/pages.ts';

const described: ConsentDescription = {
  clientId: 'client',
  clientName: `<script>alert(1)</script><img src=x onerror=alert(2)>`,
  redirectUri: 'http://127.0.0.1:9/callback',
  redirectHost: '127.0.0.1',
  redirectIsLoopback: true,
  scope: ['mcp'],
};
const scopes = { granted: ['mcp'], refused: [] };

describe('the sign-in pages forbid scripts', () => {
  it('forbids every script, style and fetch, and <base>', () => {
    expect(PAGE_CSP.split(';').map((d) => d.trim())).toEqual(["default-src 'none'", "base-uri 'none'"]);
  });

  it.each([
    ['a sign-in', { demo: false, display: 'alice@example.test', issuer: 'https://idp.example' }],
    ['the demo', { demo: true }],
  ] as const)('the consent page (%s) carries the policy in a <meta> before any content, and leaves form-action open', (_, signer) => {
    const page = consentHtml(described, scopes, 'handle', signer);
    const meta = `<meta http-equiv="Content-Security-Policy" content="${PAGE_CSP}">`;
    // Before <title> and every element a client or upstream could have put words into.
    expect(page.indexOf(meta)).toBeGreaterThan(0);
    expect(page.indexOf(meta)).toBeLessThan(page.indexOf('<title>'));
    // The POST's redirect goes to any client's redirect URI: form-action would refuse it.
    expect(page).not.toContain('form-action');
    expect(page).not.toContain('<script>');
    expect(page).toContain('&#60;script&#62;alert(1)&#60;/script&#62;&#60;img src=x onerror=alert(2)&#62;');
  });

  it('the error page sends the policy, no form target, and refuses framing', () => {
    const response = errorPage(400, 'Sign-in not completed', '<script>alert(1)</script>');
    const csp = response.headers.get('Content-Security-Policy') ?? '';
    expect(csp.split(';').map((d) => d.trim())).toEqual([
      "default-src 'none'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ]);
    expect(response.headers.get('X-Frame-Options')).toBe('DENY');
  });
});
