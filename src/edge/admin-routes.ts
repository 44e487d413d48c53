/**
 * The operator's routes, beside the endpoint: served only when the `ADMIN_TOKEN` secret is set
 * (and the Worker has a principal registry), each request carrying it as a bearer token.
 *
 *   GET    /admin/principals/{id}                   what the principal holds: { sessions, tasks, streams, webhooks }
 *   POST   /admin/principals/{id}/revoke[?grant=g]  ends all of it (or what grant g created): { sessions, tasks, listens, eventStreams, webhooks, grants }
 *   DELETE /admin/principals/{id}/sessions/{sid}    ends one session (204, or 404)
 *   DELETE /admin/principals/{id}/tasks/{tid}       ends one task (204, or 404)
 *   DELETE /admin/principals/{id}/webhooks/{sid}    ends one webhook subscription (204, or 404)
 *
 * `streams` is `{ listens, events }`: how many `subscriptions/listen` streams and `events/stream`
 * push streams the principal holds open now, on every isolate, as the bus shards count their
 * sockets (principal-control.ts); `null` where the Worker has no bus to count them by.
 * `webhooks` is each webhook subscription as its object describes it (events/webhook-subscriptions.ts
 * `WebhookDescription`: its URL, state and delivery health; never its secret), `[]` where the
 * Worker serves no webhooks. Ending one sends its callback `terminated` Forbidden
 * `{reason: "ended_by_operator"}`; a revocation sends `{reason: "grant_revoked"}`.
 *
 * `{id}` is the principal's id as the server names it (`oauth#<userId>` with AUTH=oauth; the
 * issuer and subject with AUTH=jwt: auth/jwt-verifier.ts), URL-encoded. With AUTH=oauth a
 * revocation also revokes the user's grants at the embedded authorization server (all of
 * them, or grant g), so their tokens stop working at once. With AUTH=jwt the issuer stops
 * issuing: tokens already issued cannot be recalled at the issuer, but a revocation of the
 * whole principal marks its registry, and such a token opens no new session or task
 * (principals/principal-registry.ts; what it can still do: docs/operations.md).
 *
 * Each request counts against the Worker's rate limit per client address (core/client-address.ts:
 * an IPv6 client by its prefix) before its token is compared, under a key of its own (`admin:`,
 * apart from the endpoint's and the authorization server's allowances): past it, `429` with
 * `Retry-After`, the right token included — a guesser gets the allowance's worth of guesses a
 * period, and no answer that tells a right guess from a wrong one. Without a rate-limit binding
 * nothing counts them, as nothing counts the endpoint's: what bounds a guess then is the
 * token's own entropy (docs/operations.md asks for 32 random bytes).
 */
import type { OAuthHelpers } from '@cloudflare/workers-oauth-provider';
import type { Hono } from 'hono';
import { OAUTH_PRINCIPAL_PREFIX } from '../auth/principal.ts';
import { userGrantIds } from '../auth/user-grants.ts';
import { addressKey } from '../core/client-address.ts';
import { httpErrors, McpHttpError } from '../core/errors.ts';
import type { Holding } from '../core/holdings.ts';
import { JsonRpcCode } from '../core/wire.ts';
import type { PrincipalControl } from '../principals/principal-control.ts';

export const ADMIN_ROOT = '/admin/principals';

type AdminEnv = { ADMIN_TOKEN?: string; OAUTH_PROVIDER?: OAuthHelpers };

/** The Worker's rate limit, as the admin routes count against it. */
export interface AdminThrottle {
  /** The Rate Limiting binding; none configured, nothing is counted. */
  readonly limiter: RateLimit | undefined;
  /** RATE_LIMIT_IPV6_PREFIX: the prefix an IPv6 client counts as. */
  readonly ipv6Prefix: number;
  /** The binding's period: a refusal's `Retry-After`. */
  readonly periodSeconds: number;
}

/** The admin routes' rate-limit key of a request: its client address, apart from every other allowance. */
export const adminRateLimitKey = (address: string | null, ipv6Prefix: number) => `admin:${addressKey(address, ipv6Prefix)}`;

