/**
 * The variables of webhook delivery (docs/events.md, *Webhooks*), read by the Worker (which
 * admits and verifies) and by each subscription's object (which delivers and retries) from the
 * same `env`, so the two never disagree. Every bound has a documented default; a value that does
 * not parse is a configuration error naming the variable (core/misconfiguration.ts), never a
 * silent fallback.
 *
 * - WEBHOOK_DEV_ORIGINS: loopback origins allowed over plain http during development
 *   (core/webhook-url.ts), honoured only by a Worker reached on loopback.
 * - MAX_WEBHOOKS_PER_PRINCIPAL: live subscriptions one principal holds (0: unbounded).
 * - WEBHOOK_MIN_TTL_MS / WEBHOOK_DEFAULT_TTL_MS / WEBHOOK_MAX_TTL_MS: the TTL grant's bounds
 *   (core/webhook-subscription-key.ts `grantTtl`).
 * - WEBHOOK_RETRY_FIRST_MS, WEBHOOK_RETRY_MAX_ATTEMPTS, WEBHOOK_RETRY_WINDOW_MS,
 *   WEBHOOK_RETRY_MAX_DELAY_MS, WEBHOOK_SUSPEND_AFTER_FAILURES, WEBHOOK_SUSPEND_AFTER_MS: the
 *   retry policy (core/webhook-retry.ts); its factor and jitter are fixed.
 * - WEBHOOK_ATTEMPT_TIMEOUT_MS: how long one POST may take (core/webhook-attempt.ts).
 * - WEBHOOK_SECRET_GRACE_MS: how long a replaced secret still signs, beside the new one.
 */
import { nonNegativeInteger, positiveInteger } from '../config.ts';
import { ATTEMPT_TIMEOUT_MS } from '../core/webhook-attempt.ts';
import { checkRetryPolicy, DEFAULT_RETRY_POLICY, type RetryPolicy } from '../core/webhook-retry.ts';
import { checkTtlPolicy, DEFAULT_TTL_POLICY, type TtlPolicy } from '../core/webhook-subscription-key.ts';
import { parseDevOrigins } from '../core/webhook-url.ts';

export interface WebhookVars {
  readonly WEBHOOK_DEV_ORIGINS?: string;
  readonly MAX_WEBHOOKS_PER_PRINCIPAL?: string;
  readonly WEBHOOK_MIN_TTL_MS?: string;
  readonly WEBHOOK_DEFAULT_TTL_MS?: string;
  readonly WEBHOOK_MAX_TTL_MS?: string;
  readonly WEBHOOK_RETRY_FIRST_MS?: string;
  readonly WEBHOOK_RETRY_MAX_ATTEMPTS?: string;
  readonly WEBHOOK_RETRY_WINDOW_MS?: string;
  readonly WEBHOOK_RETRY_MAX_DELAY_MS?: string;
  readonly WEBHOOK_SUSPEND_AFTER_FAILURES?: string;
  readonly WEBHOOK_SUSPEND_AFTER_MS?: string;
  readonly WEBHOOK_ATTEMPT_TIMEOUT_MS?: string;
  readonly WEBHOOK_SECRET_GRACE_MS?: string;
}

export interface WebhookConfig {
  readonly devOrigins: readonly string[];
  readonly maxPerPrincipal: number;
  readonly ttl: TtlPolicy;
  readonly retry: RetryPolicy;
  readonly attemptTimeoutMs: number;
  readonly secretGraceMs: number;
}

/** A replaced secret signs beside the new one for an hour: longer than any retry waits between two attempts (10 min), so no retry of a delivery signed before a rotation is signed only under the new one… and short enough that a leaked old secret stops working the same day. */
export const DEFAULT_SECRET_GRACE_MS = 3_600_000;

const parsed = new WeakMap<object, WebhookConfig>();

