/**
 * AUTH=jwt: a token cannot be recalled at its issuer, so a revocation marks its principal's
 * registry (`revoked_before`) and every admission after it — a new session, a new task — checks
 * the token's `iat` against the mark: a token issued before the revocation (or one that says
 * nothing of when it was issued) is answered 401 `invalid_token` with the challenge, so that its
 * client gets a new one; a token issued after it is served. Another principal's tokens are not
 * concerned.
 */
import { describe, expect, it } from 'vitest';
import { errorOf, initializeRequest, postRaw } from '../support/mcp-http.ts';
import { modernRequest } from '../support/modern-http.ts';
import { admin, holdings, newPrincipal } from '../support/principals.ts';
import { TASK_CLIENT } from '../support/task-http.ts';
import { bearer } from '../support/tokens.ts';

const initialize = (auth: Record<string, string>) => postRaw(initializeRequest('2025-11-25'), auth);
const taskCall = (auth: Record<string, string>) =>
  modernRequest('tools/call', { name: 'slow_compute', arguments: { seconds: 30, label: 'x' } }, TASK_CLIENT, auth);
const seconds = () => Math.floor(Date.now() / 1000);

/** The answer to a token recalled by a revocation: the challenge of an invalid token, no session. */
async function expectRecalled(response: Response): Promise<void> {
  expect(response.headers.get('Mcp-Session-Id')).toBeNull();
  const challenge = response.headers.get('WWW-Authenticate') ?? '';
  expect(challenge).toMatch(/^Bearer /);
  expect(challenge).toContain('error="invalid_token"');
  expect(challenge).toContain('resource_metadata="http://localhost/.well-known/oauth-protected-resource/mcp"');
  expect(challenge).toContain('scope="mcp"');
  const error = await errorOf(response);
  expect(error.status).toBe(401);
  expect(error.reason).toBe('token_revoked');
}

describe('a token issued before its principal was revoked (AUTH=jwt)', () => {
  it('opens no new session or task after the revocation (401 invalid_token); a token issued after it is served', async () => {
    const alice = await newPrincipal('alice');
    const issued = seconds() - 60;
    const old = await bearer(alice.subject, { issuedAt: issued });
    const opened = await initialize(old);
    expect(opened.status).toBe(200);
    await opened.body?.cancel();

    const revokedIn = seconds(); // the second the revocation starts in (or one before it)
    const revoked = await admin('POST', alice.id, '/revoke');
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toMatchObject({ sessions: 1 });

    await expectRecalled(await initialize(old));
    await expectRecalled(await taskCall(old));
    // Issued in the second of the revocation: `iat` is in seconds, the mark to the millisecond,
    // so nothing shows it was issued after; refused too.
    await expectRecalled(await initialize(await bearer(alice.subject, { issuedAt: revokedIn })));
    // No `iat`: nothing says it was issued after the revocation.
    await expectRecalled(await initialize(await bearer(alice.subject, { issuedAt: null })));
    expect((await holdings(alice.id)).sessions).toEqual([]);

    // A token issued after the revocation (the client authorized again): served.
    const fresh = await bearer(alice.subject, { issuedAt: seconds() + 1 });
    const reopened = await initialize(fresh);
    expect(reopened.status).toBe(200);
    await reopened.body?.cancel();
    const task = await taskCall(fresh);
    expect(task.status).toBe(200);
    await task.body?.cancel();
    expect((await holdings(alice.id)).sessions).toHaveLength(1);
  });

  it('concerns that principal alone: another’s token issued as early is served', async () => {
    const alice = await newPrincipal('alice');
    const bob = await newPrincipal('bob');
    const issued = seconds() - 60;
    expect((await admin('POST', alice.id, '/revoke')).status).toBe(200);
    const bobs = await initialize(await bearer(bob.subject, { issuedAt: issued }));
    expect(bobs.status).toBe(200);
    await bobs.body?.cancel();
  });

  it('a revocation of one grant marks nothing: the principal’s tokens issued before it are served', async () => {
    const alice = await newPrincipal('alice');
    const old = await bearer(alice.subject, { issuedAt: seconds() - 60 });
    expect((await admin('POST', alice.id, '/revoke?grant=another')).status).toBe(200);
    const opened = await initialize(old);
    expect(opened.status).toBe(200);
    await opened.body?.cancel();
  });
});