export function serveAdminRoutes<E extends object>(
  // The Worker's own app: the routes take whatever variables it sets.
  app: Hono<{ Bindings: E; Variables: never }>,
  control: (env: E) => PrincipalControl | undefined,
  throttle: (env: E) => AdminThrottle,
): void {
  const guarded = async (env: E, request: Request): Promise<PrincipalControl> => {
    const token = (env as AdminEnv).ADMIN_TOKEN;
    const served = token !== undefined && token !== '' ? control(env) : undefined;
    if (served === undefined) throw new McpHttpError(404, JsonRpcCode.ServerError, 'Not found');
    // Counted before the token is compared: past the allowance, nothing is compared at all.
    const { limiter, ipv6Prefix, periodSeconds } = throttle(env);
    if (limiter !== undefined) {
      const key = adminRateLimitKey(request.headers.get('CF-Connecting-IP'), ipv6Prefix);
      if (!(await limiter.limit({ key })).success) throw httpErrors.tooManyRequests(periodSeconds);
    }
    if (!(await sameSecret(request.headers.get('Authorization') ?? '', `Bearer ${token}`))) {
      throw new McpHttpError(
        401,
        JsonRpcCode.ServerError,
        'Unauthorized: the admin routes need `Authorization: Bearer <ADMIN_TOKEN>`',
        undefined,
        null,
        {
          'WWW-Authenticate': 'Bearer realm="admin"',
        },
      );
    }
    return served;
  };

  app.get(`${ADMIN_ROOT}/:principal`, async (c) => {
    const control = await guarded(c.env, c.req.raw);
    const principal = c.req.param('principal');
    const [held, streams, webhooks] = await Promise.all([control.list(principal), control.streams(principal), control.webhooks(principal)]);
    return c.json({ ...holdingsOnWire(held), streams, webhooks });
  });

  app.post(`${ADMIN_ROOT}/:principal/revoke`, async (c) => {
    const control = await guarded(c.env, c.req.raw);
    const principal = c.req.param('principal');
    const grant = c.req.query('grant');
    // An empty grant is no grant: under it sit the holdings of tokens without one (all of a
    // JWT principal's), and a grant's revocation writes no revoked_before mark, so `?grant=`
    // would end them all and leave their tokens free to open more. Revoke the principal instead.
    if (grant === '') throw httpErrors.badRequest('`grant` names no grant; to end everything the principal holds, omit it');
    // Tokens first: nothing the principal holds is ended while its tokens could open more.
    const grants = await revokeOAuthGrants((c.env as AdminEnv).OAUTH_PROVIDER, principal, grant);
    return c.json({ ...(await control.revoke(principal, grant)), grants });
  });

  app.delete(`${ADMIN_ROOT}/:principal/sessions/:session`, async (c) => {
    const control = await guarded(c.env, c.req.raw);
    const ended = await control.endSession(c.req.param('principal'), c.req.param('session'));
    return c.body(null, ended ? 204 : 404);
  });

  app.delete(`${ADMIN_ROOT}/:principal/tasks/:task`, async (c) => {
    const control = await guarded(c.env, c.req.raw);
    const ended = await control.endTask(c.req.param('principal'), c.req.param('task'));
    return c.body(null, ended ? 204 : 404);
  });

  app.delete(`${ADMIN_ROOT}/:principal/webhooks/:subscription`, async (c) => {
    const control = await guarded(c.env, c.req.raw);
    const ended = await control.endWebhook(c.req.param('principal'), c.req.param('subscription'));
    return c.body(null, ended ? 204 : 404);
  });
}

/** AUTH=oauth: the user's grants (or one of them) revoked at the authorization server; how many. */
async function revokeOAuthGrants(helpers: OAuthHelpers | undefined, principal: string, grant: string | undefined): Promise<number> {
  if (helpers === undefined || !principal.startsWith(OAUTH_PRINCIPAL_PREFIX)) return 0;
  const userId = principal.slice(OAUTH_PRINCIPAL_PREFIX.length);
  if (grant !== undefined) {
    await helpers.revokeGrant(grant, userId);
    return 1;
  }
  const grants = await userGrantIds(helpers, userId);
  for (const id of grants) await helpers.revokeGrant(id, userId);
  return grants.length;
}

function holdingsOnWire(held: readonly Holding[]) {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    sessions: held.filter((h) => h.kind === 'session').map((h) => ({ id: h.id, grant: h.grant || null, createdAt: iso(h.createdAt) })),
    tasks: held
      .filter((h) => h.kind === 'task')
      .map((h) => ({
        id: h.id,
        grant: h.grant || null,
        createdAt: iso(h.createdAt),
        expiresAt: h.expiresAt === null ? null : iso(h.expiresAt),
      })),
  };
}

/** Compares two secrets in constant time (over their digests, which have one length). */
async function sameSecret(given: string, expected: string): Promise<boolean> {
  const digest = (text: string) => crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  const [a, b] = await Promise.all([digest(given), digest(expected)]);
  return crypto.subtle.timingSafeEqual(a, b);
}
