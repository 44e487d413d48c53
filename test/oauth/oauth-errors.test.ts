import { describe, expect, it } from 'vitest';
import { asOAuthError, OAuthHttpError, oauthErrorResponse } from '../../src/auth/oauth-errors.ts';
import { httpErrors } from '../../src/core/errors.ts';

describe('asOAuthError', () => {
  it.each([
    { name: 'a forbidden Host', error: httpErrors.forbidden('host "evil" is not allowed'), status: 403, code: 'access_denied' },
    { name: 'an oversized body', error: httpErrors.payloadTooLarge(65_536), status: 413, code: 'invalid_request' },
    { name: 'a body that is not UTF-8', error: httpErrors.parseError('the body is not valid UTF-8'), status: 400, code: 'invalid_request' },
    { name: 'the rate limit', error: httpErrors.tooManyRequests(60), status: 429, code: 'temporarily_unavailable' },
    { name: 'an internal error', error: httpErrors.internal(), status: 500, code: 'server_error' },
    { name: 'an OAuth error', error: new OAuthHttpError(400, 'invalid_client', 'no such client'), status: 400, code: 'invalid_client' },
    { name: 'anything else', error: new TypeError('secret detail'), status: 500, code: 'server_error' },
  ])('answers $name with $status $code', ({ error, status, code }) => {
    expect(asOAuthError(error)).toMatchObject({ status, code });
  });

  it('keeps the headers of a refusal (Retry-After), and never a detail of a bug', async () => {
    const limited = oauthErrorResponse(asOAuthError(httpErrors.tooManyRequests(60)));
    expect(limited.headers.get('Retry-After')).toBe('60');
    expect(limited.headers.get('Cache-Control')).toBe('no-store');
    expect(limited.headers.get('Content-Type')).toBe('application/json');
    const bug = await oauthErrorResponse(asOAuthError(new TypeError('secret detail'))).text();
    expect(JSON.parse(bug)).toEqual({ error: 'server_error', error_description: 'Internal error' });
  });
});
