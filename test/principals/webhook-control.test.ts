/**
 * Webhook subscriptions under revocation and in the operator's view (issue 47; docs/events.md, *Webhooks*,
 * *The end*): the registry's rows are what a revocation walks and an operator lists, each subscription
 * ended by its object (`terminate`), its row forgotten once the object answered. The objects
 * here are stand-ins recording what they were told (the real one is events/webhook-object.ts's);
 * the routes are the Worker's own (edge/admin-routes.ts), served over a control given them.
 */
import { env } from 'cloudflare:workers';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { serveAdminRoutes } from '../../src/edge/admin-routes.ts';
import type { Termination, WebhookDescription, WebhookNamespace } from '../../src/events/webhook-subscriptions.ts';
import { type ObjectNamespace, PrincipalControl } from '../../src/principals/principal-control.ts';
import { PrincipalHoldings } from '../../src/principals/principal-holdings.ts';
import { registryOf } from '../../src/principals/principal-registry.ts';
import { TEST_ADMIN_TOKEN } from '../support/tokens.ts';

const sessions = env.MCP_SESSION as unknown as ObjectNamespace;
let principals = 0;
const newPrincipal = () => `oauth#webhook-control-${principals++}-${crypto.randomUUID()}`;

/** Subscription objects that answer from `live` (absent: gone) and record each call. */
class FakeSubscriptions {
  readonly terminated: { id: string; termination: Termination }[] = [];
  readonly described: string[] = [];
  readonly failing = new Set<string>();
  readonly live = new Set<string>();
  readonly namespace: WebhookNamespace = {
    idFromName: (name) => ({ name }) as unknown as DurableObjectId,
    get: (id) => this.#stub((id as unknown as { name: string }).name),
  };

  #stub(id: string) {
    return {
      terminate: async (termination: Termination) => {
        this.terminated.push({ id, termination });
        if (this.failing.has(id)) throw new Error('the object failed');
        return this.live.delete(id);
      },
      describe: async (): Promise<WebhookDescription | null> => {
        this.described.push(id);
        return this.live.has(id) ? description(id) : null;
      },
    };
  }
}

function description(id: string): WebhookDescription {
  return {
    id,
    name: 'notes.created',
    url: 'https://hooks.example.com/a',
    state: 'active',
    refreshBefore: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    verifiedAt: '2026-01-01T00:00:00.000Z',
    lastDeliveryAt: null,
    lastError: null,
    failedSince: null,
    failing: 0,
    watermarkSeq: 7,
  };
}

/** Subscriptions held by `principal`: `[id, grant]`, each with a row in its registry and (when `live`) an object. */
async function subscribe(objects: FakeSubscriptions, principal: string, held: readonly [string, string, 'live' | 'gone'][]): Promise<void> {
  for (const [id, grant, state] of held) {
    const holdings = new PrincipalHoldings(
      env.MCP_PRINCIPALS,
      sessions,
      principal,
      { grant },
      {
        maxSessionsPerPrincipal: 3,
        maxTasksPerPrincipal: 3,
      },
    );
    const verifiedAt = Date.now();
    expect(await holdings.admitWebhook({ id, url: 'https://hooks.example.com/a', verifiedAt, probe: async () => null })).toEqual({
      admitted: true,
      verifiedAt,
    });
    if (state === 'live') objects.live.add(id);
  }
}

const control = (objects: FakeSubscriptions) =>
  new PrincipalControl({ registry: env.MCP_PRINCIPALS, sessions, webhooks: objects.namespace });
const webhookRows = async (principal: string) =>
  (await registryOf(env.MCP_PRINCIPALS, principal).list()).filter((h) => h.kind === 'webhook').map((h) => h.id);

