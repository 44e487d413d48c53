/**
 * The registry's part of `events/subscribe` (issue 47), called as the Worker calls it
 * (principals/principal-holdings.ts `admitWebhook`): the credential's refusals first (fence,
 * recall), then MAX_WEBHOOKS_PER_PRINCIPAL with subscriptions probed as sessions are, then the
 * cache of verified URLs per (principal, url) — and the rows each answer writes.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { VERIFICATION_TTL_MS } from '../../src/core/webhook-verification.ts';
import { type ObjectNamespace, PrincipalControl } from '../../src/principals/principal-control.ts';
import { PrincipalHoldings } from '../../src/principals/principal-holdings.ts';
import { registryOf } from '../../src/principals/principal-registry.ts';

const sessions = env.MCP_SESSION as unknown as ObjectNamespace;
const URL_A = 'https://hooks.example.com/a';
const URL_B = 'https://hooks.example.com/b';
let principals = 0;
const newPrincipal = () => `oauth#webhooks-${principals++}-${crypto.randomUUID()}`;

const holdings = (principal: string, max = 2, credential: { grant?: string; issuedAt?: number | null } = {}) =>
  new PrincipalHoldings(env.MCP_PRINCIPALS, sessions, principal, credential, {
    maxSessionsPerPrincipal: 3,
    maxTasksPerPrincipal: 2,
    maxWebhooksPerPrincipal: max,
  });

/** Rows the principal's registry has written since its object opened. */
const rowsWritten = (principal: string) =>
  runInDurableObject(
    env.MCP_PRINCIPALS.get(env.MCP_PRINCIPALS.idFromName(principal)),
    (_instance, state) => state.storage.sql.exec<{ n: number }>('SELECT total_changes() AS n').one().n,
  );

/** A probe that must not be called (nothing is at the bound). */
const unasked = async (id: string): Promise<never> => {
  throw new Error(`${id} probed`);
};

/** Probes answered from `answers` (null: gone), recording who was asked. */
function probes(answers: Record<string, { liveUntil: number } | null | 'throw'>) {
  const asked: string[] = [];
  const probe = async (id: string) => {
    asked.push(id);
    const told = answers[id];
    if (told === 'throw' || told === undefined) throw new Error('storage error');
    return told;
  };
  return { asked, probe };
}

describe('the verification cache per (principal, url)', () => {
  it('asks a handshake and writes nothing; after one, writes the holding and the verification; then spares the next', async () => {
    const alice = newPrincipal();
    const registry = holdings(alice);
    expect(await registry.admitWebhook({ id: 'sub_1', url: URL_A, probe: unasked })).toEqual({ verify: true });
    expect(await rowsWritten(alice)).toBe(0);
    expect(await registryOf(env.MCP_PRINCIPALS, alice).list()).toEqual([]);

    const verifiedAt = Date.now();
    expect(await registry.admitWebhook({ id: 'sub_1', url: URL_A, verifiedAt, probe: unasked })).toEqual({ admitted: true, verifiedAt });
    expect(await rowsWritten(alice)).toBe(2);

    // Another subscription to the same URL (another type, other arguments): the cached verification, 1 row.
    expect(await registry.admitWebhook({ id: 'sub_2', url: `${URL_A}#fragment`, probe: unasked })).toEqual({ admitted: true, verifiedAt });
    expect(await rowsWritten(alice)).toBe(3);
    // An id already held: admitted, no new row.
    expect(await registry.admitWebhook({ id: 'sub_2', url: URL_A, probe: unasked })).toEqual({ admitted: true, verifiedAt });
    expect(await rowsWritten(alice)).toBe(3);
    // Another URL of hers is not verified by the first.
    expect(await holdings(alice, 5).admitWebhook({ id: 'sub_3', url: URL_B, probe: unasked })).toEqual({ verify: true });
    expect(await rowsWritten(alice)).toBe(3);
  });

  it('never waives another principal’s challenge', async () => {
    const alice = newPrincipal();
    const bob = newPrincipal();
    await holdings(alice).admitWebhook({ id: 'sub_a', url: URL_A, verifiedAt: Date.now(), probe: unasked });
    expect(await holdings(alice).admitWebhook({ id: 'sub_a2', url: URL_A, probe: unasked })).toMatchObject({ admitted: true });
    expect(await holdings(bob).admitWebhook({ id: 'sub_b', url: URL_A, probe: unasked })).toEqual({ verify: true });
    expect(await registryOf(env.MCP_PRINCIPALS, bob).list()).toEqual([]);
  });

  it('asks again once the verification is older than its life, and a new one replaces it in place (one row)', async () => {
    const alice = newPrincipal();
    const registry = holdings(alice, 0);
    const stale = Date.now() - VERIFICATION_TTL_MS - 1;
    await registry.admitWebhook({ id: 'sub_1', url: URL_A, verifiedAt: stale, probe: unasked });
    expect(await registry.admitWebhook({ id: 'sub_2', url: URL_A, probe: unasked })).toEqual({ verify: true });
    const before = await rowsWritten(alice);
    const verifiedAt = Date.now();
    expect(await registry.admitWebhook({ id: 'sub_2', url: URL_A, verifiedAt, probe: unasked })).toEqual({ admitted: true, verifiedAt });
    expect(await rowsWritten(alice)).toBe(before + 2);
    expect(await registry.admitWebhook({ id: 'sub_3', url: URL_A, probe: unasked })).toEqual({ admitted: true, verifiedAt });
  });
});

