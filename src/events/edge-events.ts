/**
 * MCP Events for one 2026-07-28 request at the edge: the host the events methods are served for
 * (event-methods.ts), built by the Worker from what it established — the principal, the
 * isolate's event stream slots, where a revocation can reach a stream — and read back by it
 * once the SDK has answered (modern-route.ts): an `events/stream` that opened leaves its stream
 * here, which the Worker holds in place of the SDK's placeholder answer.
 *
 * A stream's slot is taken before its log's object is asked anything (a refused stream costs the
 * object nothing) and given back when the stream ends, whoever ends it. A principal at its share
 * is answered ResourceExhausted (`{limit: "events/stream", max}`): another principal's streams
 * are decided apart. Where a revocation can reach it (a registry, and a bus: the same condition
 * as a listen's, stateless/endable-listen.ts), the stream holds a bus subscription under its
 * owner's tags, kept as an events stream's (the operator's view of the principal counts it
 * apart from listens: stateless/bus-object.ts); the revocation that closes it ends the stream
 * with `notifications/events/terminated` Forbidden — "If the user's access is revoked …, the
 * server terminates the subscription with the signal for its mode".
 *
 * A stream of an upstream-backed type is held the same way — the same slot, the same revocation —
 * but reads its author's upstream from the Worker (upstream-feed.ts) instead of a log's object.
 *
 * Where the Worker serves tasks, the host also holds the principal's task directory: a
 * subscription to a task event source reads the task's timeline (task-source.ts, `logOf`) instead
 * of a log object, and a `tools/call` that declared the extension gets the `eventSource` of the
 * task it creates (`taskEventSources`).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { McpServer, ServerEventBus } from '@modelcontextprotocol/server';
import type { Principal } from '../auth/principal.ts';
import type { TransportConfig } from '../config.ts';
import type { CursorKeys } from '../core/event-cursor.ts';
import type { JsonRpcId, McpHttpError } from '../core/errors.ts';
import type { EdgeWebhooks } from '../edge/edge-state.ts';
import { clientDeclaresEvents, eventsError, type EventsError, type TaskEventSource } from '../core/events-wire.ts';
import type { Scope } from '../core/scope.ts';
import type { Release } from '../core/slots.ts';
import { listenScope, listenTags } from '../stateless/event-bus.ts';
import { cursorKeys, type CursorKeySecrets } from './cursor-keys.ts';
import type { EventCatalog } from './event-catalog.ts';
import { eventLog, type EventLogNamespace, type EventLogStub } from './event-logs.ts';
import { serveEventMethods, type EventsHost } from './event-methods.ts';
import type { Subscription } from './event-subscription.ts';
import { openPushStream, type PushStream } from './push-stream.ts';
import { openUpstreamFeed } from './upstream-feed.ts';
import { taskEventSourceOf, taskEventType, taskTimelineLog } from './task-source.ts';
import type { TaskDirectory } from '../tasks/task-directory.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { readWebhookConfig } from './webhook-config.ts';
import type { HostLimiter } from './webhook-handshake.ts';
import { serveWebhookMethods, type WebhookHoldings, type WebhookHost } from './webhook-methods.ts';

/** What `poll` answers clients as `nextPollMs`: an event type's log is cheap to read, not free. */
export const NEXT_POLL_MS = 5_000;

/** Who may revoke a stream: the bus its subscription is held on, and the tags of its principal (and grant). */
export interface StreamRevocation {
  readonly bus: ServerEventBus;
  readonly principal: string;
  readonly grant: string;
}

export interface EdgeEventsOptions {
  readonly catalog: EventCatalog;
  readonly logs: EventLogNamespace;
  readonly principal: Principal;
  /** The principal's tasks, where the Worker serves them: their timelines are task event sources (task-source.ts). */
  readonly tasks: TaskDirectory | undefined;
  readonly env: CursorKeySecrets;
  readonly request: Request;
  readonly config: TransportConfig;
  /** One of the isolate's event stream slots for this request's holder, or undefined at its share. */
  readonly takeSlot: () => Release | undefined;
  readonly maxStreams: number;
  readonly revocation: StreamRevocation | undefined;
  /** Webhook subscriptions' objects, where the Worker has them: `events/subscribe` and `events/unsubscribe` are then served. */
  readonly webhooks: EdgeWebhooks | undefined;
  /** The principal's registry, where the Worker has one (webhook subscriptions are admitted by it). */
  readonly holdings: (WebhookHoldings & { readonly grant: string }) | undefined;
  /** The request credential's 401 for a token issued before its principal was revoked. */
  readonly recalled: () => McpHttpError;
  /** The Worker's rate-limit binding, where it has one. */
  readonly limiter: HostLimiter | undefined;
  /** The request's metrics (Metrics.off without MCP_METRICS): a subscribe's verification is counted. */
  readonly metrics: Metrics;
}

export class EdgeEvents implements EventsHost {
  readonly catalog: EventCatalog;
  readonly logs: EventLogNamespace;
  readonly principal: Principal;
  readonly nextPollMs = NEXT_POLL_MS;
  /** Set by an `events/stream` that opened: the Worker answers with it. */
  stream: PushStream | undefined;
  /** Set when the request is answered with a configuration error instead of the SDK's answer. */
  refusal: McpHttpError | undefined;
  /** What `events/subscribe` and `events/unsubscribe` need, where they are served (webhook-methods.ts). */
  readonly webhooks: WebhookHost | undefined;
  readonly #options: EdgeEventsOptions;

