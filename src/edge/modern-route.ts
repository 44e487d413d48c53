/**
 * A 2026-07-28 request at the edge, once the Worker has established who is asking: the SDK's
 * handler serves it (stateless/modern-endpoint.ts), and this module adds what only the edge
 * knows. Where tasks are served, the body is parsed here (and handed to the SDK parsed),
 * because creating a task needs the call, and the request's own declaration decides whether
 * it may be one (where no tasks are served, a `tools/call` is parsed too: its declaration
 * decides whether runTask runs inline or is answered with the configuration error, run-task.ts);
 * a listen that names task ids is served here whole (tasks/task-listen.ts), and
 * a `tasks/stream` continues over the task object's relay. Listen streams over the Durable
 * Object bus are served so that an end the SDK cannot see — the bus lost, or, where a
 * revocation can reach them, the grant revoked — ends them out loud (stateless/endable-listen.ts).
 * A listen (of either kind) takes one of its principal's listen slots first, a `tasks/stream`
 * one of its stream slots (stream-shares.ts): the `Mcp-Method` header names them, and the SDK
 * serves no request whose body names another method.
 */
import type { AuthInfo, McpHttpHandler, ServerEventBus } from '@modelcontextprotocol/server';
import type { Principal } from '../auth/principal.ts';
import type { TransportConfig } from '../config.ts';
import { httpErrors, type McpHttpError } from '../core/errors.ts';
import { readBoundedText } from '../core/request-checks.ts';
import { HEADERS } from '../core/wire.ts';
import type { PrincipalHoldings } from '../principals/principal-holdings.ts';
import { requestScope } from '../stateless/event-bus.ts';
import { serveListenEndably } from '../stateless/endable-listen.ts';
import { EdgeTasks, UnservedTasks } from '../tasks/edge-tasks.ts';
import { taskScope } from '../tasks/run-task.ts';
import { TaskDirectory, type TaskNamespace } from '../tasks/task-directory.ts';
import { isTaskListen, serveTaskListen } from '../tasks/task-listen.ts';
import { EdgeEvents, eventsScope } from '../events/edge-events.ts';
import type { CursorKeySecrets } from '../events/cursor-keys.ts';
import { Metrics } from '../metrics/metrics.ts';
import type { EdgeState } from './edge-state.ts';
import { relayResponse } from './sse-relay.ts';
import { releasedAtEnd, requestIdOf, type StreamShares } from './stream-shares.ts';

/** What the Worker established about one modern request. */
export interface ModernRequest {
  readonly request: Request;
  readonly executionCtx: { waitUntil(promise: Promise<unknown>): void };
  readonly config: TransportConfig;
  readonly principal: Principal;
  readonly authInfo: AuthInfo | undefined;
  /** The principal's registry, where it has one (tasks are admitted by it). */
  readonly holdings: PrincipalHoldings | undefined;
  /** The event bus, where the Worker has one. */
  readonly bus: ServerEventBus | undefined;
  /** The isolate's listen and stream slots, and whose they are: the principal's id, or the anonymous one's client address. */
  readonly shares: StreamShares;
  readonly holder: string;
  /** Whether a revocation can end this request's listen stream: a registry, and a bus to reach it by. */
  readonly revocable: boolean;
  /** The event types served and their logs (MCP Events), where the Worker has them. */
  readonly events: EdgeState['events'];
  /** The environment: the event cursor keys are its secrets. */
  readonly env: CursorKeySecrets;
  /** The credential's 401 for a token issued before its principal was revoked (auth/authenticate.ts). */
  readonly revokedToken: (() => McpHttpError) | undefined;
  /** The Worker's rate-limit binding, where it has one. */
  readonly rateLimit: RateLimit | undefined;
}

/**
 * Where event types are served, the request runs with its events host in scope (events/edge-events.ts);
 * an `events/stream` that opened is answered with its stream, held here, instead of the SDK's placeholder.
 */
export async function serveModern(endpoint: McpHttpHandler, tasks: TaskNamespace | undefined, modern: ModernRequest): Promise<Response> {
  const { events, principal, request, config, shares, holder, holdings, bus, revocable, env, revokedToken, rateLimit } = modern;
  if (events === undefined) return serveModernRequest(endpoint, tasks, modern);
  const { taskTtlMs: ttlMs, taskPollIntervalMs: pollIntervalMs } = config;
  const scope = new EdgeEvents({
    ...events,
    principal,
    // Its tasks' timelines are task event sources (events/task-source.ts).
    tasks: tasks === undefined ? undefined : new TaskDirectory(tasks, principal, { ttlMs, pollIntervalMs }, holdings),
    env,
    request,
    config,
    takeSlot: () => shares.eventStream(holder),
    maxStreams: shares.eventStreamsPerPrincipal,
    revocation: revocable && bus !== undefined ? { bus, principal: principal.id, grant: holdings?.grant ?? '' } : undefined,
    holdings,
    recalled: revokedToken ?? (() => httpErrors.tokenRevoked('Bearer error="invalid_token"')),
    limiter: rateLimit,
    metrics: Metrics.of(env, (promise) => modern.executionCtx.waitUntil(promise)),
  });
  const response = await eventsScope.run(scope, () => serveModernRequest(endpoint, tasks, modern));
  if (scope.refusal === undefined && scope.stream === undefined) return response;
  await response.body?.cancel().catch(() => undefined);
  // A refusal is a configuration error, found before any stream opened.
  if (scope.refusal !== undefined) throw scope.refusal;
  return scope.stream!.response;
}