describe('revoking a principal, or one of its grants', () => {
  it('tells each subscription to end with Forbidden grant_revoked, counts those that were live, and forgets every row', async () => {
    const objects = new FakeSubscriptions();
    const alice = newPrincipal();
    await subscribe(objects, alice, [
      ['sub_a1', 'grant-a', 'live'],
      ['sub_b1', 'grant-b', 'live'],
      ['sub_gone', 'grant-a', 'gone'],
    ]);
    const revocation = await control(objects).revoke(alice);
    expect(revocation).toEqual({ sessions: 0, tasks: 0, listens: 0, eventStreams: 0, webhooks: 2 });
    expect(objects.terminated.map((t) => t.id).sort()).toEqual(['sub_a1', 'sub_b1', 'sub_gone']);
    for (const { termination } of objects.terminated) {
      expect(termination).toEqual({
        error: { code: -32024, message: 'Forbidden: the grant was revoked', data: { reason: 'grant_revoked' } },
        cause: 'revoked',
      });
    }
    expect(await webhookRows(alice)).toEqual([]);
  });

  it('a grant’s revocation ends that grant’s subscriptions only', async () => {
    const objects = new FakeSubscriptions();
    const alice = newPrincipal();
    await subscribe(objects, alice, [
      ['sub_a1', 'grant-a', 'live'],
      ['sub_b1', 'grant-b', 'live'],
    ]);
    expect((await control(objects).revoke(alice, 'grant-a')).webhooks).toBe(1);
    expect(objects.terminated.map((t) => t.id)).toEqual(['sub_a1']);
    expect(await webhookRows(alice)).toEqual(['sub_b1']);
  });

  it('keeps the row of an object that failed to answer, so that revoking again finishes it', async () => {
    const objects = new FakeSubscriptions();
    const alice = newPrincipal();
    await subscribe(objects, alice, [
      ['sub_1', 'grant-a', 'live'],
      ['sub_2', 'grant-a', 'live'],
    ]);
    objects.failing.add('sub_2');
    await expect(control(objects).revoke(alice)).rejects.toThrow('the object failed');
    expect(await webhookRows(alice)).toEqual(['sub_2']);
    objects.failing.clear();
    expect((await control(objects).revoke(alice)).webhooks).toBe(1);
    expect(await webhookRows(alice)).toEqual([]);
  });

  it('without a webhooks namespace, ends none and keeps the rows', async () => {
    const objects = new FakeSubscriptions();
    const alice = newPrincipal();
    await subscribe(objects, alice, [['sub_1', 'grant-a', 'live']]);
    expect((await new PrincipalControl({ registry: env.MCP_PRINCIPALS, sessions }).revoke(alice)).webhooks).toBe(0);
    expect(await webhookRows(alice)).toEqual(['sub_1']);
  });
});

describe('the operator’s routes', () => {
  const serve = (objects: FakeSubscriptions) => {
    const app = new Hono<{ Bindings: { ADMIN_TOKEN: string }; Variables: never }>();
    serveAdminRoutes(
      app,
      () => control(objects),
      () => ({ limiter: undefined, ipv6Prefix: 64, periodSeconds: 60 }),
    );
    return (method: string, principal: string, rest = '') =>
      app.request(
        `http://localhost/admin/principals/${encodeURIComponent(principal)}${rest}`,
        { method, headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` } },
        { ADMIN_TOKEN: TEST_ADMIN_TOKEN },
      );
  };

  it('lists each subscription as its object describes it, and forgets a row whose object is gone', async () => {
    const objects = new FakeSubscriptions();
    const admin = serve(objects);
    const alice = newPrincipal();
    await subscribe(objects, alice, [
      ['sub_1', 'grant-a', 'live'],
      ['sub_gone', 'grant-a', 'gone'],
    ]);
    const response = await admin('GET', alice);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { sessions: unknown[]; tasks: unknown[]; webhooks: WebhookDescription[] };
    expect(body).toMatchObject({ sessions: [], tasks: [], webhooks: [description('sub_1')] });
    expect(objects.described.sort()).toEqual(['sub_1', 'sub_gone']);
    expect(await webhookRows(alice)).toEqual(['sub_1']);
  });

  it('ends one subscription with Forbidden ended_by_operator (204), and answers 404 for one the principal does not hold', async () => {
    const objects = new FakeSubscriptions();
    const admin = serve(objects);
    const alice = newPrincipal();
    const bob = newPrincipal();
    await subscribe(objects, alice, [['sub_alice', 'grant-a', 'live']]);
    await subscribe(objects, bob, [['sub_bob', 'grant-b', 'live']]);

    // Bob's subscription named under alice: her registry holds no such row, so its object is not asked.
    expect((await admin('DELETE', alice, '/webhooks/sub_bob')).status).toBe(404);
    expect(objects.terminated).toEqual([]);

    expect((await admin('DELETE', alice, '/webhooks/sub_alice')).status).toBe(204);
    expect(objects.terminated).toEqual([
      {
        id: 'sub_alice',
        termination: {
          error: { code: -32024, message: 'Forbidden: ended by the operator', data: { reason: 'ended_by_operator' } },
          cause: 'operator',
        },
      },
    ]);
    expect(await webhookRows(alice)).toEqual([]);
    expect((await admin('DELETE', alice, '/webhooks/sub_alice')).status).toBe(404);
    expect(await webhookRows(bob)).toEqual(['sub_bob']);
  });

  it('carries the count of subscriptions ended in a revocation’s answer', async () => {
    const objects = new FakeSubscriptions();
    const admin = serve(objects);
    const alice = newPrincipal();
    await subscribe(objects, alice, [['sub_1', 'grant-a', 'live']]);
    const response = await admin('POST', alice, '/revoke');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ sessions: 0, tasks: 0, listens: 0, eventStreams: 0, webhooks: 1, grants: 0 });
  });
});
