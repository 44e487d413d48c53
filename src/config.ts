/**
 * Deployment configuration, read from wrangler `[vars]`. Every knob has a default, so an
 * empty environment is a valid (loopback-only) configuration.
 */
import { readAuthConfig, type AuthConfig, type AuthVars } from './auth/auth-config.ts';
import { parseHostAllowlist, parseOriginAllowlist, type Allowlist } from './core/allowlist.ts';
import { readIpv6Prefix } from './core/client-address.ts';
import { MAX_HEARTBEAT_MS } from './core/events-wire.ts';
import { readMetricsKey } from './core/metrics.ts';

export type ResponseMode = 'sse' | 'json';

export interface TransportConfig {
  /** Host header values accepted (DNS-rebinding defence). */
  readonly allowedHosts: Allowlist;
  /** Origin header values accepted; also the origins granted CORS. */
  readonly allowedOrigins: Allowlist;
  /** How a POST carrying requests is answered: an SSE stream, or one JSON body. */
  readonly responseMode: ResponseMode;
  /** Interval of SSE comment heartbeats on open connections; 0 disables them. */
  readonly heartbeatMs: number;
  /**
   * Bytes an SSE connection may hold for a client that reads slower than events come; beyond
   * them it stops taking live events and reads the log as the client makes room.
   */
  readonly connectionBufferBytes: number;
  /** The `retry:` sent with every priming event: how long clients wait before reconnecting. */
  readonly retryMs: number;
  /** SEP-1699 polling: the server ends a connection (not its stream) after this long; 0 = never. */
  readonly maxConnectionAgeMs: number;
  /** A session with no request for this long, and nothing running, expires (404 afterwards). */
  readonly sessionTtlMs: number;
  /** Per-session bounds on stored events; the oldest events are pruned beyond them. */
  readonly maxSessionEvents: number;
  readonly maxSessionBytes: number;
  /**
   * Requests with an id (and GET streams) one session may make in its life. Each is kept for
   * the session's life (a request id is never reused, and a re-sent one is recognised), so
   * past this the session refuses more (409 `session_full`): the client starts a new one.
   */
  readonly maxSessionRequests: number;
  /** Calls (request streams) one session may have running at once; more are refused with 429. */
  readonly maxRunningCalls: number;
  readonly maxBodyBytes: number;
  /** Whether the Worker writes one `mcp.request` log line per request. */
  readonly requestLog: boolean;
  /** How long a task (2026-07-28 Tasks extension) is kept, from its creation: `ttlMs`. */
  readonly taskTtlMs: number;
  /** The `pollIntervalMs` suggested to clients polling `tasks/get`. */
  readonly taskPollIntervalMs: number;
  /** Events a task's timeline keeps between its creation and its end (SEP-2694); older ones go first. */
  readonly taskMaxEvents: number;
  /** The largest event payload a task stores, as JSON; a larger one is stored as a note of its size. */
  readonly taskMaxEventBytes: number;
  /** Bus objects `subscriptions/listen` streams are spread over (stateless/event-bus.ts); every publish reaches each. */
  readonly busShards: number;
  /**
   * Listen streams one isolate holds at once, of both kinds (the SDK's, and those naming
   * tasks); past it a listen is refused. Also the SDK handler's `maxSubscriptions`.
   */
  readonly maxListenStreams: number;
  /**
   * Of those, what one principal (under AUTH=none, one client address) may hold; 0 = no share,
   * only the isolate's bound. Below MAX_LISTEN_STREAMS, so one at its share leaves listens to others.
   */
  readonly maxListensPerPrincipal: number;
  /**
   * SSE streams the Worker holds for one principal (or client address) at once on an isolate:
   * a session's GET streams and POST responses, and `tasks/stream` streams; 0 = unbounded.
   */
  readonly maxStreamsPerPrincipal: number;
  /**
   * Live sessions and unexpired tasks one authenticated principal may hold at once; 0 =
   * unbounded. Enforced by the principal registry (principals/), when the Worker has one.
   */
  readonly maxSessionsPerPrincipal: number;
  readonly maxTasksPerPrincipal: number;
  /** How requests are authorized (auth/auth-config.ts). */
  readonly auth: AuthConfig;
  /** The prefix an IPv6 client's requests count against in the rate limit (core/client-address.ts). */
  readonly rateLimitIpv6Prefix: number;
  /**
   * AUTH=oauth without `oauth.authorize`: whether the demo's sign-in page, which believes any
   * name, is served beyond loopback (auth/consent-page.ts). Only `DEMO_SIGN_IN = "anyone-is-anyone"`.
   */
  readonly demoSignIn: boolean;
  /** MCP Events: the interval of `notifications/events/heartbeat` on push streams (≤ 30 s: "at least every 30 seconds"). */
  readonly eventsHeartbeatMs: number;
  /** MCP Events push streams (`events/stream`) one principal (or client address) holds on an isolate; 0 = unbounded. */
  readonly maxEventStreamsPerPrincipal: number;
}

