/**
 * What createMcpWorker is given (edge/worker.ts). Each accessor names a binding the Worker needs:
 * given, its binding must be bound and of its kind, or every request is answered with the
 * configuration error that names it (edge-state.ts, docs/operations.md "Misconfiguration").
 * What is optional is chosen here: a feature left out is an accessor not given (and its binding
 * and class removed), never a binding that happens to be missing. The one binding read by name
 * and optional by its absence is the metrics dataset, `MCP_METRICS` (metrics/metrics.ts).
 */
import type { OAuthOptions } from '../auth/oauth-server.ts';
import type { EventLogNamespace } from '../events/event-logs.ts';
import type { EventType } from '../events/event-type.ts';
import type { WebhookNamespace } from '../events/webhook-subscriptions.ts';
import type { PrincipalRegistryNamespace } from '../principals/principal-registry.ts';
import type { ModernServerFactory } from '../stateless/modern-endpoint.ts';
import type { TaskNamespace } from '../tasks/task-directory.ts';
import type { SessionNamespace } from './session-route.ts';

export interface McpWorkerOptions<E> {
  /** The Durable Object namespace whose class extends McpSessionObject (declared with SQLite storage). */
  readonly sessions: (env: E) => SessionNamespace;
  /** The endpoint path. Default `/mcp`. */
  readonly path?: string;
  /**
   * Builds the McpServer for a 2026-07-28 (stateless) request: the SDK's `createMcpHandler`
   * calls it once per request. Register the same tools as the session object's `createServer`.
   * Without it, modern requests are told `-32022` with the sessionful revisions as
   * `supported`, and clients fall back to a session.
   */
  readonly modern?: ModernServerFactory;
  /**
   * The namespace of the `McpEventBus` object, which carries `subscriptions/listen` events
   * between isolates. Without it, a change reaches only listeners on the isolate that made it.
   */
  readonly bus?: (env: E) => SessionNamespace;
  /**
   * The namespace of the class extending `McpTaskObject`: serves the Tasks extension to
   * 2026-07-28 clients that declare it (a tool opts in with `runTask`). Without it, no call is
   * a task: a tool that calls `runTask` runs inline for a client that did not declare the
   * extension, and a client that declared it (or a tool that runs only as a task) is answered
   * with the configuration error that names this option (tasks/run-task.ts).
   */
  readonly tasks?: (env: E) => TaskNamespace;
  /**
   * MCP Events (SEP-3415, docs/events.md): the event types served to 2026-07-28 clients
   * (`events/list`, `events/poll`, `events/stream`), and the namespace of the `McpEventLog`
   * class their logs are kept in (`env.MCP_EVENTS`). Cursors are sealed with the
   * `EVENTS_CURSOR_KEY` secret. Without it, no `events/*` method is served.
   *
   * `webhooks`: the namespace of the class extending `McpWebhookSubscription` (`env.MCP_WEBHOOKS`,
   * declared with SQLite), one object per webhook subscription: serves `events/subscribe` and
   * `events/unsubscribe` (the WEBHOOK_* variables, events/webhook-config.ts). Without it, those
   * two are not served (`-32601`) and no type may list `webhook` in its `delivery`.
   */
  readonly events?: {
    readonly types: readonly EventType[];
    readonly logs: (env: E) => EventLogNamespace;
    /** The namespace of the webhook subscriptions' objects (`env.MCP_WEBHOOKS`): `events/subscribe` (issue 47). */
    readonly webhooks?: (env: E) => WebhookNamespace;
  };
  /**
   * AUTH=oauth: your own sign-in and consent page; when absent, the one `SIGN_IN` names (an
   * OpenID Connect issuer, Cloudflare Access, GitHub, or the demo's, which authenticates nobody
   * and so serves on loopback only unless `DEMO_SIGN_IN = "anyone-is-anyone"`): auth/oauth-server.ts.
   * Its clients and grants are kept in the KV namespace bound as `OAUTH_KV`, which AUTH=oauth needs.
   */
  readonly oauth?: OAuthOptions<E>;
  /**
   * A Workers Rate Limiting binding (period 60 s): each principal's requests count against it
   * (the anonymous principal's, per client address); beyond it, `429` with `Retry-After: 60`.
   * Without it, no rate limit.
   */
  readonly rateLimit?: (env: E) => RateLimit;
  /**
   * The namespace of `McpPrincipalRegistry`: one object per authenticated principal, which
   * bounds its live sessions and unexpired tasks (MAX_SESSIONS_PER_PRINCIPAL,
   * MAX_TASKS_PER_PRINCIPAL), and which the operator's routes (`ADMIN_TOKEN`) and a revoked
   * grant walk to end what it holds. Without it: no bounds per principal, no revocation.
   */
  readonly principals?: (env: E) => PrincipalRegistryNamespace;
}
