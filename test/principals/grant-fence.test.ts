/**
 * A revoked grant is fenced in its principal's registry before what it holds is listed and
 * ended: a request the grant's token authorized just before the revocation, whose session or
 * task is admitted after the list, is refused `grant_revoked` — else it would run under a grant
 * that no longer exists, and no walk would end it. The principal's other grants are admitted.
 * Revoking the whole principal marks it instead: a credential dated before the mark is refused.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { McpHttpError } from '../../src/core/errors.ts';
import { PrincipalControl, type ObjectNamespace } from '../../src/principals/principal-control.ts';
import { PrincipalHoldings } from '../../src/principals/principal-holdings.ts';
import { registryOf } from '../../src/principals/principal-registry.ts';

const LIMITS = { maxSessionsPerPrincipal: 10, maxTasksPerPrincipal: 10 };
let principals = 0;
const newPrincipal = () => `oauth#fenced-${principals++}-${crypto.randomUUID()}`;
const sessions = env.MCP_SESSION as unknown as ObjectNamespace;
const control = () => new PrincipalControl({ registry: env.MCP_PRINCIPALS, sessions, tasks: env.MCP_TASKS });
const holdings = (principal: string, grant: string) => new PrincipalHoldings(env.MCP_PRINCIPALS, sessions, principal, { grant }, LIMITS);

async function refusal(admission: Promise<void>): Promise<McpHttpError | undefined> {
  return admission.then(
    () => undefined,
    (error: unknown) => error as McpHttpError,
  );
}

describe('a revoked grant, fenced', () => {
  it('refuses what its requests would create after the revocation; other grants go on', async () => {
    const principal = newPrincipal();
    // Held before the revocation: in its list, so ended.
    await holdings(principal, 'grant-a').admitSession('held-session');
    const revocation = await control().revoke(principal, 'grant-a');
    expect(revocation.sessions).toBe(0); // the session object was never created: nothing to answer 204
    expect(await registryOf(env.MCP_PRINCIPALS, principal).list()).toEqual([]);

    // A request its token authorized before the revocation, admitted after it.
    for (const late of [
      holdings(principal, 'grant-a').admitSession('late-session'),
      holdings(principal, 'grant-a').admitTask('late-task', Date.now() + 60_000),
    ]) {
      const error = await refusal(late);
      expect(error).toBeInstanceOf(McpHttpError);
      expect(error).toMatchObject({ status: 403, data: { reason: 'grant_revoked' } });
    }
    expect(await registryOf(env.MCP_PRINCIPALS, principal).list()).toEqual([]);

    // The principal's other grant, and another principal's grant of the same id, are admitted.
    expect(await refusal(holdings(principal, 'grant-b').admitSession('other-grant'))).toBeUndefined();
    expect(await refusal(holdings(newPrincipal(), 'grant-a').admitSession('other-principal'))).toBeUndefined();
    expect((await registryOf(env.MCP_PRINCIPALS, principal).list()).map((held) => held.id)).toEqual(['other-grant']);
  });

  it('revoking the principal as a whole (no grant: AUTH=jwt, the operator) fences nothing: new tokens may open new sessions', async () => {
    const principal = newPrincipal();
    await control().revoke(principal);
    await control().revoke(principal, '');
    expect(await refusal(holdings(principal, '').admitSession('after-revoke'))).toBeUndefined();
  });

  it('revoking the principal as a whole marks it: a credential dated before is refused 401 token_revoked, one dated after admitted', async () => {
    const principal = newPrincipal();
    const dated = (issuedAt: number | null, grant = 'grant-a') =>
      new PrincipalHoldings(env.MCP_PRINCIPALS, sessions, principal, { grant, issuedAt }, LIMITS);
    const before = Date.now();
    await control().revoke(principal);
    const after = Date.now() + 1;
    // AUTH=oauth: a request the provider verified before the operator revoked the user's grants
    // there, admitted after the list; AUTH=jwt: a token issued before, or one without `iat`.
    for (const late of [
      dated(before).admitSession('late-session'),
      dated(before).admitTask('late-task', Date.now() + 60_000),
      dated(null, '').admitSession('no-iat'),
    ]) {
      const error = await refusal(late);
      expect(error).toBeInstanceOf(McpHttpError);
      expect(error).toMatchObject({ status: 401, data: { reason: 'token_revoked' } });
      expect(error?.headers['WWW-Authenticate']).toContain('invalid_token');
    }
    expect(await refusal(dated(after).admitSession('dated-after'))).toBeUndefined();
    expect(await refusal(dated(after).admitTask('task-after', Date.now() + 60_000))).toBeUndefined();
    expect((await registryOf(env.MCP_PRINCIPALS, principal).list()).map((held) => held.id)).toEqual(['dated-after', 'task-after']);
    // A mark moves on, never back: an earlier one (a revocation's call that arrived late) changes nothing.
    await registryOf(env.MCP_PRINCIPALS, principal).recall(before - 60_000);
    expect(await refusal(dated(before).admitSession('still-before'))).toMatchObject({ status: 401 });
  });
});