/** The webhook variables of `env`, read once per isolate and environment. Throws `configuration: …` errors. */
export function readWebhookConfig(env: object): WebhookConfig {
  let config = parsed.get(env);
  if (config === undefined) {
    config = parse(env as WebhookVars);
    parsed.set(env, config);
  }
  return config;
}

function parse(vars: WebhookVars): WebhookConfig {
  const ttl: TtlPolicy = {
    ...DEFAULT_TTL_POLICY,
    minTtlMs: positiveInteger('WEBHOOK_MIN_TTL_MS', vars.WEBHOOK_MIN_TTL_MS, DEFAULT_TTL_POLICY.minTtlMs),
    defaultTtlMs: positiveInteger('WEBHOOK_DEFAULT_TTL_MS', vars.WEBHOOK_DEFAULT_TTL_MS, DEFAULT_TTL_POLICY.defaultTtlMs),
    maxTtlMs: positiveInteger('WEBHOOK_MAX_TTL_MS', vars.WEBHOOK_MAX_TTL_MS, DEFAULT_TTL_POLICY.maxTtlMs),
  };
  const retry: RetryPolicy = {
    ...DEFAULT_RETRY_POLICY,
    firstRetryMs: positiveInteger('WEBHOOK_RETRY_FIRST_MS', vars.WEBHOOK_RETRY_FIRST_MS, DEFAULT_RETRY_POLICY.firstRetryMs),
    maxAttempts: positiveInteger('WEBHOOK_RETRY_MAX_ATTEMPTS', vars.WEBHOOK_RETRY_MAX_ATTEMPTS, DEFAULT_RETRY_POLICY.maxAttempts),
    windowMs: positiveInteger('WEBHOOK_RETRY_WINDOW_MS', vars.WEBHOOK_RETRY_WINDOW_MS, DEFAULT_RETRY_POLICY.windowMs),
    maxDelayMs: positiveInteger('WEBHOOK_RETRY_MAX_DELAY_MS', vars.WEBHOOK_RETRY_MAX_DELAY_MS, DEFAULT_RETRY_POLICY.maxDelayMs),
    suspendAfterFailures: positiveInteger(
      'WEBHOOK_SUSPEND_AFTER_FAILURES',
      vars.WEBHOOK_SUSPEND_AFTER_FAILURES,
      DEFAULT_RETRY_POLICY.suspendAfterFailures,
    ),
    suspendAfterMs: positiveInteger('WEBHOOK_SUSPEND_AFTER_MS', vars.WEBHOOK_SUSPEND_AFTER_MS, DEFAULT_RETRY_POLICY.suspendAfterMs),
  };
  for (const [check, policy, names] of [
    [checkTtlPolicy, ttl, 'WEBHOOK_MIN_TTL_MS ≤ WEBHOOK_DEFAULT_TTL_MS ≤ WEBHOOK_MAX_TTL_MS'],
    [checkRetryPolicy, retry, 'the WEBHOOK_RETRY_* variables'],
  ] as const) {
    try {
      (check as (p: unknown) => void)(policy);
    } catch (error) {
      throw new Error(`configuration: ${names}: ${(error as Error).message}`);
    }
  }
  return {
    devOrigins: parseDevOrigins(vars.WEBHOOK_DEV_ORIGINS),
    maxPerPrincipal: nonNegativeInteger('MAX_WEBHOOKS_PER_PRINCIPAL', vars.MAX_WEBHOOKS_PER_PRINCIPAL, 32),
    ttl,
    retry,
    attemptTimeoutMs: positiveInteger('WEBHOOK_ATTEMPT_TIMEOUT_MS', vars.WEBHOOK_ATTEMPT_TIMEOUT_MS, ATTEMPT_TIMEOUT_MS),
    secretGraceMs: positiveInteger('WEBHOOK_SECRET_GRACE_MS', vars.WEBHOOK_SECRET_GRACE_MS, DEFAULT_SECRET_GRACE_MS),
  };
}
