/**
 * What the server counts, as one typed union, and the one fixed layout each count takes as a
 * Workers Analytics Engine data point (docs/operations.md, *Metrics*, has the schema and the
 * queries). Plain data in, plain data out: src/metrics/metrics.ts writes the points, where a
 * binding is configured, and nothing anywhere when it is not.
 *
 * Never an identity, never a body, never a string as the client wrote it: a point carries the
 * principal only as an index keyed with the deployment's secret (METRICS_KEY: without the key,
 * a guessed identity could be checked against the dataset), a method only if it is one of MCP's
 * or HTTP's, a tool only if the server registered it (else `other`), and every other blob from
 * a closed set the types below name. Whoever reads the dataset learns what the operator needs
 * — what was called, how it went — and nothing a client chose to put there.
 */
import type { RefusalReason } from './errors.ts';
import type { CallbackFailure } from './events-wire.ts';
import type { TaskStatus } from './task.ts';
import { utf8Length } from './utf8.ts';
import { type AttemptOutcome, type DeliveryDecision, statusCategory } from './webhook-retry.ts';
import { MCP_METHODS, type McpMethod } from './wire.ts';

export type MetricEra = 'legacy' | 'modern';

/** The HTTP methods a point may name a request by when it names no MCP method: RFC 9110's, and PATCH (RFC 5789). */
export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** What stands for any string a client chose that the server does not know. */
export const OTHER = 'other';

/** A request's method as a point names it: an MCP method, an HTTP method, or `other`. */
export type MetricMethod = McpMethod | HttpMethod | typeof OTHER;

/** The longest tool name a point carries: SEP-986's bound on a tool's name (1 to 128 characters). */
export const MAX_METRIC_TOOL_LENGTH = 128;

export type CallOutcome = 'ok' | 'tool_error' | 'error' | 'interrupted' | 'cancelled';

/**
 * What became of one webhook delivery attempt (issue 47): `delivered` (2xx), `declined` (a
 * 4xx/3xx the policy does not retry), `retry` (failed, another attempt scheduled), `gave_up`
 * (the policy's attempts or window spent), `suspended` (the attempt that suspended its
 * subscription), `held` (not attempted: its subscription is suspended or its breaker open).
 */
export type WebhookAttemptOutcome = 'delivered' | 'declined' | 'retry' | 'gave_up' | 'suspended' | 'held';

/** How a webhook subscription began or ended: what created, refreshed, reactivated or ended it. */
export type WebhookSubscriptionOutcome =
  | 'created'
  | 'refreshed'
  | 'reactivated'
  | 'unsubscribed'
  | 'expired'
  | 'revoked'
  | 'operator'
  | 'dropped'
  | 'type_removed'
  | 'not_permitted';

/** A subscribe's endpoint verification: a handshake `verified`, the registry's `cached` one, or the handshake's failure category. */
export type WebhookVerificationOutcome = 'verified' | 'cached' | CallbackFailure;

export type MetricEvent =
  /**
   * One per request at the edge (the Worker's endpoint path). `method`: the MCP method its
   * `Mcp-Method` names, else its HTTP method ({@link metricMethod}); `bytes`: its body's declared length.
   */
  | {
      readonly kind: 'request';
      readonly era: MetricEra;
      readonly method: MetricMethod;
      readonly status: number;
      readonly durationMs: number;
      readonly bytes: number;
    }
  /** A typed refusal, where it is decided: its reason and status (a refused fork is one of the cursor reasons). */
  | { readonly kind: 'refusal'; readonly era: MetricEra; readonly reason: RefusalReason | 'session_not_found'; readonly status: number }
  /** A session's life: created by `initialize`, deleted by the client, or expired idle. */
  | { readonly kind: 'session'; readonly outcome: 'created' | 'deleted' | 'expired' }
  /** A stream resumed from a client's cursor (`GET` + `Last-Event-ID`). */
  | { readonly kind: 'resume' }
  /**
   * A session's `tools/call`, once answered: `ok`, `tool_error` (a result with `isError`),
   * `error` (a JSON-RPC error), or `interrupted` (its instance stopped; answered by revival); or
   * `cancelled` by its client (never answered). `tool`: what {@link metricTool} made of its name.
   */
  | {
      readonly kind: 'call';
      readonly tool: string;
      readonly outcome: CallOutcome;
      readonly durationMs: number;
      readonly events: number;
    }
  /** A task reached `status` (`working` at creation); `interrupted`: failed because its instance died. */
  | {
      readonly kind: 'task';
      readonly tool: string;
      readonly status: TaskStatus;
      readonly interrupted: boolean;
      readonly ageMs: number;
      readonly events: number;
    }
  /**
   * One webhook delivery attempt, of an event or a control envelope: its `attempt` number (1
   * first), the failure `category` ('' when it was delivered or not attempted), how long the
   * POST took, and `lagMs`: from the occurrence stored to its 2xx, on a first attempt delivered
   * (0 otherwise). No URL, no host: a callback URL is the client's string.
   */
  | {
      readonly kind: 'webhook_attempt';
      readonly outcome: WebhookAttemptOutcome;
      readonly attempt: number;
      readonly category: CallbackFailure | '';
      readonly durationMs: number;
      readonly lagMs: number;
    }
  /** A webhook subscription created, refreshed, reactivated, or ended (and why). */
  | { readonly kind: 'webhook_subscription'; readonly outcome: WebhookSubscriptionOutcome }
  /** A creation's endpoint verification: handshake passed, cache used, or the handshake's failure. */
  | { readonly kind: 'webhook_verification'; readonly outcome: WebhookVerificationOutcome };