describe('MAX_WEBHOOKS_PER_PRINCIPAL', () => {
  it('probes the subscriptions not known live: a gone one is dropped and the creation admitted; a live one keeps its life', async () => {
    const alice = newPrincipal();
    const registry = holdings(alice, 2);
    const verifiedAt = Date.now();
    await registry.admitWebhook({ id: 'sub_old', url: URL_A, verifiedAt, probe: unasked });
    await registry.admitWebhook({ id: 'sub_kept', url: URL_A, probe: unasked });

    const liveUntil = Date.now() + 3_600_000;
    const first = probes({ sub_old: null, sub_kept: { liveUntil } });
    expect(await registry.admitWebhook({ id: 'sub_new', url: URL_A, probe: first.probe })).toEqual({ admitted: true, verifiedAt });
    expect(first.asked.sort()).toEqual(['sub_kept', 'sub_old']);
    const held = await registryOf(env.MCP_PRINCIPALS, alice).list();
    expect(held.map((h) => [h.kind, h.id, h.expiresAt])).toEqual([
      ['webhook', 'sub_kept', liveUntil],
      ['webhook', 'sub_new', null],
    ]);

    // At the bound again: only the one not known live is asked; it is live, so the creation is refused.
    const second = probes({ sub_new: { liveUntil } });
    expect(await registry.admitWebhook({ id: 'sub_more', url: URL_A, probe: second.probe })).toEqual({ refused: 'limit', max: 2 });
    expect(second.asked).toEqual(['sub_new']);
    expect((await registryOf(env.MCP_PRINCIPALS, alice).list()).map((h) => h.id)).toEqual(['sub_kept', 'sub_new']);
  });

  it('refuses before any handshake, counts an object that fails to answer as held, and bounds no one else', async () => {
    const alice = newPrincipal();
    await holdings(alice, 1).admitWebhook({ id: 'sub_1', url: URL_A, verifiedAt: Date.now(), probe: unasked });
    const failing = probes({ sub_1: 'throw' });
    // URL_B was never verified: the bound answers first ("before they invoke on_subscribe").
    expect(await holdings(alice, 1).admitWebhook({ id: 'sub_2', url: URL_B, probe: failing.probe })).toEqual({ refused: 'limit', max: 1 });
    expect(failing.asked).toEqual(['sub_1']);
    const before = await rowsWritten(alice);
    expect(await holdings(alice, 1).admitWebhook({ id: 'sub_2', url: URL_B, verifiedAt: Date.now(), probe: failing.probe })).toEqual({
      refused: 'limit',
      max: 1,
    });
    expect(await rowsWritten(alice)).toBe(before);
    // The id already held is not bounded: it adds nothing.
    expect(await holdings(alice, 1).admitWebhook({ id: 'sub_1', url: URL_A, probe: unasked })).toMatchObject({ admitted: true });
    // 0: unbounded.
    expect(await holdings(alice, 0).admitWebhook({ id: 'sub_2', url: URL_A, probe: unasked })).toMatchObject({ admitted: true });
  });
});

