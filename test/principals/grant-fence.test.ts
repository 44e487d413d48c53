/**
 * A revoked grant is fenced in its principal's registry before what it holds is listed and
 * ended: a request the grant's token authorized just before the revocation, whose session or
 * task is admitted after the list, is refused `grant_revoked` — else it would run under a grant
 * that no longer exists, and no walk would end it. The principal's other grants are admitted.
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
const holdings = (principal: string, grant: string) => new PrincipalHoldings(env.MCP_PRINCIPALS, sessions, principal, grant, LIMITS);

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
});