export interface ConfigVars extends AuthVars {
  readonly ALLOWED_HOSTS?: string;
  readonly ALLOWED_ORIGINS?: string;
  readonly RESPONSE_MODE?: string;
  readonly HEARTBEAT_MS?: string;
  readonly RETRY_MS?: string;
  readonly CONNECTION_BUFFER_BYTES?: string;
  readonly MAX_CONNECTION_AGE_MS?: string;
  readonly SESSION_TTL_MS?: string;
  /**
   * Removed: a configuration error if set. A session keeps its ended streams' events until it
   * ends (idle expiry or DELETE), within MAX_SESSION_EVENTS and MAX_SESSION_BYTES: deleting
   * them one by one cost a row written each, more than storing them until then.
   */
  readonly RETENTION_MS?: string;
  readonly MAX_SESSION_EVENTS?: string;
  readonly MAX_SESSION_BYTES?: string;
  readonly MAX_SESSION_REQUESTS?: string;
  readonly MAX_RUNNING_CALLS?: string;
  readonly REQUEST_LOG?: string;
  readonly TASK_TTL_MS?: string;
  readonly TASK_POLL_INTERVAL_MS?: string;
  readonly TASK_MAX_EVENTS?: string;
  readonly TASK_MAX_EVENT_BYTES?: string;
  readonly BUS_SHARDS?: string;
  readonly MAX_LISTEN_STREAMS?: string;
  readonly MAX_LISTENS_PER_PRINCIPAL?: string;
  readonly MAX_STREAMS_PER_PRINCIPAL?: string;
  readonly MAX_SESSIONS_PER_PRINCIPAL?: string;
  readonly MAX_TASKS_PER_PRINCIPAL?: string;
  /** Secret: the bearer token of the operator's routes (`/admin/…`); without it they are not served. */
  readonly ADMIN_TOKEN?: string;
  /** Secrets (`wrangler secret put`): the MRTR requestState key, and the one it replaces during a rotation. */
  readonly REQUEST_STATE_KEY?: string;
  readonly REQUEST_STATE_KEY_PREVIOUS?: string;
  readonly RATE_LIMIT_IPV6_PREFIX?: string;
  /** Secret: the key of the metrics' principal index; needed when MCP_METRICS is bound (core/metrics.ts). */
  readonly METRICS_KEY?: string;
  /** `anyone-is-anyone`: the demo sign-in page served beyond loopback (anyone may sign in as anyone). */
  readonly DEMO_SIGN_IN?: string;
  readonly EVENTS_HEARTBEAT_MS?: string;
  readonly MAX_EVENT_STREAMS_PER_PRINCIPAL?: string;
  /** Secrets: the key MCP Events cursors are sealed with, and the one it replaces during a rotation (events/cursor-keys.ts). */
  readonly EVENTS_CURSOR_KEY?: string;
  readonly EVENTS_CURSOR_KEY_PREVIOUS?: string;
}

/** Loopback on every port (`:*`): the dev server's, the conformance runs', MCP Inspector's page (core/allowlist.ts). */
export const DEFAULT_ALLOWED_HOSTS = 'localhost:*,127.0.0.1:*,[::1]:*';
export const DEFAULT_ALLOWED_ORIGINS = 'http://localhost:*,http://127.0.0.1:*,http://[::1]:*';
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * The most MAX_SESSION_REQUESTS may be: a session's streams are numbered in 23 bits of its
 * events' key (session/event-key.ts), and each stream is at least one request.
 */
export const MAX_SESSION_REQUESTS_LIMIT = 2 ** 23 - 1;

export function nonNegativeInteger(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined || text.trim() === '') return fallback;
  const value = /^[0-9]+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value)) {
    throw new Error(`configuration: ${name} must be a non-negative integer, got ${JSON.stringify(text)}`);
  }
  return value;
}

export function positiveInteger(name: string, text: string | undefined, fallback: number): number {
  const value = nonNegativeInteger(name, text, fallback);
  if (value === 0) throw new Error(`configuration: ${name} must be positive`);
  return value;
}

