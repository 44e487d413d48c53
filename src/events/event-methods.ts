/**
 * `events/list`, `events/poll` and `events/stream` on an McpServer (SEP-3415), for a host that
 * has the event types and their logs: the edge (edge-events.ts). The SDK does the 2026-07-28
 * envelope (headers, `_meta`, `resultType`) as for any request; these handlers do the rest.
 *
 * The extension is advertised as the text says: "Servers that support events MUST advertise the
 * extension in `capabilities.extensions["io.modelcontextprotocol/events"]`", here with an empty
 * settings object: the types are fixed for the Worker's life, so no `listChanged` (event-catalog.ts).
 * A client need not declare the extension to be served ("A client MAY declare the same
 * identifier", *Capability Negotiation*); only task event sources ask it (tasks/).
 *
 * `events/stream` answers with a stream the host holds, not with a result: on success the
 * handler returns the SDK an empty result that the Worker drops, as it does for `tasks/stream`.
 *
 * Every type is served by the same code; what a subscription reads is the host's choice
 * (`logOf`): its type's log object, or a task's timeline for a task event source (task-source.ts).
 * An upstream-backed type (upstream-event-type.ts) has no log: its poll reads the author's
 * upstream (upstream-poll.ts), and a read that fails is answered UPSTREAM_ERROR, the SEP's
 * "UpstreamError" for "a single failed upstream fetch", never the upstream's own words.
 */
import { fromJsonSchema, type McpServer, ProtocolError, type ServerContext } from '@modelcontextprotocol/server';
import type { Principal } from '../auth/principal.ts';
import type { CursorKeys } from '../core/event-cursor.ts';
import {
  EVENTS_EXTENSION_ID,
  EventsMethod,
  type EventsError,
  isRefusal,
  parseListParams,
  parsePollParams,
  parseStreamParams,
  UPSTREAM_ERROR,
} from '../core/events-wire.ts';
import { McpHttpError, type JsonRpcId } from '../core/errors.ts';
import { MisconfiguredError } from '../core/misconfiguration.ts';
import type { EventCatalog } from './event-catalog.ts';
import type { EventLogStub } from './event-logs.ts';
import { pollEvents } from './event-poll.ts';
import { resolveSubscription, type Subscription } from './event-subscription.ts';
import { SubscriptionRefused } from './feed-attach.ts';
import { UpstreamReadError } from './upstream-event-type.ts';
import { pollUpstream } from './upstream-poll.ts';

/** What serving the events methods needs of its host. */
export interface EventsHost {
  readonly catalog: EventCatalog;
  readonly principal: Principal;
  /** What a poll's answer suggests as `nextPollMs`. */
  readonly nextPollMs: number;
  /**
   * What `subscription` reads: its type's log object, or, for a task event source, the task's
   * timeline (task-source.ts), whose reads may throw SubscriptionRefused (the task ended or unknown).
   */
  logOf(subscription: Subscription): EventLogStub;
  /** The cursor keys (cursor-keys.ts), or the configuration error that says why there are none. */
  keys(): Promise<CursorKeys>;
  /** Opens the push stream of `subscription` for request `id` and holds it; or the refusal (no stream opened). */
  openStream(subscription: Subscription, maxAgeMs: number | undefined, id: JsonRpcId, keys: CursorKeys): Promise<EventsError | undefined>;
  /** Answers the request with `error` (its own HTTP status) instead of the SDK's answer: a configuration error. */
  refuse(error: McpHttpError): void;
}

/** Params are parsed by events-wire.ts, which refuses what the SDK's schema would pass. */
export const ANY_PARAMS = fromJsonSchema<Record<string, unknown>>({ type: 'object' });

export function serveEventMethods(server: McpServer, host: EventsHost): void {
  server.server.registerCapabilities({ extensions: { [EVENTS_EXTENSION_ID]: {} } });
  server.server.setRequestHandler(EventsMethod.list, { params: ANY_PARAMS }, async (params) => {
    const parsed = parseListParams(params);
    if (isRefusal(parsed)) throw protocolError(parsed.invalid);
    const page = host.catalog.list(parsed.cursor);
    if (isRefusal(page)) throw protocolError(page.invalid);
    return page;
  });

  server.server.setRequestHandler(EventsMethod.poll, { params: ANY_PARAMS }, async (params, ctx) => {
    const parsed = parsePollParams(params);
    if (isRefusal(parsed)) throw protocolError(parsed.invalid);
    return answered(host, ctx, async (keys) => {
      const subscription = await resolveSubscription(host.catalog, parsed, 'poll', host.principal, keys);
      if ('error' in subscription) throw protocolError(subscription.error);
      const request = { maxEvents: parsed.maxEvents, maxAgeMs: parsed.maxAgeMs, nextPollMs: host.nextPollMs };
      const { upstream } = subscription;
      if (upstream !== undefined) {
        return pollUpstream({ ...subscription, upstream }, request, keys).catch(upstreamFailed);
      }
      const result = await pollEvents(host.logOf(subscription), subscription, request, keys).catch((error: unknown) => {
        // A task event source's end: "a JSON-RPC error response to the next events/poll request".
        if (error instanceof SubscriptionRefused) return { error: error.error };
        throw error;
      });
      if ('error' in result) throw protocolError(result.error);
      return result;
    });
  });

  server.server.setRequestHandler(EventsMethod.stream, { params: ANY_PARAMS }, async (params, ctx) => {
    const parsed = parseStreamParams(params);
    if (isRefusal(parsed)) throw protocolError(parsed.invalid);
    return answered(host, ctx, async (keys) => {
      const subscription = await resolveSubscription(host.catalog, parsed, 'push', host.principal, keys);
      if ('error' in subscription) throw protocolError(subscription.error);
      // "If the subscription is invalid …, the server responds immediately with a JSON-RPC error and no stream is opened."
      const refusal = await host.openStream(subscription, parsed.maxAgeMs, ctx.mcpReq.id, keys).catch(upstreamFailed);
      if (refusal !== undefined) throw protocolError(refusal);
      return {};
    });
  });
}

/** An upstream-backed type's read failed (its words are in the server's log): UPSTREAM_ERROR, a poll's error and a stream's refusal. */
function upstreamFailed(error: unknown): never {
  if (error instanceof UpstreamReadError) throw new ProtocolError(UPSTREAM_ERROR.code, UPSTREAM_ERROR.message, UPSTREAM_ERROR.data);
  throw error;
}

/** An events error as the SDK answers it: the one path every `events/*` refusal takes. */
export function protocolError(error: EventsError): ProtocolError {
  return new ProtocolError(error.code, error.message, error.data);
}

/** `work` with the cursor keys; a configuration error is the host's to answer (its own status), not a JSON-RPC error the SDK words. */
export async function answered(
  host: EventsHost,
  ctx: ServerContext,
  work: (keys: CursorKeys) => Promise<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  try {
    return await work(await host.keys());
  } catch (error) {
    if (!(error instanceof MisconfiguredError)) throw error;
    host.refuse(new McpHttpError(error.status, error.code, error.message, error.data, ctx.mcpReq.id));
    return {};
  }
}
