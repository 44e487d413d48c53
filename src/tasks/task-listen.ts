/**
 * `subscriptions/listen` with `notifications.taskIds`: "notifications/tasks" for the tasks a
 * client asked about. The SDK's listen router knows only the four list events (it drops
 * `taskIds` from its filter), so a listen that names task ids is served here, and only that:
 * the acknowledgement honours `taskIds` alone (a client wanting list changes too opens a
 * listen without them, which the SDK serves).
 *
 * Each task is watched over one hibernatable WebSocket to its own object, addressed by the
 * principal and the id like every task request, so another principal's task is never
 * watched. The object sends the task as it is when the watch begins (a change between the
 * acknowledgement and the watch is never lost) and again on every change; it closes the watch
 * when the task ends. When no watched task is left, the stream ends with the listen's result.
 */
import { classifyInboundRequest, type ServerEventBus } from '@modelcontextprotocol/server';
import { MODERN_PROTOCOL_VERSIONS } from '../core/era.ts';
import { encodeComment } from '../core/sse.ts';
import { capabilitiesDeclareTasks, isWellFormedTaskId, TASKS_REQUIRED } from '../core/task.ts';
import { HEADERS, JsonRpcCode, SSE_RESPONSE_HEADERS } from '../core/wire.ts';
import { McpHttpError } from '../core/errors.ts';
import type { Release } from '../core/slots.ts';
import type { TaskDirectory } from './task-directory.ts';

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
/** Task ids one listen may name: each is a socket held for the stream's life. */
export const MAX_WATCHED_TASKS = 64;
/**
 * Watches of one task renewed in a row after its object's instance went away, each before the
 * new instance told anything, before the task is given up (a watch that told the task resets
 * the count: each deploy may end an instance once).
 */
const MAX_REWATCHES = 3;

type ListenMessage = { id: string | number; params?: { notifications?: { taskIds?: unknown }; _meta?: Record<string, unknown> } };

/**
 * Whether this is a listen this module serves: one naming task ids that the SDK would accept
 * as a well-formed 2026-07-28 request (its own classifier; anything else is the SDK's to refuse).
 */
export function isTaskListen(message: unknown, headers: Headers): message is ListenMessage {
  const listen = message as (ListenMessage & { method?: unknown }) | undefined;
  if (listen?.method !== 'subscriptions/listen' || listen.params?.notifications?.taskIds === undefined) return false;
  const protocolVersionHeader = headers.get(HEADERS.protocolVersion) ?? undefined;
  const mcpMethodHeader = headers.get(HEADERS.method) ?? undefined;
  if (protocolVersionHeader === undefined || mcpMethodHeader === undefined) return false;
  const outcome = classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader, mcpMethodHeader, body: message });
  return (
    outcome.kind === 'modern' && (MODERN_PROTOCOL_VERSIONS as readonly (string | undefined)[]).includes(outcome.classification.revision)
  );
}

/**
 * `takeSlot`: one of the isolate's listen slots, or the refusal it throws (edge/stream-shares.ts):
 * a listen naming tasks counts with the SDK's, in its principal's share and the isolate's total.
 * `bus`: where a revocation can reach this listen (stateless/endable-listen.ts): served in its
 * owner's listen scope, the stream holds a subscription on it, which hears nothing it uses but
 * whose socket a revocation closes; the revocable wrapper then ends the stream.
 */