export type MetricKind = MetricEvent['kind'];

/** Every `blob5`: what happened, per kind. */
export type MetricOutcome =
  | ReturnType<typeof outcomeOfStatus>
  | Extract<MetricEvent, { kind: 'session' }>['outcome']
  | 'resumed'
  | CallOutcome
  | TaskStatus
  | WebhookAttemptOutcome
  | WebhookSubscriptionOutcome
  | WebhookVerificationOutcome;

/** Every `blob6`: a refusal's typed reason, an interrupted task's, a webhook attempt's failure category, or none. */
export type MetricReason = RefusalReason | 'session_not_found' | 'task_interrupted' | CallbackFailure | '';

/** An Analytics Engine data point (the binding's `writeDataPoint` argument). */
export interface DataPoint {
  readonly indexes: readonly [string];
  readonly blobs: readonly [
    kind: MetricKind,
    era: MetricEra,
    method: MetricMethod | '',
    tool: string,
    outcome: MetricOutcome,
    reason: MetricReason,
  ];
  readonly doubles: readonly [durationMs: number, events: number, bytes: number, status: number];
}

const KNOWN_METHODS: ReadonlySet<string> = new Set<string>(MCP_METHODS);
const KNOWN_HTTP_METHODS: ReadonlySet<string> = new Set<string>(HTTP_METHODS);

/**
 * A request's method as its point names it: the MCP method its `Mcp-Method` header names, or
 * `other` for any other value (the header is the client's to write: 5,033 characters of it were
 * once a data point); without the header, the HTTP method, if it is a registered one.
 */
export function metricMethod(mcpMethod: string | null, httpMethod: string): MetricMethod {
  if (mcpMethod !== null) return KNOWN_METHODS.has(mcpMethod) ? (mcpMethod as McpMethod) : OTHER;
  return KNOWN_HTTP_METHODS.has(httpMethod) ? (httpMethod as HttpMethod) : OTHER;
}

/**
 * A called tool's name as its point names it: the name, if `registered` (the server's own tools)
 * says the server has it and it is no longer than a tool's name may be; else `other` — a call
 * names any tool it likes (3,031 characters with an e-mail address in them were once a point).
 */
export function metricTool(name: unknown, registered: (name: string) => boolean): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_METRIC_TOOL_LENGTH) return OTHER;
  return registered(name) ? name : OTHER;
}

/** The shortest METRICS_KEY: 256 bits, as the HMAC's output (RFC 2104 §3: less weakens it). */
export const MIN_METRICS_KEY_BYTES = 32;

const KEY_FIX = '`openssl rand -base64 32 | npx wrangler secret put METRICS_KEY` (locally: METRICS_KEY in .dev.vars)';

/**
 * The key of the principals' index: `undefined` without the dataset (nothing is indexed);
 * with it, METRICS_KEY — whose absence is a configuration error that names the fix, never an
 * unkeyed index (a SHA-256 of the id lets anyone who reads the dataset confirm a guess).
 */
export function readMetricsKey(bound: boolean, key: string | undefined): string | undefined {
  if (!bound) return undefined;
  if (key === undefined || key === '') {
    throw new Error(
      `configuration: MCP_METRICS is bound but METRICS_KEY is not set: the principals' index in the dataset is keyed with it. Set a random key of at least ${MIN_METRICS_KEY_BYTES} bytes: ${KEY_FIX}`,
    );
  }
  if (utf8Length(key) < MIN_METRICS_KEY_BYTES) {
    throw new Error(`configuration: METRICS_KEY must be at least ${MIN_METRICS_KEY_BYTES} bytes: ${KEY_FIX}`);
  }
  return key;
}