describe('a credential revoked', () => {
  it('a fenced grant is refused `revoked` before the bound and the cache; the principal’s other grants are admitted', async () => {
    const alice = newPrincipal();
    await holdings(alice, 1, { grant: 'grant-a' }).admitWebhook({ id: 'sub_1', url: URL_A, verifiedAt: Date.now(), probe: unasked });
    await new PrincipalControl({ registry: env.MCP_PRINCIPALS, sessions }).revoke(alice, 'grant-a');
    const before = await rowsWritten(alice);
    for (const verifiedAt of [undefined, Date.now()]) {
      const ask = { id: 'sub_2', url: URL_A, probe: unasked, ...(verifiedAt !== undefined && { verifiedAt }) };
      expect(await holdings(alice, 1, { grant: 'grant-a' }).admitWebhook(ask)).toEqual({ refused: 'revoked' });
    }
    expect(await rowsWritten(alice)).toBe(before);
    // (sub_1 is still held: the control above was given no webhooks namespace to end it by.)
    expect(await holdings(alice, 2, { grant: 'grant-b' }).admitWebhook({ id: 'sub_2', url: URL_A, probe: unasked })).toMatchObject({
      admitted: true,
    });
  });

  it('a credential issued before its principal’s revocation is refused `recalled`; a later one is admitted', async () => {
    const alice = newPrincipal();
    const mark = Date.now();
    await registryOf(env.MCP_PRINCIPALS, alice).recall(mark);
    for (const issuedAt of [mark - 1_000, mark, null]) {
      expect(await holdings(alice, 1, { issuedAt }).admitWebhook({ id: 'sub_1', url: URL_A, probe: unasked })).toEqual({
        refused: 'recalled',
      });
    }
    expect(await holdings(alice, 1, { issuedAt: mark + 1 }).admitWebhook({ id: 'sub_1', url: URL_A, probe: unasked })).toEqual({
      verify: true,
    });
  });
});

describe('the rows as holdings of kind `webhook`', () => {
  it('are listed after sessions and tasks, with their grant, and forgotten by kind', async () => {
    const alice = newPrincipal();
    const registry = holdings(alice, 0, { grant: 'grant-a' });
    await registry.admitSession('session-1');
    await registry.admitWebhook({ id: 'sub_1', url: URL_A, verifiedAt: Date.now(), probe: unasked });
    await registry.admitWebhook({ id: 'sub_2', url: URL_A, probe: unasked });
    const listed = await registryOf(env.MCP_PRINCIPALS, alice).list();
    expect(listed.map((h) => [h.kind, h.id, h.grant])).toEqual([
      ['session', 'session-1', 'grant-a'],
      ['webhook', 'sub_1', 'grant-a'],
      ['webhook', 'sub_2', 'grant-a'],
    ]);
    await registry.forget('webhook', 'sub_1');
    // A session of the same id is another holding: forgetting a webhook leaves it.
    await registry.forget('webhook', 'session-1');
    expect((await registryOf(env.MCP_PRINCIPALS, alice).list()).map((h) => [h.kind, h.id])).toEqual([
      ['session', 'session-1'],
      ['webhook', 'sub_2'],
    ]);
  });
});