export async function serveTaskListen(
  message: ListenMessage,
  directory: TaskDirectory,
  takeSlot: () => Release,
  { signal, heartbeatMs, bus }: { readonly signal: AbortSignal; readonly heartbeatMs: number; readonly bus?: ServerEventBus },
): Promise<Response> {
  const { id, params } = message;
  // "Servers MUST return -32021 if a client requests taskIds without declaring the extension."
  if (!capabilitiesDeclareTasks(params?._meta?.['io.modelcontextprotocol/clientCapabilities'])) {
    throw new McpHttpError(
      400,
      JsonRpcCode.MissingRequiredClientCapability,
      'Missing required client capability: taskIds need the Tasks extension',
      TASKS_REQUIRED,
      id,
    );
  }
  const requested = params?.notifications?.taskIds;
  if (!Array.isArray(requested) || requested.length > MAX_WATCHED_TASKS || !requested.every((taskId) => typeof taskId === 'string')) {
    throw new McpHttpError(200, -32602, `Invalid params: taskIds must be at most ${MAX_WATCHED_TASKS} strings`, undefined, id);
  }
  // Before any watch is opened: a refused listen costs no task object a wake.
  const release = takeSlot();
  const ids = [...new Set(requested as string[])].filter(isWellFormedTaskId);
  const watches = await Promise.allSettled(ids.map(async (taskId) => [taskId, await directory.watch(taskId)] as const));
  const watched = watches.flatMap((watch) =>
    watch.status === 'fulfilled' && watch.value[1] !== undefined ? [watch.value as readonly [string, WebSocket]] : [],
  );
  const failed = watches.find((watch) => watch.status === 'rejected');
  // A watch failed, or the client left while they were opened (its signal will not fire again):
  // no stream will hold what was opened, so it is closed, and the slot given back.
  if (failed !== undefined || signal.aborted) {
    for (const [, socket] of watched) unwatch(socket);
    release();
    if (failed !== undefined) throw failed.reason;
    return new Response(null, { status: 204 }); // to nobody
  }
  const unsubscribe = bus?.subscribe(() => undefined);

  const encoder = new TextEncoder();
  const frame = (payload: unknown) => encoder.encode(`event: message\ndata: ${JSON.stringify(payload)}\n\n`);
  const meta = { [SUBSCRIPTION_ID]: id };
  const sockets = new Map(watched);
  let heartbeat: number | undefined;
  let closed = false;
  let stream: ReadableStreamDefaultController<Uint8Array>;
  /**
   * `complete`: every watched task has ended, and the stream ends with the listen's result.
   * `cut`: a task can no longer be watched, and the stream ends without it, as a broken
   * connection does, so that the client listens again rather than take the task for ended.
   * `gone`: the client left.
   */
  const stop = (how: 'complete' | 'cut' | 'gone') => {
    if (closed) return;
    closed = true;
    release();
    unsubscribe?.();
    if (heartbeat !== undefined) clearInterval(heartbeat);
    for (const socket of sockets.values()) socket.close(1000, 'listen ended');
    if (how === 'gone') return;
    if (how === 'complete') stream.enqueue(frame({ jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: meta } }));
    stream.close();
  };
  const done = (taskId: string) => {
    sockets.delete(taskId);
    if (sockets.size === 0) stop('complete');
  };
  /** Listeners first, then accept: nothing the object sends can arrive before someone hears it. */
  const follow = (taskId: string, socket: WebSocket, rewatches: number) => {
    sockets.set(taskId, socket);
    let told = false;
    socket.addEventListener('message', ({ data }) => {
      if (closed || typeof data !== 'string') return;
      told = true;
      const task = JSON.parse(data) as Record<string, unknown>;
      stream.enqueue(frame({ jsonrpc: '2.0', method: 'notifications/tasks', params: { ...task, _meta: meta } }));
    });
    socket.addEventListener('close', ({ code }) => {
      if (closed) return;
      // The object closes with 1000 once the task has ended (or was purged). Any other close is
      // its instance going away: watching again wakes a new one, which tells the task as it is
      // now (failed, task_interrupted, if it was running), then ends the watch properly.
      if (code === 1000) return done(taskId);
      const renewed = told ? 0 : rewatches;
      if (renewed >= MAX_REWATCHES) return stop('cut');
      directory.watch(taskId).then(
        (again) => {
          if (again !== undefined && closed) unwatch(again); // the listen ended meanwhile: the socket is not kept
          // No socket: no such task any more (purged), so it ended.
          return again === undefined || closed ? done(taskId) : follow(taskId, again, renewed + 1);
        },
        () => stop('cut'),
      );
    });
    socket.accept();
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      stream = controller;
      const honored = { taskIds: watched.map(([taskId]) => taskId) };
      controller.enqueue(
        frame({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: honored, _meta: meta } }),
      );
      if (watched.length === 0) return stop('complete');
      for (const [taskId, socket] of watched) follow(taskId, socket, 0);
      if (heartbeatMs > 0)
        heartbeat = setInterval(() => !closed && controller.enqueue(encoder.encode(encodeComment('keepalive'))), heartbeatMs);
    },
    cancel: () => stop('gone'),
  });
  signal.addEventListener('abort', () => stop('gone'), { once: true });
  return new Response(body, { headers: SSE_RESPONSE_HEADERS });
}

/** Ends a watch socket never handed to a stream (it is closed only once accepted). */
function unwatch(socket: WebSocket): void {
  socket.accept();
  socket.close(1000, 'listen ended');
}