/** A principal's share of an isolate's listens unless configured: this many, or a quarter of the isolate's if less. */
export const DEFAULT_LISTENS_PER_PRINCIPAL = 32;

/**
 * MAX_LISTENS_PER_PRINCIPAL: at most MAX_LISTEN_STREAMS (equal to it, or 0, is no share). Its
 * default is a quarter of the isolate's listens, at most 32 and at least 1: a client needs a
 * listen or a few, and an isolate of 1,024 is then shared by 32 principals at their bound at least.
 */
function listensPerPrincipal(text: string | undefined, maxListenStreams: number): number {
  const fallback = Math.max(1, Math.min(DEFAULT_LISTENS_PER_PRINCIPAL, Math.floor(maxListenStreams / 4)));
  const value = nonNegativeInteger('MAX_LISTENS_PER_PRINCIPAL', text, fallback);
  if (value > maxListenStreams) {
    throw new Error(
      `configuration: MAX_LISTENS_PER_PRINCIPAL must be at most MAX_LISTEN_STREAMS (${maxListenStreams}), got ${value}: it is a principal's share of them (0 for none)`,
    );
  }
  return value;
}

/** The most bus shards: a publish fans out to every one of them. */
export const MAX_BUS_SHARDS = 64;

function atMost(name: string, value: number, limit: number): number {
  if (value > limit) throw new Error(`configuration: ${name} must be at most ${limit}, got ${value}`);
  return value;
}

function oneOf<const T extends string>(name: string, text: string | undefined, allowed: readonly T[]): T {
  const value = text === undefined ? allowed[0]! : text.trim();
  if (!(allowed as readonly string[]).includes(value)) {
    throw new Error(`configuration: ${name} must be ${allowed.map((a) => JSON.stringify(a)).join(' or ')}, got ${JSON.stringify(value)}`);
  }
  return value as T;
}

/** The one value of DEMO_SIGN_IN: what it does, said where it is set. */
export const DEMO_SIGN_IN_OPT_IN = 'anyone-is-anyone';

/**
 * DEMO_SIGN_IN: unset (or empty) is off; its one value, spelled exactly, is on. Anything else
 * (`true`, `1`, `yes`) is a configuration error, never read as either: an opt-in to a page where
 * anyone is anyone is made knowingly, in words that say so.
 */
function demoSignIn(text: string | undefined): boolean {
  const value = (text ?? '').trim();
  if (value === '') return false;
  if (value === DEMO_SIGN_IN_OPT_IN) return true;
  throw new Error(
    `configuration: DEMO_SIGN_IN must be ${JSON.stringify(DEMO_SIGN_IN_OPT_IN)} (the demo sign-in page, which believes any name, served beyond loopback) or unset, got ${JSON.stringify(text)}`,
  );
}

/**
 * What a Worker's `Env` must be for its vars to be read: any type whose keys that name
 * configuration variables hold strings — an `Env` with bindings only, and no `[vars]` at all,
 * included (every variable has a default). A constraint on `E` itself, since `ConfigVars`
 * alone (every key optional) would refuse a type that shares none of its keys (TS2559).
 */
export type ConfigEnv<E> = { readonly [K in keyof E & keyof ConfigVars]?: ConfigVars[K] };