  constructor(options: EdgeEventsOptions) {
    this.catalog = options.catalog;
    this.logs = options.logs;
    this.principal = options.principal;
    this.#options = options;
    const { webhooks, holdings } = options;
    this.webhooks =
      webhooks === undefined
        ? undefined
        : {
            ...webhooks,
            // Checked when the environment was (edge-state.ts): read here, it parses.
            config: readWebhookConfig(options.env),
            origin: new URL(options.request.url).origin,
            holdings,
            grant: holdings?.grant ?? '',
            recalled: options.recalled,
            limiter: options.limiter,
            metrics: options.metrics,
          };
  }

  keys(): Promise<CursorKeys> {
    return cursorKeys(this.#options.env, this.#options.request.url);
  }

  refuse(error: McpHttpError): void {
    this.refusal = error;
  }

  logOf(subscription: Subscription): EventLogStub {
    if (subscription.type.name !== taskEventType.name) return eventLog(this.logs, subscription.log);
    const { tasks } = this.#options;
    // The catalog lists the task type only where the Worker serves tasks (edge-state.ts).
    if (tasks === undefined) throw new Error(`${taskEventType.name} is listed, but this Worker serves no tasks`);
    return taskTimelineLog(tasks, subscription.log.partition);
  }

  /**
   * For the `tools/call` `message`, what its CreateTaskResult's `eventSource` is made with, if
   * it gets one: only where tasks are served and the call declared the extension ("Servers MUST
   * NOT include eventSource in CreateTaskResult unless the server and client have declared the
   * Events capability"). Resolved before the task is created, so a configuration error (no
   * cursor key) answers the call and creates no task.
   */
  taskEventSources(message: unknown): (() => Promise<(taskId: string) => Promise<TaskEventSource>>) | undefined {
    const { method, params } = (typeof message === 'object' && message !== null ? message : {}) as { method?: unknown; params?: unknown };
    if (this.#options.tasks === undefined || method !== 'tools/call' || !clientDeclaresEvents(params)) return undefined;
    return async () => {
      const keys = await this.keys();
      return (taskId) => taskEventSourceOf(keys, taskId);
    };
  }

  async openStream(
    subscription: Subscription,
    maxAgeMs: number | undefined,
    id: JsonRpcId,
    keys: CursorKeys,
  ): Promise<EventsError | undefined> {
    const { config, request, takeSlot, maxStreams, revocation } = this.#options;
    const release = takeSlot();
    if (release === undefined) {
      return eventsError('ResourceExhausted', `at most ${maxStreams} event streams at once`, { limit: 'events/stream', max: maxStreams });
    }
    let unsubscribe: (() => void) | undefined;
    let ended = false;
    const held = {
      keys,
      subscriptionId: id,
      heartbeatMs: config.eventsHeartbeatMs,
      bufferBytes: config.connectionBufferBytes,
      maxConnectionAgeMs: config.maxConnectionAgeMs,
      signal: request.signal,
      onEnd: () => {
        ended = true;
        release();
        unsubscribe?.();
      },
    };
    const { upstream } = subscription;
    const opened = await (upstream !== undefined
      ? // An upstream-backed type: the Worker reads the author's upstream itself, no object involved.
        openUpstreamFeed({ ...held, subscription: { ...subscription, upstream }, maxAgeMs })
      : openPushStream({
          ...held,
          log: this.logOf(subscription),
          name: subscription.log,
          retention: subscription.type.retention,
          eventName: subscription.type.name,
          accepts: subscription.accepts,
          cursor: subscription.cursor,
          maxAgeMs,
        })
    ).catch((error: unknown) => {
      release();
      throw error;
    });
    if ('refusal' in opened) {
      release();
      return opened.refusal;
    }
    this.stream = opened;
    if (revocation !== undefined) {
      const tags = await listenTags(revocation.principal, revocation.grant);
      const revoked = () => opened.terminate(eventsError('Forbidden', 'access revoked', { reason: 'grant_revoked' }));
      // The subscription hears nothing this stream uses: its socket is there for a revocation to
      // close, kept as an events stream's, so the operator's view counts it apart from listens.
      const owner = { kind: 'events' as const, tags, revoked, unreachable: () => undefined };
      unsubscribe = listenScope.run(owner, () => revocation.bus.subscribe(() => undefined));
      // Ended while the tags were computed: nothing is left to revoke.
      if (ended) unsubscribe();
    }
    return undefined;
  }
}

/** The events host of the request being served, where the Worker serves event types. */
export const eventsScope: Scope<EdgeEvents> = new AsyncLocalStorage();

/** `decorate` for the edge's modern endpoint: within a request that has events, serve their methods. */
export function serveEventsInScope(server: McpServer): void {
  const scope = eventsScope.getStore();
  if (scope === undefined) return;
  serveEventMethods(server, scope);
  if (scope.webhooks !== undefined) serveWebhookMethods(server, scope, scope.webhooks);
}