async function serveModernRequest(endpoint: McpHttpHandler, tasks: TaskNamespace | undefined, modern: ModernRequest): Promise<Response> {
  const { request, executionCtx, config, principal, authInfo, holdings, bus, shares, holder, revocable } = modern;
  // Over the Durable Object bus a listen's subscription can hear no more (the bus unreachable,
  // a revocation) while the SDK's stream stays open: such a listen is served endably.
  const endable = bus !== undefined;
  const method = request.headers.get(HEADERS.method);
  // A listen is always parsed: its refusal (of a slot) answers its id. So is a call where no
  // tasks are served: whether it declared the extension decides what runTask does (run-task.ts).
  const listening = method === 'subscriptions/listen';
  const calling = tasks === undefined && method === 'tools/call';
  const parsed = tasks !== undefined || listening || calling;
  if (!parsed) return requestScope.run(executionCtx, () => endpoint.fetch(request, authInfo && { authInfo }));
  const text = await readBoundedText(request, config.maxBodyBytes);
  const parsedBody = parseOrUndefined(text);
  const sdk = () =>
    parsedBody === undefined
      ? endpoint.fetch(new Request(request, { body: text }), authInfo && { authInfo })
      : endpoint.fetch(request, { parsedBody, ...(authInfo && { authInfo }) });
  // Its principal's, and its token's grant's (AUTH=oauth): revoking that grant ends it, and no other grant's.
  const revocableBy = revocable ? { principal: principal.id, grant: holdings?.grant ?? '' } : undefined;
  const id = requestIdOf(parsedBody);
  const held = (serve: () => Promise<Response>) => heldListen(shares.listen(holder, id), serve, request.signal);
  if (calling) return servedWithoutTasks(new UnservedTasks(parsedBody), () => requestScope.run(executionCtx, sdk));
  if (tasks === undefined) {
    const serve = () => requestScope.run(executionCtx, sdk);
    return held(endable ? () => serveListenEndably(parsedBody, revocableBy, serve) : serve);
  }

  const { taskTtlMs, taskPollIntervalMs, heartbeatMs } = config;
  const directory = new TaskDirectory(tasks, principal, { ttlMs: taskTtlMs, pollIntervalMs: taskPollIntervalMs }, holdings);
  if (isTaskListen(parsedBody, request.headers)) {
    // Revocable as any listen is: its stream also holds a bus socket under its owner's tag,
    // which a revocation closes (then it ends with grant_revoked, as the SDK's listens do).
    // Not revocable, it needs no bus: it watches its tasks' objects only.
    const revocation = revocable && bus !== undefined ? { bus } : {};
    const takeSlot = () => shares.listen(holder, id);
    const listen = () => serveTaskListen(parsedBody, directory, takeSlot, { signal: request.signal, heartbeatMs, ...revocation });
    return revocable ? serveListenEndably(parsedBody, revocableBy, listen) : listen();
  }
  // Where event types are served, a task created for a call that declared them names its event source.
  const scope = new EdgeTasks(directory, parsedBody, request.headers, eventsScope.getStore()?.taskEventSources(parsedBody));
  const sdkServe = () => requestScope.run(executionCtx, () => taskScope.run(scope, sdk));
  const serve = endable ? () => serveListenEndably(parsedBody, revocableBy, sdkServe) : sdkServe;
  if (listening) return held(serve);
  // A stream the Worker will hold takes its slot before the task's object opens it.
  const release = method === 'tasks/stream' ? shares.stream(holder, id) : undefined;
  let response: Response;
  try {
    response = await serve();
  } catch (error) {
    release?.();
    throw error;
  }
  if (scope.refusal === undefined && scope.stream === undefined) {
    release?.();
    return response;
  }
  // The SDK's placeholder answer is dropped: the tool was refused before any of its work ran,
  // or a tasks/stream is answered by the task's object, whose response this Worker holds.
  // A placeholder whose cancel fails changes nothing, and must not keep the stream slot taken above.
  await response.body?.cancel().catch(() => undefined);
  if (scope.refusal !== undefined) {
    release?.();
    throw scope.refusal;
  }
  const { taskId, first } = scope.stream!;
  return relayResponse(first, (token) => directory.relay(taskId, token), {
    heartbeatMs,
    maxAgeMs: config.maxConnectionAgeMs,
    bufferBytes: config.connectionBufferBytes,
    clientSignal: request.signal,
    release,
  });
}

/** A call served where no tasks are: the configuration error replaces the SDK's answer where runTask was refused. */
async function servedWithoutTasks(scope: UnservedTasks, serve: () => Promise<Response>): Promise<Response> {
  const response = await taskScope.run(scope, serve);
  if (scope.refusal === undefined) return response;
  await response.body?.cancel().catch(() => undefined);
  throw scope.refusal;
}

/** A listen served holding `release`'s slot: given back when its stream ends, or at once if it was not one. */
async function heldListen(release: () => void, serve: () => Promise<Response>, signal: AbortSignal): Promise<Response> {
  let response: Response;
  try {
    response = await serve();
  } catch (error) {
    release();
    throw error;
  }
  return releasedAtEnd(response, release, signal);
}

/** A body as JSON, or undefined where it is not (the SDK answers it from the text). */
function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