/**
 * The point for `event`, its fields always in the same places (queries name them `blob1` …,
 * `double1` …): blobs kind, era, method, tool, outcome, reason; doubles duration (ms), events
 * (a webhook attempt's number), bytes (a webhook attempt's lag, ms), HTTP status; index the principal's keyed index. A method or tool that reached it
 * unreduced (a cast) is bounded here all the same: this is the one place points are made.
 */
export function dataPoint(event: MetricEvent, principalIndex: string): DataPoint {
  const point = (
    era: MetricEra,
    method: MetricMethod | '',
    tool: string,
    outcome: MetricOutcome,
    reason: MetricReason,
    durationMs = 0,
    events = 0,
    bytes = 0,
    status = 0,
  ): DataPoint => ({
    indexes: [principalIndex],
    blobs: [
      event.kind,
      era,
      method === '' || KNOWN_METHODS.has(method) || KNOWN_HTTP_METHODS.has(method) ? method : OTHER,
      tool.length <= MAX_METRIC_TOOL_LENGTH ? tool : OTHER,
      outcome,
      reason,
    ],
    doubles: [durationMs, events, bytes, status],
  });
  switch (event.kind) {
    case 'request':
      return point(event.era, event.method, '', outcomeOfStatus(event.status), '', event.durationMs, 0, event.bytes, event.status);
    case 'refusal':
      return point(event.era, '', '', 'refused', event.reason, 0, 0, 0, event.status);
    case 'session':
      return point('legacy', '', '', event.outcome, '');
    case 'resume':
      return point('legacy', 'GET', '', 'resumed', '');
    case 'call':
      return point('legacy', 'tools/call', event.tool, event.outcome, '', event.durationMs, event.events);
    case 'task':
      return point(
        'modern',
        'tools/call',
        event.tool,
        event.status,
        event.interrupted ? 'task_interrupted' : '',
        event.ageMs,
        event.events,
      );
    // Webhooks are served to 2026-07-28 clients: `modern`. double2 is the attempt's number, double3 its lag.
    case 'webhook_attempt':
      return point('modern', '', '', event.outcome, event.category, event.durationMs, event.attempt, event.lagMs);
    case 'webhook_subscription':
      return point('modern', '', '', event.outcome, '');
    case 'webhook_verification':
      return point('modern', '', '', event.outcome, '');
  }
}

type WebhookAttemptEvent = Extract<MetricEvent, { kind: 'webhook_attempt' }>;

/** A judged webhook attempt, as events/webhook-delivery.ts (its one writer) knows it. */
export interface JudgedAttempt {
  /** The attempt's number, 1 for the first. */
  readonly attempt: number;
  readonly outcome: AttemptOutcome;
  readonly decision: DeliveryDecision['kind'];
  /** From the POST's start to its answer or timeout. */
  readonly durationMs: number;
  /** When the log stored the occurrence, on its first attempt; undefined for a retry and a control envelope (a `gap`, a `terminated`). */
  readonly storedAt: number | undefined;
  /** When the attempt was judged. */
  readonly now: number;
}

const ATTEMPT_OUTCOMES: Record<DeliveryDecision['kind'], WebhookAttemptOutcome> = {
  delivered: 'delivered',
  declined: 'declined',
  retry: 'retry',
  give_up: 'gave_up',
  suspend: 'suspended',
};

/**
 * The point of one judged attempt: its decision as the outcome; the failure's category, from
 * the closed set of `lastError` (a status is never a point: only its class), none when
 * delivered; `lagMs` only for an occurrence's first attempt delivered — from stored to its 2xx,
 * what a subscriber waits when nothing fails (a retry's lag is the retry policy's, not news).
 */
export function webhookAttemptEvent(judged: JudgedAttempt): WebhookAttemptEvent {
  const { attempt, outcome, decision, storedAt, now } = judged;
  const category = decision === 'delivered' ? '' : outcome.kind === 'response' ? statusCategory(outcome.status) : outcome.reason;
  const lagMs = attempt === 1 && decision === 'delivered' && storedAt !== undefined ? Math.max(0, now - storedAt) : 0;
  return {
    kind: 'webhook_attempt',
    outcome: ATTEMPT_OUTCOMES[decision],
    attempt,
    category,
    durationMs: Math.max(0, judged.durationMs),
    lagMs,
  };
}

/** A wake of a webhook subscription stopped at an occurrence it did not attempt: suspended, or its breaker open (attempt 0). */
export const WEBHOOK_HELD: WebhookAttemptEvent = {
  kind: 'webhook_attempt',
  outcome: 'held',
  attempt: 0,
  category: '',
  durationMs: 0,
  lagMs: 0,
};

/** `ok` below 400, `refused` for a 4xx (the client's to fix), `error` for a 5xx. */
export function outcomeOfStatus(status: number): 'ok' | 'refused' | 'error' {
  return status < 400 ? 'ok' : status < 500 ? 'refused' : 'error';
}