/** The configuration in `env`'s vars (an `Env` that satisfies ConfigEnv: its other keys are bindings). */
export function readConfig(env: object): TransportConfig {
  const vars: ConfigVars = env;
  if (vars.RETENTION_MS !== undefined) {
    throw new Error(
      'configuration: RETENTION_MS was removed (a session keeps its ended streams until it ends, within MAX_SESSION_EVENTS and MAX_SESSION_BYTES); remove it from [vars]',
    );
  }
  // The dataset is a binding, not a var; with it, its index's key must be set (never an unkeyed index).
  readMetricsKey((env as { MCP_METRICS?: unknown }).MCP_METRICS !== undefined, vars.METRICS_KEY);
  const mode = oneOf('RESPONSE_MODE', vars.RESPONSE_MODE, ['sse', 'json']);
  // The SDK's default. An isolate is one of many on the platform; locally, one holds them all.
  const maxListenStreams = positiveInteger('MAX_LISTEN_STREAMS', vars.MAX_LISTEN_STREAMS, 1024);
  return {
    allowedHosts: parseHostAllowlist(vars.ALLOWED_HOSTS ?? DEFAULT_ALLOWED_HOSTS),
    allowedOrigins: parseOriginAllowlist(vars.ALLOWED_ORIGINS ?? DEFAULT_ALLOWED_ORIGINS),
    responseMode: mode,
    heartbeatMs: nonNegativeInteger('HEARTBEAT_MS', vars.HEARTBEAT_MS, 15_000),
    retryMs: nonNegativeInteger('RETRY_MS', vars.RETRY_MS, 1_000),
    connectionBufferBytes: positiveInteger('CONNECTION_BUFFER_BYTES', vars.CONNECTION_BUFFER_BYTES, 1024 * 1024),
    maxConnectionAgeMs: nonNegativeInteger('MAX_CONNECTION_AGE_MS', vars.MAX_CONNECTION_AGE_MS, 0),
    sessionTtlMs: positiveInteger('SESSION_TTL_MS', vars.SESSION_TTL_MS, 60 * 60_000),
    maxSessionEvents: positiveInteger('MAX_SESSION_EVENTS', vars.MAX_SESSION_EVENTS, 100_000),
    maxSessionBytes: positiveInteger('MAX_SESSION_BYTES', vars.MAX_SESSION_BYTES, 64 * 1024 * 1024),
    maxSessionRequests: atMost(
      'MAX_SESSION_REQUESTS',
      positiveInteger('MAX_SESSION_REQUESTS', vars.MAX_SESSION_REQUESTS, 100_000),
      MAX_SESSION_REQUESTS_LIMIT,
    ),
    maxRunningCalls: positiveInteger('MAX_RUNNING_CALLS', vars.MAX_RUNNING_CALLS, 100),
    maxBodyBytes: MAX_BODY_BYTES,
    // A console line costs about a millisecond per request under local workerd, where it is
    // piped through Miniflare; in production it feeds `wrangler tail` and Workers Logs.
    requestLog: oneOf('REQUEST_LOG', vars.REQUEST_LOG, ['on', 'off']) === 'on',
    taskTtlMs: positiveInteger('TASK_TTL_MS', vars.TASK_TTL_MS, 60 * 60_000),
    taskPollIntervalMs: positiveInteger('TASK_POLL_INTERVAL_MS', vars.TASK_POLL_INTERVAL_MS, 1_000),
    taskMaxEvents: positiveInteger('TASK_MAX_EVENTS', vars.TASK_MAX_EVENTS, 10_000),
    // An event is a tool's progress or log line, not a store for results (those stay in tasks/get).
    taskMaxEventBytes: atMost(
      'TASK_MAX_EVENT_BYTES',
      positiveInteger('TASK_MAX_EVENT_BYTES', vars.TASK_MAX_EVENT_BYTES, 64 * 1024),
      1024 * 1024,
    ),
    // Each publish is one request to every shard: the count trades publish cost for listeners per object.
    busShards: atMost('BUS_SHARDS', positiveInteger('BUS_SHARDS', vars.BUS_SHARDS, 1), MAX_BUS_SHARDS),
    maxListenStreams,
    maxListensPerPrincipal: listensPerPrincipal(vars.MAX_LISTENS_PER_PRINCIPAL, maxListenStreams),
    // As many as the sessions (MAX_SESSIONS_PER_PRINCIPAL) or calls of a session (MAX_RUNNING_CALLS)
    // one may have: each stream is a response the isolate holds, with up to a buffer of its own.
    maxStreamsPerPrincipal: nonNegativeInteger('MAX_STREAMS_PER_PRINCIPAL', vars.MAX_STREAMS_PER_PRINCIPAL, 100),
    maxSessionsPerPrincipal: nonNegativeInteger('MAX_SESSIONS_PER_PRINCIPAL', vars.MAX_SESSIONS_PER_PRINCIPAL, 100),
    maxTasksPerPrincipal: nonNegativeInteger('MAX_TASKS_PER_PRINCIPAL', vars.MAX_TASKS_PER_PRINCIPAL, 1_000),
    auth: readAuthConfig(vars),
    rateLimitIpv6Prefix: readIpv6Prefix(vars.RATE_LIMIT_IPV6_PREFIX),
    demoSignIn: demoSignIn(vars.DEMO_SIGN_IN),
    eventsHeartbeatMs: atMost(
      'EVENTS_HEARTBEAT_MS',
      positiveInteger('EVENTS_HEARTBEAT_MS', vars.EVENTS_HEARTBEAT_MS, 15_000),
      MAX_HEARTBEAT_MS,
    ),
    // Each is a response the isolate holds and a socket to its log's object, as a listen is.
    maxEventStreamsPerPrincipal: nonNegativeInteger('MAX_EVENT_STREAMS_PER_PRINCIPAL', vars.MAX_EVENT_STREAMS_PER_PRINCIPAL, 32),
  };
}
